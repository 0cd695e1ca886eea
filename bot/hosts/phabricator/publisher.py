"""Publish a review on a Differential revision, as visibly as the server allows.

Stock Conduit cannot publish inline comments: ``differential.createinline`` saves a draft
only its author sees, and nothing stock publishes it. So Nova never calls it. In order:

1. **inline comments + summary, in one call**, when the server has Nova's extension
   (``nova.differential.publish``, contract version 2, ``ci/phabricator/extension``): the
   extension creates the inlines and publishes them with the summary in one database
   transaction, so a failure leaves nothing behind; it also discards Nova's own stale
   drafts (left by older Nova versions). If that call fails, Nova says so and goes on:
2. **the summary comment** (``differential.revision.edit``) lists every finding as
   ``file:line`` linking to its line, plus what failed. It is always attempted;
3. **Harbormaster** (``--harbormaster-target``): one message at the end, with the lint the
   target lacks and a verdict that agrees with Nova's exit code (``build.py``).

Re-runs post nothing new: the summary carries the diff ID and the findings' fingerprints
(from file, line text, origin and rule, never the model's words), and Nova reads its own
earlier comments with ``transaction.search``. A diff already reviewed is skipped unless
``--force``. A failure to post inlines is added to the run's errors (exit 3) after the
summary has landed; a failure to post the summary is raised after the build got its verdict.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, Any

from bot.change import Change, Placement
from bot.config import Settings
from bot.errors import NovaError, ServiceError
from bot.hosts.phabricator.build import BuildReporter
from bot.hosts.phabricator.conduit import ConduitClient, ConduitError
from bot.hosts.phabricator.summary import FP_MARK, VERDICT_MARK, Summary
from bot.report.fingerprint import fingerprint, line_ids
from bot.report.untrusted import clean_suggestion, clean_text
from bot.review.result import PriorReview, PublishReport, ReviewResult, parse_verdict

if TYPE_CHECKING:
    from bot.hosts.phabricator.session import PhabricatorSession

__all__ = ["EXTENSION_METHOD", "PhabricatorPublisher"]

EXTENSION_METHOD = "nova.differential.publish"


class PhabricatorPublisher:
    def __init__(self, session: PhabricatorSession, *, force: bool = False) -> None:
        self.session = session
        self.force = force
        self.target = session.phabricator.harbormaster_target
        self.mode = "summary"
        self._build: BuildReporter | None = None

    @property
    def settings(self) -> Settings:  # the session's: .nova.toml of the base may change it
        return self.session.settings

    @property
    def conduit(self) -> ConduitClient:
        return self.session.conduit

    @property
    def build(self) -> BuildReporter | None:
        if self.target and self._build is None:
            self._build = BuildReporter(self.conduit, self.target, self.settings.review.fail_on)
        return self._build

    # -- optional capabilities the pipeline checks (BuildStatus, RerunGuard) ----------
    def begin(self, change: Change) -> None:
        """Nothing: the build gets one message, at the end (see ``build.py``)."""

    def finish(self, passed: bool, detail: str) -> None:
        """A skipped re-run: the waiting target still gets the first review's verdict."""
        if self.build is not None:
            self.build.verdict(passed, detail)

    def abort(self, reason: str) -> None:
        if self.build is not None:
            self.build.abort(reason)

    def prior_review(self, change: Change) -> PriorReview | None:
        """Nova's own summary of this diff (only its user's comments count)."""
        if self.force or self.session.diff_id is None:
            return None
        for text in reversed(self._own_comments(change)):
            for diff_id, verdict in VERDICT_MARK.findall(text):
                if int(diff_id) == self.session.diff_id:
                    prior = parse_verdict(change.head_ref or diff_id, verdict)
                    return prior if prior is not None and not prior.errors else None
        return None

    # -- publishing --------------------------------------------------------------------
    def publish(self, result: ReviewResult) -> PublishReport:
        change = result.change
        previous = self._own_comments(change)
        known = {
            fp for text in previous for m in FP_MARK.findall(text) for fp in m.split(",") if fp
        }
        ids = line_ids(change)
        placed = [(fingerprint(p, *ids.get((p.path, p.line), ("", 0))), p) for p in result.placed]
        unplaced = [(fingerprint(p, f"unplaced:{p.comment.line}"), p) for p in result.unplaced]
        summary = Summary(
            result,
            self.session.diff_id,
            self.session.changesets,
            mode="lint" if self.target else "summary",
            placed=[(fp, p) for fp, p in placed if fp not in known],
            unplaced=[(fp, p) for fp, p in unplaced if fp not in known],
            all_fps=[fp for fp, _ in placed + unplaced],
        )
        first_time = not any(f"nova:diff:{self.session.diff_id}" in t for t in previous)
        failures: list[str] = []
        posted = False
        if summary.placed or summary.unplaced or first_time:
            try:
                posted = self._post(change, summary, failures)
            except NovaError as exc:
                failures.append(f"the summary comment could not be posted: {exc}")
                with suppress(NovaError):  # the summary's failure is the one to report
                    self._finish_build(result, failures)
                raise
        notes = self._finish_build(result, failures)
        return PublishReport(
            "phabricator",
            inline_posted=len(summary.placed) if posted else 0,
            summary_posted=True,
            notes=notes,
            errors=tuple(f"Phabricator: {f}" for f in failures),
        )

    def _finish_build(self, result: ReviewResult, failures: list[str]) -> tuple[str, ...]:
        if self.build is not None:
            note = self.build.finish(result, failures)
            if note:
                return (note,)
        return ()

    def _post(self, change: Any, summary: Summary, failures: list[str]) -> bool:
        """Inlines and summary in one call when possible; else (or on failure) the summary.
        True when the inline comments were posted."""
        if summary.placed and EXTENSION_METHOD in self.conduit.methods():
            summary.mode = self.mode = "inline"
            try:
                self.conduit.call(
                    EXTENSION_METHOD,
                    write=True,
                    revisionID=self._revision_id(change),
                    diffID=self.session.diff_id,
                    comment=summary.text(),
                    discardDrafts=True,
                    inlines=[self._inline(p, fp) for fp, p in summary.placed],
                )
                return True
            except ConduitError as exc:  # the server answered: nothing was written
                failures.append(
                    f"inline comments were not posted ({exc}); the findings are listed here instead"
                )
            except ServiceError as exc:  # no answer: it may have landed
                if self._landed(change, summary):
                    return True
                failures.append(
                    f"inline comments were not posted ({exc}); the findings are listed here instead"
                )
            summary.mode = "lint" if self.target else "summary"
        self.mode = summary.mode
        summary.failures = failures
        self.conduit.call(
            "differential.revision.edit",
            write=True,
            objectIdentifier=change.id,
            transactions=[{"type": "comment", "value": summary.text()}],
        )
        return False

    def _landed(self, change: Any, summary: Summary) -> bool:
        marker = f"nova:fp:{','.join(summary.all_fps)}"
        return any(marker in text for text in self._own_comments(change))

    def _revision_id(self, change: Any) -> int:
        return int(change.id.lstrip("D"))

    def _own_comments(self, change: Any) -> list[str]:
        """Raw text of the comments (summaries and inlines) Nova's user published."""
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

    @staticmethod
    def _inline(p: Placement, fp: str) -> dict[str, Any]:
        """One inline of the extension's contract: path, line, length, content."""
        content = clean_text(p.comment.body)
        suggestion = clean_suggestion(p.suggestion)
        if suggestion is not None:
            content += f"\n\nSuggested:\n```\n{suggestion}\n```"
        length = (p.end_line - p.line) if p.end_line and p.line else 0
        return {
            "path": p.path,
            "line": p.line,
            "length": max(0, length),
            "content": f"{content}\n\n//nova:fp:{fp}//",
            "isNewFile": True,
        }
