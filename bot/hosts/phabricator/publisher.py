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
``--force``; a review whose publishing failed (its verdict marker counts the failures) is
done again, and the fingerprints of its degraded summary do not count as posted, so the
inline comments the extension could not publish then are published once.

Failures lose nothing and are listed, never raised: a failure to post the inlines or the
summary (a Conduit error, an HTTP 5xx, a timeout whose write did not land) goes into
``PublishReport.errors`` (exit 3), the build still gets its verdict, and when the summary
is missing every finding is written to the job log (stderr), one line each. Credentials
that may read but not comment (Phorge's policy refusal, "You do not have permission to
interact with this object") are no error, as on GitHub and GitLab: one note names the
refusal, every finding goes to the job log and, with a target, to the build's lint, and
the exit code is the gate's. Harbormaster needs only to see the build, so it usually still
takes the lint; a target the token may not write to is named the same way.
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Any

from bot.change import Change, Placement
from bot.config import Settings
from bot.errors import NovaError, ServiceError, one_line
from bot.hosts.phabricator.build import BuildReporter
from bot.hosts.phabricator.conduit import ConduitClient, ConduitError
from bot.hosts.phabricator.summary import FP_MARK, VERDICT_MARK, Summary
from bot.report.fingerprint import fingerprint, line_ids
from bot.report.untrusted import clean_suggestion, clean_text
from bot.review.result import (
    PriorReview,
    PublishReport,
    ReviewResult,
    parse_verdict,
    verdict_marker,
)

if TYPE_CHECKING:
    from bot.hosts.phabricator.conduit import RevisionState

__all__ = ["EXTENSION_METHOD", "NO_EXTENSION", "REFUSED", "PhabricatorPublisher"]

EXTENSION_METHOD = "nova.differential.publish"
# said once, in the summary and the job log, when findings could have been inline comments
NO_EXTENSION = (
    f"inline comments need Nova's Conduit extension ({EXTENSION_METHOD}), which this server "
    "does not have: the findings are listed in this summary instead. To install it, see "
    "docs/phabricator.md#the-conduit-extension-novadifferentialpublish-contract-version-2 "
    "in Nova's repository."
)
REFUSED = "the Phabricator token cannot"
# a PhabricatorPolicyException ("[You Shall Not Pass: D1] (Can Interact) You do not have
# permission to interact with this object. // …") and ConduitCall's refusal of an
# application the user may not use (that sentence is the error code)
_REFUSALS = ("You do not have permission to", "You do not have access to the application")


def _refusal(exc: ConduitError) -> str | None:
    """The server's words when ``exc`` says the token's user may not do this, else None."""
    for text in (exc.info, exc.code):
        if any(r in text for r in _REFUSALS):
            return one_line(text)[:300]
    return None


def _known(texts: list[str]) -> set[str]:
    """The fingerprints Nova has shown: in its inline comments and its complete summaries.
    A degraded summary's (the inline comments failed) are shown again, and posted inline
    when the extension now takes them: the next run completes that review."""
    known: set[str] = set()
    for text in texts:
        verdicts = [parse_verdict("", v) for _diff, v in VERDICT_MARK.findall(text)]
        if any(v is None or not v.complete for v in verdicts):
            continue
        known.update(fp for m in FP_MARK.findall(text) for fp in m.split(",") if fp)
    return known


class PhabricatorPublisher:
    def __init__(
        self, session: RevisionState, *, force: bool = False, log: IO[str] | None = None
    ) -> None:
        self.session = session
        self.force = force
        self.target = session.phabricator.harbormaster_target
        self.log = log or sys.stderr
        self.mode = "summary"
        self.fallback = False  # the server refused a write: findings go to the job log
        self._refused: str | None = None  # the server's words when it refused the summary
        self._notes: list[str] = []  # Nova's own notes for the report (NO_EXTENSION)
        self._build: BuildReporter | None = None
        self._before = 0  # Nova's summaries like this run's before it posted (see _landed)

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
        """Nova's own latest summary of this diff, complete or degraded (only its user's
        comments count)."""
        if self.force or self.session.diff_id is None:
            return None
        for text in reversed(self._own_comments(change)):
            for diff_id, verdict in VERDICT_MARK.findall(text):
                if int(diff_id) == self.session.diff_id:
                    return parse_verdict(change.head_ref or diff_id, verdict)
        return None

    # -- publishing --------------------------------------------------------------------
    def publish(self, result: ReviewResult) -> PublishReport:
        change = result.change
        previous = self._own_comments(change)
        known = _known(previous)
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
        self._before = self._matching(previous, summary)
        first_time = not any(f"nova:diff:{self.session.diff_id}" in t for t in previous)
        # a new verdict (a finding dismissed in the conversation) is news too
        verdict = f"nova:diff:{self.session.diff_id} nova:verdict:{verdict_marker(result)} "
        first_time = first_time or not any(verdict in t for t in previous)
        failures: list[str] = []
        posted, summary_posted = False, True  # nothing new: the summary there still holds
        if summary.placed or summary.unplaced or first_time:
            posted, summary_posted = self._post(change, summary, failures)
        refused = [f"{REFUSED} comment on {change.id} ({self._refused})"] if self._refused else []
        notes, lint_sent = self._finish_build(result, failures, refused)
        notes[:0] = self._notes
        if refused:
            lint = ", and those on lines as lint messages on the build" if lint_sent else ""
            notes.insert(0, f"{refused[0]}: every finding is in the job log{lint}")
        if not summary_posted or self.fallback:
            self._to_job_log(result, [n for n in notes if n.startswith(REFUSED)])
        return PublishReport(
            "phabricator",
            inline_posted=len(summary.placed) if posted else 0,
            summary_posted=summary_posted,
            notes=tuple(notes),
            errors=tuple(f"Phabricator: {f}" for f in failures),
        )

    def _finish_build(
        self, result: ReviewResult, failures: list[str], refused: list[str]
    ) -> tuple[list[str], bool]:
        """The build's one message: (notes, whether its lint was sent now). A refusal is a
        note; any other failure is listed in ``failures``, never raised."""
        if self.build is None:
            return [], False
        try:
            note = self.build.finish(result, failures, refused)
        except ConduitError as exc:
            why = _refusal(exc)
            if why is None:
                failures.append(f"the build target {self.target} got no verdict ({exc})")
                return [], False
            self.fallback = True
            return [
                f"{REFUSED} write to build target {self.target} ({why}): no lint or verdict "
                "was sent; every finding is in the job log"
            ], False
        except ServiceError as exc:  # it may have landed: never sent again (build.py)
            failures.append(f"sending the build target {self.target} its verdict failed ({exc})")
            return [], False
        return ([note] if note else []), note is None

    def _to_job_log(self, result: ReviewResult, notes: list[str]) -> None:
        """What could not be posted: the refusal, then one line per finding."""
        from bot.report.joblog import job_log_lines

        for note in notes:
            print(f"nova: {one_line(clean_text(note))}", file=self.log)
        for line in job_log_lines(result):
            print(line, file=self.log)
        self.log.flush()

    def _post(self, change: Any, summary: Summary, failures: list[str]) -> tuple[bool, bool]:
        """Inlines and summary in one call when possible; else (or on failure) the summary.
        Returns (inline comments posted, summary posted)."""
        refused_inline = None
        has_extension = bool(summary.placed) and self._has_extension()
        if summary.placed and not has_extension:  # say so once: summary, job log, report
            summary.notes.append(NO_EXTENSION)
            self._notes.append(NO_EXTENSION)
            print(f"nova: note: {NO_EXTENSION}", file=self.log, flush=True)
        if has_extension:
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
                return True, True
            except ConduitError as exc:  # the server answered: nothing was written
                again = "" if _refusal(exc) else ", and the next run posts them"
                failures.append(
                    f"inline comments were not posted ({exc}); the findings are listed here "
                    f"instead{again}"
                )
                refused_inline = failures[-1] if _refusal(exc) else None
            except ServiceError as exc:  # no answer: it may have landed
                if self._landed(change, summary):
                    return True, True
                failures.append(
                    f"inline comments were not posted ({exc}); the findings are listed here "
                    "instead, and the next run posts them"
                )
            summary.mode = "lint" if self.target else "summary"
        self.mode = summary.mode
        summary.failures = failures
        return False, self._post_summary(change, summary, failures, refused_inline)

    def _post_summary(
        self, change: Any, summary: Summary, failures: list[str], refused_inline: str | None
    ) -> bool:
        """The summary comment; True when it is on the revision. A policy refusal sets
        ``_refused`` and is no failure (the findings go to the job log)."""
        try:
            self.conduit.call(
                "differential.revision.edit",
                write=True,
                objectIdentifier=change.id,
                transactions=[{"type": "comment", "value": summary.text()}],
            )
            return True
        except ConduitError as exc:
            self._refused = _refusal(exc)
            if self._refused is not None:
                self.fallback = True
                if refused_inline in failures:  # the same refusal: a note, not a failure
                    failures.remove(refused_inline)
                return False
            failure = str(exc)
        except ServiceError as exc:  # no answer: it may have landed
            if self._landed(change, summary):
                return True
            failure = str(exc)
        failures.append(
            f"the summary comment could not be posted ({failure}); every finding is in the job log"
        )
        return False

    def _has_extension(self) -> bool:
        try:
            return EXTENSION_METHOD in self.conduit.methods()
        except NovaError:  # the summary is attempted whatever failed before it
            return False

    def _landed(self, change: Any, summary: Summary) -> bool:
        """A new summary of this diff with exactly these findings is on the revision (one
        more than before this run: an earlier degraded run's does not count)."""
        try:
            return self._matching(self._own_comments(change), summary) > self._before
        except NovaError:  # cannot tell: say it failed (a re-run posts nothing twice)
            return False

    def _matching(self, texts: list[str], summary: Summary) -> int:
        diff, fps = f"nova:diff:{self.session.diff_id} ", f"nova:fp:{','.join(summary.all_fps)}//"
        return sum(diff in t and fps in t for t in texts)

    def _revision_id(self, change: Any) -> int:
        return int(change.id.lstrip("D"))

    def _own_comments(self, change: Any) -> list[str]:
        """Raw text of the comments (summaries and inlines) Nova's user published, oldest
        first: ``transaction.search`` answers newest first (Phorge's default order, id
        descending), so the transactions are sorted by their id here."""
        me = self.session.whoami()
        texts: list[tuple[int, str]] = []
        after = None
        for _page in range(20):
            params: dict[str, Any] = {"objectIdentifier": change.id, "limit": 100}
            if after:
                params["after"] = after
            page = self.conduit.call("transaction.search", **params) or {}
            for tx in page.get("data") or []:
                if tx.get("authorPHID") != me:
                    continue
                order = int(tx.get("id") or 0)
                for comment in tx.get("comments") or []:
                    texts.append((order, ((comment.get("content") or {}).get("raw")) or ""))
            after = (page.get("cursor") or {}).get("after")
            if not after:
                break
        return [raw for _order, raw in sorted(texts, key=lambda pair: pair[0])]

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
