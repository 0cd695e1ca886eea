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
from typing import Any

from bot.config import Settings
from bot.errors import NovaError, ServiceError
from bot.hosts.phabricator.build import BuildReporter
from bot.hosts.phabricator.conduit import ConduitError
from bot.hosts.phabricator.source import PhabricatorSource
from bot.hosts.phabricator.summary import DIFF_MARK, FP_MARK, Summary
from bot.models import Placement, ReviewResult
from bot.publishers.fingerprint import fingerprint, line_texts
from bot.publishers.untrusted import clean_suggestion, clean_text

__all__ = ["EXTENSION_METHOD", "PhabricatorPublisher"]

EXTENSION_METHOD = "nova.differential.publish"


class PhabricatorPublisher:
    def __init__(self, source: PhabricatorSource, settings: Settings, *,
                 force: bool = False) -> None:
        self.source = source
        self.settings = settings
        self.force = force
        self.target = settings.harbormaster_target
        self.mode = "summary"
        self._me: str | None = None
        self._build: BuildReporter | None = None

    @property
    def conduit(self):
        return self.source.conduit

    @property
    def build(self) -> BuildReporter | None:
        if self.target and self._build is None:
            self._build = BuildReporter(self.conduit, self.target, self.settings.fail_on)
        return self._build

    # -- optional capabilities the pipeline checks -----------------------------------
    def abort(self, reason: str) -> None:
        if self.build is not None:
            self.build.abort(reason)

    def already_reviewed(self, change: Any) -> bool:
        if self.force or self.source.diff_id is None:
            return False
        reviewed = {int(m) for text in self._own_comments(change)
                    for m in DIFF_MARK.findall(text)}
        return self.source.diff_id in reviewed

    # -- publishing --------------------------------------------------------------------
    def publish(self, result: ReviewResult) -> None:
        change = result.change
        previous = self._own_comments(change)
        known = {fp for text in previous for m in FP_MARK.findall(text)
                 for fp in m.split(",") if fp}
        texts = line_texts(change)
        placed = [(fingerprint(p, texts.get((p.path, p.line), "")), p) for p in result.placed]
        unplaced = [(fingerprint(p, f"unplaced:{p.comment.line}"), p) for p in result.unplaced]
        summary = Summary(result, self.source.diff_id, self.source.changesets,
                          mode="lint" if self.target else "summary",
                          placed=[(fp, p) for fp, p in placed if fp not in known],
                          unplaced=[(fp, p) for fp, p in unplaced if fp not in known],
                          all_fps=[fp for fp, _ in placed + unplaced])
        first_time = not any(f"nova:diff:{self.source.diff_id}" in t for t in previous)
        failures: list[str] = []
        if summary.placed or summary.unplaced or first_time:
            try:
                self._post(change, summary, failures)
            except NovaError as exc:
                failures.append(f"the summary comment could not be posted: {exc}")
                with suppress(NovaError):  # the summary's failure is the one to report
                    self._finish_build(result, failures)
                raise
        self._finish_build(result, failures)
        result.errors.extend(f"Phabricator: {f}" for f in failures)

    def _finish_build(self, result: ReviewResult, failures: list[str]) -> None:
        if self.build is not None:
            note = self.build.finish(result, failures)
            if note:
                result.notes.append(note)

    def _post(self, change: Any, summary: Summary, failures: list[str]) -> None:
        """Inlines and summary in one call when possible; else (or on failure) the summary."""
        if summary.placed and EXTENSION_METHOD in self.conduit.methods():
            summary.mode = self.mode = "inline"
            try:
                self.conduit.call(
                    EXTENSION_METHOD, write=True, revisionID=self._revision_id(change),
                    diffID=self.source.diff_id, comment=summary.text(), discardDrafts=True,
                    inlines=[self._inline(p, fp) for fp, p in summary.placed])
                return
            except ConduitError as exc:  # the server answered: nothing was written
                failures.append(f"inline comments were not posted ({exc}); the findings "
                                "are listed here instead")
            except ServiceError as exc:  # no answer: it may have landed
                if self._landed(change, summary):
                    return
                failures.append(f"inline comments were not posted ({exc}); the findings "
                                "are listed here instead")
            summary.mode = "lint" if self.target else "summary"
        self.mode = summary.mode
        summary.failures = failures
        self.conduit.call("differential.revision.edit", write=True,
                          objectIdentifier=change.id,
                          transactions=[{"type": "comment", "value": summary.text()}])

    def _landed(self, change: Any, summary: Summary) -> bool:
        marker = f"nova:diff:{self.source.diff_id} nova:fp:{','.join(summary.all_fps)}"
        return any(marker in text for text in self._own_comments(change))

    def _revision_id(self, change: Any) -> int:
        return int(change.id.lstrip("D"))

    def _whoami(self) -> str:
        if self._me is None:
            self._me = str(self.conduit.call("user.whoami").get("phid", ""))
        return self._me

    def _own_comments(self, change: Any) -> list[str]:
        """Raw text of the comments (summaries and inlines) Nova's user published."""
        me = self._whoami()
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
        return {"path": p.path, "line": p.line, "length": max(0, length),
                "content": f"{content}\n\n//nova:fp:{fp}//", "isNewFile": True}
