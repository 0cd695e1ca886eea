"""Publish a review on a Differential revision, as visibly as the server allows.

Stock Conduit cannot publish inline drafts: ``differential.createinline`` saves a draft only
its author sees, and nothing stock publishes it. So Nova:

1. in a Harbormaster build (``--harbormaster-target``) sends the findings as lint messages
   with ``harbormaster.sendmessage``. Differential renders them as boxes under their lines
   for every reader (for Herald-started builds). The build gets ``work`` at the start and
   ``pass``/``fail`` at the end;
2. when the server has our extension (``differential.publishinlines``, see
   ``ci/phabricator/extension``), posts real inline comments: ``createinline``, then
   ``publishinlines`` with the summary as the comment;
3. always: one summary comment (``differential.revision.edit``) lists every finding as
   file:line with a link. Findings are never left only in invisible drafts.

Re-runs post nothing new: the summary carries the diff ID and the findings' fingerprints
(from file, line text, origin and rule, never the model's words), and Nova reads its own
earlier comments with ``transaction.search``. A diff already reviewed is skipped unless
``--force``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from bot.config import Settings
from bot.errors import ServiceError, redact
from bot.hosts.phabricator.conduit import ConduitError
from bot.models import (
    Change,
    Placement,
    PriorReview,
    PublishReport,
    ReviewResult,
    exit_code_for,
    parse_verdict,
    verdict_marker,
)
from bot.publishers.fingerprint import fingerprint, line_ids
from bot.publishers.local import summary_text
from bot.publishers.untrusted import clean_suggestion, clean_text

if TYPE_CHECKING:
    from bot.hosts.phabricator.session import PhabricatorSession

__all__ = ["EXTENSION_METHOD", "PhabricatorPublisher"]

EXTENSION_METHOD = "differential.publishinlines"
_FP_MARK = re.compile(r"nova:fp:([0-9a-f,]*)")
_VERDICT_MARK = re.compile(r"nova:diff:(\d+) nova:verdict:([a-z0-9=,]+)")
_LINT_SEVERITY = {"error": "error", "warning": "warning", "info": "advice"}


class PhabricatorPublisher:
    def __init__(self, session: PhabricatorSession, *, force: bool = False) -> None:
        self.session = session
        self.force = force
        self.target = session.settings.harbormaster_target
        self.mode = "summary"

    @property
    def settings(self) -> Settings:  # the session's: .nova.toml of the base may change it
        return self.session.settings

    @property
    def conduit(self):  # -> ConduitClient
        return self.session.conduit

    # -- optional capabilities the pipeline checks -----------------------------------
    def begin(self, change: Change) -> None:
        if self.target:
            self._send("work")

    def finish(self, passed: bool, detail: str) -> None:
        if self.target:
            self._send("pass" if passed else "fail",
                       unit=[{"name": "nova review", "result": "pass" if passed else "fail",
                              "details": clean_text(detail)}])

    def abort(self, reason: str) -> None:
        if self.target:
            self._send("fail", unit=[{"name": "nova review", "result": "broken",
                                      "details": redact(reason)}])

    def prior_review(self, change: Change) -> PriorReview | None:
        """Nova's own summary of this diff (only its user's comments count)."""
        if self.force or self.session.diff_id is None:
            return None
        for text in reversed(self._own_comments(change)):
            for diff_id, verdict in _VERDICT_MARK.findall(text):
                if int(diff_id) == self.session.diff_id:
                    prior = parse_verdict(change.head_ref or diff_id, verdict)
                    return prior if prior is not None and not prior.errors else None
        return None

    # -- publishing --------------------------------------------------------------------
    def publish(self, result: ReviewResult) -> PublishReport:
        change = result.change
        previous = self._own_comments(change)
        known = {fp for text in previous for m in _FP_MARK.findall(text)
                 for fp in m.split(",") if fp}
        ids = line_ids(change)
        placed = [(fingerprint(p, *ids.get((p.path, p.line), ("", 0))), p)
                  for p in result.placed]
        unplaced = [(fingerprint(p, f"unplaced:{p.comment.line}"), p) for p in result.unplaced]
        try:
            report = self._post(result, previous, known, placed, unplaced)
        except ServiceError as exc:
            report = PublishReport("phabricator", errors=(str(exc),))
        if self.target:  # the build status goes once, at the end, and says if posting failed
            self._report_build(result, report.errors)
        return report

    def _post(self, result: ReviewResult, previous: list[str], known: set[str],
              placed: list[tuple[str, Placement]], unplaced: list[tuple[str, Placement]]
              ) -> PublishReport:
        change = result.change
        new_placed = [(fp, p) for fp, p in placed if fp not in known]
        new_unplaced = [(fp, p) for fp, p in unplaced if fp not in known]
        first_time = not any(f"nova:diff:{self.session.diff_id}" in t for t in previous)
        if not (new_placed or new_unplaced or first_time):
            return PublishReport("phabricator")  # a re-run with nothing new: post nothing
        use_inlines = bool(new_placed) and EXTENSION_METHOD in self.conduit.methods()
        self.mode = "inline" if use_inlines else ("lint" if self.target else "summary")
        body = self._summary(result, new_placed, new_unplaced,
                             [fp for fp, _ in placed + unplaced])
        if use_inlines:
            for fp, p in new_placed:
                self._create_inline(change, p, fp)
            self.conduit.call(EXTENSION_METHOD, write=True,
                              revisionID=self._revision_id(change), comment=body)
        else:
            self.conduit.call("differential.revision.edit", write=True,
                              objectIdentifier=change.id,
                              transactions=[{"type": "comment", "value": body}])
        return PublishReport("phabricator", inline_posted=len(new_placed) if use_inlines else 0,
                             summary_posted=True)

    def _revision_id(self, change: Any) -> int:
        return int(change.id.lstrip("D"))

    def _own_comments(self, change: Any) -> list[str]:
        """Raw text of the comments Nova's user posted on the revision."""
        me = self.session.whoami()
        texts: list[str] = []
        after = None
        for _page in range(20):
            params: dict[str, Any] = {"objectIdentifier": change.id, "limit": 100}
            if after:
                params["after"] = after
            page = self.conduit.call("transaction.search", **params) or {}
            for tx in page.get("data") or []:
                if tx.get("authorPHID") != me:
                    continue
                for comment in tx.get("comments") or []:
                    texts.append(((comment.get("content") or {}).get("raw")) or "")
            after = (page.get("cursor") or {}).get("after")
            if not after:
                break
        return texts

    def _create_inline(self, change: Any, p: Placement, fp: str) -> None:
        content = clean_text(p.comment.body)
        suggestion = clean_suggestion(p.suggestion)
        if suggestion is not None:
            content += f"\n\nSuggested:\n```\n{suggestion}\n```"
        self.conduit.call(
            "differential.createinline", write=True,
            revisionID=self._revision_id(change), diffID=self.session.diff_id,
            filePath=p.path, isNewFile=True, lineNumber=p.line,
            lineLength=(p.end_line - p.line) if p.end_line and p.line else 0,
            content=f"{content}\n\n//nova:fp:{fp}//")

    def _summary(self, result: ReviewResult, placed: list[tuple[str, Placement]],
                 unplaced: list[tuple[str, Placement]], all_fps: list[str]) -> str:
        change = result.change
        link = f"{change.url}?id={self.session.diff_id}" if change.url else None
        out = [f"= Nova review of diff {self.session.diff_id} ="]
        text = summary_text(result)
        if text:
            out += ["", clean_text(text)]
        where = {"inline": "inline comments", "lint": "lint messages on the build",
                 "summary": "this list"}[self.mode]
        if placed:
            out += ["", f"**Findings** ({len(placed)}, also as {where}):"]
            for _fp, p in placed:
                loc = f"{p.path}:{p.line}"
                loc = f"[[ {link} | {loc} ]]" if link else f"`{loc}`"
                out.append(f"- {loc} ({p.comment.severity}) {clean_text(p.comment.body)}")
        if unplaced:
            out += ["", "**Not placed on a line**:"]
            for _fp, p in unplaced:
                out.append(f"- `{clean_text(p.path or p.comment.path)}:"
                           f"{p.comment.line or '?'}` ({p.comment.severity}) "
                           f"{clean_text(p.comment.body)} //({clean_text(p.reason or '')})//")
        if not placed and not unplaced:
            out += ["", "No new findings."]
        out += ["", f"//nova:diff:{self.session.diff_id} nova:verdict:{verdict_marker(result)} "
                    f"nova:fp:{','.join(all_fps)}//"]
        return "\n".join(out)

    # -- Harbormaster ------------------------------------------------------------------
    def _report_build(self, result: ReviewResult, errors: tuple[str, ...] = ()) -> None:
        failed = bool(errors) or exit_code_for(result, self.settings.fail_on) != 0
        lint = [{"name": clean_text(p.comment.body.splitlines()[0][:120] if p.comment.body
                                    else "Nova finding"),
                 "code": p.comment.rule or f"NOVA-{p.comment.severity.upper()}",
                 "severity": _LINT_SEVERITY[p.comment.severity], "path": p.path,
                 "line": p.line, "description": clean_text(p.comment.body)}
                for p in result.placed]
        verdict = "broken" if errors else "fail" if failed else "pass"
        unit = [{"name": "nova review", "result": verdict,
                 "details": f"{len(result.placed)} findings on lines, "
                            f"{len(result.unplaced)} in the summary, "
                            f"{len(result.errors) + len(errors)} errors"}]
        self._send("fail" if failed else "pass", lint=lint, unit=unit)

    def _send(self, kind: str, **extra: Any) -> None:
        """``harbormaster.sendmessage``; old servers know only ``buildTargetPHID``."""
        try:
            self.conduit.call("harbormaster.sendmessage", write=True, receiver=self.target,
                              type=kind, **extra)
        except ConduitError as exc:
            if "buildTargetPHID" not in exc.info:
                raise
            self.conduit.call("harbormaster.sendmessage", write=True,
                              buildTargetPHID=self.target, type=kind, **extra)
