"""Harbormaster: one message per build target, at the end, with the lint it lacks.

A target's lint rows are appended, never replaced (sending the same lint twice shows every
row twice), and a message to a target that already passed or failed changes nothing but
those rows. So Nova reads the target first (``harbormaster.target.search``): when it is
complete, Nova sends nothing again; otherwise it sends ONE message — lint, a unit result and
``pass``/``fail`` together (Harbormaster stores them in one database transaction). The
verdict agrees with Nova's exit code: ``fail`` when a finding reaches ``--fail-on`` or when
anything failed to publish. ``abort`` (Nova died) sends ``fail`` only when no verdict was
sent before, so a crash after ``pass`` cannot leave a passed build with a broken unit.

Limit: a message stays unprocessed until the daemons run; a re-run on the same target in
that window cannot see it and sends its lint again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.errors import ServiceError, redact
from bot.hosts.phabricator.conduit import ConduitClient, ConduitError
from bot.report.untrusted import clean_text
from bot.review.result import ReviewResult, exit_code_for

__all__ = ["BuildReporter"]

_LINT_SEVERITY = {"error": "error", "warning": "warning", "info": "advice"}
_COMPLETE = {"target/passed", "target/failed", "target/aborted"}


class BuildReporter:
    def __init__(self, conduit: ConduitClient, target: str, fail_on: str) -> None:
        self.conduit = conduit
        self.target = target
        self.fail_on = fail_on
        self.sent = False

    def status(self) -> str | None:
        """The target's status (``target/waiting`` …), None when the server cannot say."""
        try:
            page = (
                self.conduit.call(
                    "harbormaster.target.search", constraints={"phids": [self.target]}
                )
                or {}
            )
        except ConduitError:
            return None  # an old server without the method
        data = page.get("data") or []
        return ((data[0].get("fields") or {}).get("status") or {}).get("value") if data else None

    def finish(
        self, result: ReviewResult, failures: list[str], notes: Sequence[str] = ()
    ) -> str | None:
        """Send the verdict and the lint once; returns a note when nothing was sent.
        ``notes`` (e.g. why there is no summary comment) go into the unit's details."""
        if self.sent:
            return None
        status = self.status()
        if status in _COMPLETE:
            self.sent = True
            return (
                f"the build target already has a result ({status}): no lint or verdict "
                "was sent again"
            )
        failed = bool(failures) or exit_code_for(result, self.fail_on) != 0
        lint = [
            {
                "name": clean_text(
                    p.comment.body.splitlines()[0][:120] if p.comment.body else "Nova finding"
                ),
                "code": p.comment.rule or f"NOVA-{p.comment.severity.upper()}",
                "severity": _LINT_SEVERITY[p.comment.severity],
                "path": p.path,
                "line": p.line,
                "description": clean_text(p.comment.body),
            }
            for p in result.placed
        ]
        details = (
            f"{len(result.placed)} findings on lines, {len(result.unplaced)} in the "
            f"summary, {len(result.errors)} errors"
        )
        if failures or notes:
            details += "; " + "; ".join(redact(f) for f in [*failures, *notes])
        unit = [
            {
                "name": "nova review",
                "result": "broken" if failures else ("fail" if failed else "pass"),
                "details": details,
            }
        ]
        self._send("fail" if failed else "pass", lint=lint, unit=unit)
        return None

    def verdict(self, passed: bool, detail: str) -> None:
        """Only a verdict (a skipped re-run: its lint was sent by the first review)."""
        if self.sent or self.status() in _COMPLETE:
            self.sent = True
            return
        self._send(
            "pass" if passed else "fail",
            unit=[
                {
                    "name": "nova review",
                    "result": "pass" if passed else "fail",
                    "details": clean_text(detail),
                }
            ],
        )

    def abort(self, reason: str) -> None:
        """Nova died before its verdict: ``fail``, unless a verdict was already sent."""
        if self.sent:
            return
        try:
            if self.status() in _COMPLETE:
                self.sent = True
                return
        except ServiceError:
            pass  # still try to tell the build
        self._send(
            "fail", unit=[{"name": "nova review", "result": "broken", "details": redact(reason)}]
        )

    def _send(self, kind: str, **extra: Any) -> None:
        """``harbormaster.sendmessage``; old servers know only ``buildTargetPHID``."""
        self.sent = True  # even if the call fails: it may have landed, never send twice
        try:
            self.conduit.call(
                "harbormaster.sendmessage", write=True, receiver=self.target, type=kind, **extra
            )
        except ConduitError as exc:
            if "buildTargetPHID" not in exc.info:
                raise
            self.conduit.call(
                "harbormaster.sendmessage",
                write=True,
                buildTargetPHID=self.target,
                type=kind,
                **extra,
            )
