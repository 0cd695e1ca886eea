"""Publish a review on a GitLab merge request.

One diff thread per inline finding (``position_type: text`` with the merge request's
``diff_refs``; positions computed from the parsed hunks, see ``position``), at most
``max_inline_comments`` per run, most severe first; the rest go to one summary note that is
edited in place. A thread GitLab still refuses (400) is listed in the summary instead.

Re-runs never duplicate: every thread carries a hidden fingerprint (file, the text of its
line and which line of that text it is, origin, rule — never the model's wording), and only
notes written by Nova's own user (``GET /user``: the token's user, a project token's bot)
count; a marker anyone else writes is ignored. A head already reviewed is not reviewed again
(``--force`` overrides) and the re-run exits by the verdict that review recorded.

A new push is reviewed incrementally (``last_reviewed_head``: the head Nova's own summary
records). Earlier findings still stand after it: listed in the summary and counted for
``--fail-on`` (``bot.report.earlier``) until a push changes their line; each thread carries
its line's identity too, and a thread whose line left the diff is marked outdated.

Failures lose nothing: a write that timed out or got a 5xx may have landed, so Nova reads
its own threads back instead of posting again; what did not land is an error (exit 3, in
the summary and its verdict marker), and the next run on the head posts it; a 429 is
waited out (python-gitlab honours ``Retry-After``); the summary is attempted whatever
failed before it; bodies are capped at GitLab's 1,000,000 characters. A token that cannot
write (403: ``CI_JOB_TOKEN``) is not a failure: every finding goes to the job log and the
Code Quality report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from bot.change import Change, Placement, Severity
from bot.errors import NovaError, redact
from bot.hosts.gitlab.client import MergeState, gitlab_error
from bot.hosts.gitlab.codequality import DEFAULT_REPORT, write_code_quality
from bot.hosts.gitlab.position import position
from bot.hosts.timeouts import timed_out
from bot.report.earlier import OUTDATED, carried, earlier_rows
from bot.report.fingerprint import Group, LineIds, group_findings, line_ids, line_key
from bot.report.joblog import job_log_lines
from bot.report.placing import Placing, placing, refusal
from bot.report.summary import SUMMARY_MARK, render_summary
from bot.report.untrusted import cap, clean_suggestion, clean_text, rule_label
from bot.review.result import PriorReview, PublishReport, ReviewResult, parse_verdict

if TYPE_CHECKING:
    from bot.config import Settings

__all__ = ["BODY_LIMIT", "GitLabPublisher", "inert"]

BODY_LIMIT = 1_000_000  # GitLab refuses a longer note (400 "is too long")
_FP = re.compile(r"<!-- nova:fp:([0-9a-f]{16}) -->")
_HEAD = re.compile(r"<!-- nova:head:([0-9a-f]{7,40}) -->")
_VERDICT = re.compile(r"<!-- nova:verdict:([a-z0-9=,]+) -->")
_LINE = re.compile(r"<!-- nova:line:([0-9a-f]{12}) -->")
_ICON = {"error": "🔴", "warning": "🟠", "info": "🔵"}


# Model text, cleaned: GitLab's quick actions (a line starting ``/merge``, ``/approve``…,
# which GitLab runs as the note's author) are made inert by ``clean_text`` on every host.
inert = clean_text


def _thread_body(group: list[Placement], fp: str, key: str) -> str:
    parts = []
    for p in group:
        c = p.comment
        label = f"{_ICON[c.severity]} **{c.severity}**" + rule_label(c.rule, c.url, inert)
        parts.append(f"{label} {inert(c.body)}")
        suggestion = clean_suggestion(p.suggestion)
        if suggestion is not None:
            below = (p.end_line - p.line) if p.end_line and p.line else 0
            parts.append(f"```suggestion:-0+{below}\n{suggestion}\n```")
    marks = f"\n\n<!-- nova:fp:{fp} --><!-- nova:line:{key} -->"
    room = BODY_LIMIT - len(marks) - len(OUTDATED) - 4  # it may be marked outdated later
    return cap("\n\n".join(parts), room, where="GitLab") + marks


class GitLabPublisher:
    def __init__(
        self, session: MergeState, *, force: bool = False, log: IO[str] | None = None
    ) -> None:
        self.session = session
        self.force = force
        self.log = log
        self.fallback = False  # the token cannot write: job log + Code Quality report
        self._placing = Placing()  # which findings went inline, for the summary's counts

    @property
    def settings(self) -> Settings:  # the session's: .nova.toml of the base may change it
        return self.session.settings

    @property
    def _mr(self) -> Any:
        assert self.session.mr is not None, "fetch the change first"
        return self.session.mr

    # -- reading back Nova's own notes ------------------------------------------------
    def _summary_note(self) -> Any:
        for note in self._mr.notes.list(iterator=True, sort="asc", order_by="created_at"):
            if SUMMARY_MARK in (note.body or "") and self.session.is_mine(note.attributes):
                return note
        return None

    def _own_threads(self) -> list[dict[str, Any]]:
        """The notes of the diff threads Nova's own user started (they carry a fingerprint)."""
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        try:
            return [
                note
                for discussion in self._mr.discussions.list(iterator=True)
                for note in discussion.attributes.get("notes") or []
                if _FP.search(note.get("body") or "") and self.session.is_mine(note)
            ]
        except (GitlabError, RequestException) as exc:
            raise gitlab_error(exc, "listing the merge request's threads") from exc

    def _own_fingerprints(self) -> set[str]:
        return {m.group(1) for n in self._own_threads() if (m := _FP.search(n.get("body") or ""))}

    def _finished_summary(self) -> tuple[str, PriorReview] | None:
        """(body, verdict) of Nova's own summary when it records a complete review."""
        found = self._own_summary()
        return found if found is not None and found[1].complete else None

    def _own_summary(self) -> tuple[str, PriorReview] | None:
        """(body, verdict) of Nova's own summary, complete or degraded."""
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        try:
            note = self._summary_note()
        except (GitlabError, RequestException) as exc:
            raise gitlab_error(exc, "reading the merge request's notes") from exc
        body = str(note.body or "") if note is not None else ""
        head, verdict = _HEAD.search(body), _VERDICT.search(body)
        if not head or not verdict:
            return None
        prior = parse_verdict(head.group(1), verdict.group(1))
        return (body, prior) if prior is not None else None

    def last_reviewed_head(self, change: Change) -> str | None:
        """The head of Nova's own last finished review (none with only CI_JOB_TOKEN: Nova
        cannot tell its own notes then)."""
        if self.session.mr is None:
            return None
        found = self._finished_summary()
        return found[1].head if found else None

    def prior_review(self, change: Change) -> PriorReview | None:
        """Nova's own summary of a review of this head, complete or degraded (not with
        --force)."""
        if self.force or not change.head_ref or self.session.mr is None:
            return None
        found = self._own_summary()
        if found is None or not change.head_ref.startswith(found[1].head):
            return None
        return PriorReview(change.head_ref, found[1].severities, found[1].errors, found[1].heard)

    # -- publishing --------------------------------------------------------------------
    def publish(self, result: ReviewResult) -> PublishReport:
        notes: list[str] = []
        errors: list[str] = []
        posted, summary_posted = 0, False
        still: tuple[Severity, ...] = ()
        if self.session.mr is None:  # the job token could not even read the merge request
            self.fallback = True
        else:
            posted, summary_posted, still = self._post(result, notes, errors)
        report_path = self.session.gitlab.code_quality or (
            DEFAULT_REPORT if self.fallback else None
        )
        if self.fallback:
            for line in job_log_lines(result):
                print(line, file=self.log)
            notes.append(
                "the GitLab token cannot post (CI_JOB_TOKEN, or a token without the "
                "api scope): every finding is in the job log and in the Code Quality "
                f"report {report_path}"
            )
        if report_path:
            try:
                write_code_quality(result, report_path)
            except OSError as exc:
                errors.append(f"writing the Code Quality report {report_path}: {exc}")
        return PublishReport(
            "gitlab",
            inline_posted=posted,
            summary_posted=summary_posted,
            notes=tuple(notes),
            errors=tuple(errors),
            carried=still,
        )

    def _post(
        self, result: ReviewResult, notes: list[str], errors: list[str]
    ) -> tuple[int, bool, tuple[Severity, ...]]:
        """Threads, outdated marks, then the summary: (threads posted, summary posted, the
        earlier findings that still stand)."""
        ids = line_ids(result.change)
        groups = group_findings(result, ids)
        try:
            own: list[dict[str, Any]] | None = self._own_threads()
        except NovaError as exc:
            errors.append(str(exc))
            own = None
        known = {m.group(1): n for n in own or [] if (m := _FP.search(n.get("body") or ""))}
        if own is None:  # cannot tell what is there: post nothing twice, list it all
            inline, overflow = [], groups
        else:
            fresh = [(fp, g) for fp, g in groups if fp not in known]
            if len(groups) > len(fresh):
                notes.append(
                    f"{len(groups) - len(fresh)} finding(s) were already posted on an earlier run"
                )
            limit = max(0, self.settings.review.max_inline_comments)
            inline, overflow = fresh[:limit], fresh[limit:]
        earlier = self._earlier(result, errors)
        posted, moved, lost = self._post_threads(result.change, ids, inline, notes)
        if lost:
            errors.append(lost)
        self._placing = placing(groups, inline, moved, overflow, own is not None)
        outdated = self._mark_outdated(own, ids, errors) if own and not self.fallback else []
        still = carried(
            earlier[1] if earlier else None,
            outdated,
            [str(known[fp].get("body") or "") for fp, _g in groups if fp in known],
        )
        summary_posted = self._upsert_summary(
            result, posted, moved + overflow, notes, errors, still, earlier[0] if earlier else ""
        )
        if lost and not summary_posted and errors[-1] != lost:  # one outage: one line
            errors.remove(lost)
            errors[-1] += f"; {lost}"
        return posted, summary_posted, still

    def _earlier(self, result: ReviewResult, errors: list[str]) -> tuple[str, PriorReview] | None:
        """The summary of the review this incremental one continues (None for a whole one)."""
        if not result.since:
            return None
        try:
            return self._finished_summary()
        except NovaError as exc:
            errors.append(str(exc))
            return None

    def _mark_outdated(
        self, own: list[dict[str, Any]], ids: LineIds, errors: list[str]
    ) -> list[str]:
        """Mark Nova's threads whose line left the diff; return the bodies marked now. A
        thread without a line identity (an older Nova's) is left to GitLab's own marking."""
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        current = {line_key(path or "", text, nth) for (path, _n), (text, nth) in ids.items()}
        marked: list[str] = []
        for note in own:
            body = str(note.get("body") or "")
            key = _LINE.search(body)
            if key is None or key.group(1) in current or body.startswith(OUTDATED):
                continue
            try:
                self._mr.notes.update(note["id"], {"body": f"{OUTDATED}.\n\n{body}"})
            except GitlabError as exc:
                if exc.response_code != 403:
                    errors.append(str(gitlab_error(exc, "marking an outdated thread")))
                return marked
            except RequestException as exc:
                errors.append(str(gitlab_error(exc, "marking an outdated thread")))
                return marked
            marked.append(body)
        return marked

    def _post_threads(
        self,
        change: Change,
        ids: LineIds,
        inline: list[Group],
        notes: list[str],
    ) -> tuple[int, list[Group], str | None]:
        """One thread per group; return (threads now on the merge request, groups moved to
        the summary, the error when GitLab failed some: one line). A refused, failed or
        timed-out thread is never lost or doubled."""
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        posted, moved, refused, lost = 0, [], [], []
        for i, (fp, group) in enumerate(inline):
            pos = position(change, group[0].path, group[0].line, self.session.diff_refs)
            if pos is None:
                refused.append("not a line of GitLab's diff")
                moved.append((fp, group))
                continue
            text, nth = ids.get((group[0].path, group[0].line), ("", 0))
            body = _thread_body(group, fp, line_key(group[0].path or "", text, nth))
            try:
                self._mr.discussions.create({"body": body, "position": pos})
                posted += 1
                continue
            except GitlabError as exc:
                code = exc.response_code
                if code == 403:
                    self.fallback = True
                    return posted, moved + inline[i:], None
                if code is not None and code < 500 and code != 429:  # refused: 400 position
                    refused.append(f"HTTP {code}: {redact(str(exc.error_message))[:200]}")
                    moved.append((fp, group))
                    continue
                what = f"posting a thread got HTTP {code} ({redact(str(exc.error_message))[:200]})"
            except RequestException as exc:
                what = "posting a thread " + (
                    "timed out" if timed_out(exc) else f"failed ({type(exc).__name__})"
                )
            failure = self._landed(fp, what, notes)
            if failure is None:
                posted += 1
            else:
                lost.append(failure)
                moved.append((fp, group))
        if refused:
            notes.append(
                f"GitLab refused {len(refused)} thread(s) ({refused[0]}); they are "
                "listed below instead"
            )
        if not lost:
            return posted, moved, None
        # GitLab failed, not the token: an error, and the next run posts them
        return (
            posted,
            moved,
            f"{len(lost)} thread(s) were not posted ({lost[0]}); they are listed in the "
            "summary instead, and the next run posts them",
        )

    def _landed(self, fp: str, what: str, notes: list[str]) -> str | None:
        """A write that failed in a way that may still have stored it: read back (never
        POST again blindly). None when it landed, else what failed."""
        try:
            landed = fp in self._own_fingerprints()
        except NovaError as exc:
            return f"{what}, and reading it back failed: {exc}"
        if landed:
            notes.append(f"{what}, but GitLab had stored it")
            return None
        return what

    def _summary_body(
        self,
        result: ReviewResult,
        posted: int,
        overflow: list[Group],
        notes: list[str],
        still: tuple[Severity, ...] = (),
        earlier: str = "",
        failed: Sequence[str] = (),
    ) -> str:
        """The summary; ``failed`` (what failed on GitLab so far) is said in it and marks
        the review degraded, so the next run on this head completes it."""
        return render_summary(
            result,
            posted=self._placing.inline,
            inline_before=self._placing.before,
            outside=self._placing.listed(
                overflow,
                refusal([*failed, *notes], "GitLab refused the thread"),
                self.settings.review.max_inline_comments,
            ),
            notes=notes,
            clean=inert,
            host="GitLab",
            limit=BODY_LIMIT,
            inline_noun="inline threads",
            carried=still,
            earlier=earlier_rows(earlier),
            failed=failed,
        )

    def _upsert_summary(
        self,
        result: ReviewResult,
        posted: int,
        overflow: list[Group],
        notes: list[str],
        errors: list[str],
        still: tuple[Severity, ...] = (),
        earlier: str = "",
    ) -> bool:
        """Create or edit Nova's one summary note. Editing is idempotent; a create that timed
        out or got a 5xx is looked for before it is tried once more."""
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        if self.fallback:
            return False
        body = self._summary_body(result, posted, overflow, notes, still, earlier, errors)
        for attempt in range(2):
            try:
                note = self._summary_note()
                if note is None:
                    self._mr.notes.create({"body": body})
                else:
                    note.body = body
                    note.save()
                return True
            except GitlabError as exc:
                if exc.response_code == 403:
                    self.fallback = True
                    return False
                failure = str(gitlab_error(exc, f"posting the summary on {result.change.id}"))
                if exc.response_code is not None and exc.response_code < 500:
                    errors.append(failure)
                    return False
            except RequestException as exc:
                failure = (
                    f"posting the summary on {result.change.id} "
                    f"{'timed out' if timed_out(exc) else 'failed'}"
                )
            if attempt == 1:
                errors.append(failure)
        return False
