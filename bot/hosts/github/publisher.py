"""Publish a review on a GitHub pull request.

One review per run with inline comments (``line``/``side: RIGHT``, ``start_line`` for
ranges, ``commit_id`` = head), at most ``max_inline_comments`` (GitHub's abuse detection),
most severe first; the rest go to one summary comment that is edited in place.

Re-runs never duplicate: every inline comment carries a hidden fingerprint (file, the text of
its line and which line of that text it is, origin, rule — never the model's wording). Only
comments written by Nova's own login count: a marker anyone else writes is ignored. A head
already reviewed is not reviewed again (``--force`` overrides), and the re-run exits by the
verdict that review recorded. A Nova comment whose line left the diff is marked outdated,
never deleted.

Failures lose nothing: a 422 or 5xx on the review moves its comments into the summary; a
write that timed out may have landed, so Nova re-reads its own comments instead of posting
again. When GitHub failed (5xx, a lost timeout, a rate limit past the waits; not a 422 or
a read-only 403) that is an error: exit 3, the summary says it, and its verdict marker
counts it, so the re-run guard does the review again and posts only what is missing; the
summary is attempted whatever failed before it; bodies are capped at GitHub's 65,536
characters; a 403 on a read-only token (fork pull requests) falls back to workflow
annotations and the job summary.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING

from bot.change import Change, Placement, Severity, severity_rank
from bot.config import Settings
from bot.errors import NovaError, redact
from bot.hosts.github.actions import workflow_annotations
from bot.hosts.github.client import PullState, github_error
from bot.hosts.timeouts import timed_out
from bot.report.commands import write_command
from bot.report.earlier import OUTDATED, earlier_rows
from bot.report.earlier import carried as carry
from bot.report.fingerprint import Group, LineIds, group_findings, line_ids, line_key
from bot.report.placing import Placing, placing, refusal
from bot.report.summary import SUMMARY_MARK, render_summary
from bot.report.untrusted import cap, clean_suggestion, clean_text, rule_label
from bot.review.result import PriorReview, PublishReport, ReviewResult, parse_verdict

if TYPE_CHECKING:
    from github import GithubException
    from github.IssueComment import IssueComment
    from github.PullRequest import PullRequest, ReviewComment
    from github.PullRequestComment import PullRequestComment


__all__ = ["BODY_LIMIT", "GitHubPublisher"]

BODY_LIMIT = 65_536  # GitHub rejects a comment or review body longer than this (422)
_FP = re.compile(r"<!-- nova:fp:([0-9a-f]{16}) -->")
_HEAD = re.compile(r"<!-- nova:head:([0-9a-f]{7,40}) -->")
_VERDICT = re.compile(r"<!-- nova:verdict:([a-z0-9=,]+) -->")
_LINE = re.compile(r"<!-- nova:line:([0-9a-f]{12}) -->")
_ICON = {"error": "🔴", "warning": "🟠", "info": "🔵"}


def _inline_body(group: list[Placement], fp: str, key: str) -> str:
    parts = []
    for p in group:
        c = p.comment
        label = f"{_ICON[c.severity]} **{c.severity}**" + rule_label(c.rule, c.url)
        parts.append(f"{label} {clean_text(c.body)}")
        suggestion = clean_suggestion(p.suggestion)
        if suggestion is not None:
            parts.append(f"```suggestion\n{suggestion}\n```")
    marks = f"\n\n<!-- nova:fp:{fp} --><!-- nova:line:{key} -->"
    return cap("\n\n".join(parts), BODY_LIMIT - len(marks), where="GitHub") + marks


def _rate_limited(exc: GithubException) -> bool:
    """A 403 of GitHub's rate limits (still there after the client's waits): GitHub
    failed, the token may write (not the read-only fallback)."""
    data = exc.data if isinstance(exc.data, dict) else {"message": exc.data}
    return "rate limit" in str(data.get("message") or "").lower()


class GitHubPublisher:
    def __init__(
        self, session: PullState, *, force: bool = False, annotations: IO[str] | None = None
    ) -> None:
        self.session = session
        self.force = force
        self.annotations = annotations or sys.stdout
        self.fallback = False  # the token is read-only: annotations instead of comments
        self._placing = Placing()  # which findings went inline, for the summary's counts

    @property
    def settings(self) -> Settings:  # the session's: .nova.toml of the base may change it
        return self.session.settings

    @property
    def _pr(self) -> PullRequest:
        assert self.session.pull is not None, "fetch the change first"
        return self.session.pull

    # -- reading back Nova's own comments ---------------------------------------------
    def _summary_comment(self) -> IssueComment | None:
        for comment in self._pr.get_issue_comments():
            if SUMMARY_MARK in (comment.body or "") and self.session.is_mine(comment):
                return comment
        return None

    def _own_review_comments(self) -> list[PullRequestComment]:
        from github import GithubException

        try:
            return [
                c
                for c in self._pr.get_review_comments()
                if _FP.search(c.body or "") and self.session.is_mine(c)
            ]
        except GithubException as exc:
            raise github_error(exc, "listing review comments") from exc

    def _finished_summary(self) -> tuple[str, PriorReview] | None:
        """(body, verdict) of Nova's own summary when it records a complete review."""
        found = self._own_summary()
        return found if found is not None and found[1].complete else None

    def _own_summary(self) -> tuple[str, PriorReview] | None:
        """(body, verdict) of Nova's own summary, complete or degraded."""
        from github import GithubException

        try:
            comment = self._summary_comment()
        except GithubException as exc:
            raise github_error(exc, "reading the pull request's comments") from exc
        body = comment.body or "" if comment is not None else ""
        head, verdict = _HEAD.search(body), _VERDICT.search(body)
        if not head or not verdict:
            return None
        prior = parse_verdict(head.group(1), verdict.group(1))
        return (body, prior) if prior is not None else None

    def last_reviewed_head(self, change: Change) -> str | None:
        found = self._finished_summary()
        return found[1].head if found else None

    def prior_review(self, change: Change) -> PriorReview | None:
        """Nova's own summary of a review of this head, complete or not (not with --force).
        Nova's identity is settled here, before the model is asked: when nothing tells who
        Nova is, the run stops with one line (``ConfigError``) and posts nothing."""
        self.session.login()
        if self.force or not change.head_ref:
            return None
        found = self._own_summary()
        if found is None or not change.head_ref.startswith(found[1].head):
            return None
        return found[1]

    # -- publishing --------------------------------------------------------------------
    def publish(self, result: ReviewResult) -> PublishReport:
        self.session.login()  # nobody's comments count as Nova's unless this is known
        notes: list[str] = list(self.session.identity_notes)
        errors: list[str] = []
        ids = line_ids(result.change)
        groups = group_findings(result, ids)
        try:
            existing: list[PullRequestComment] | None = self._own_review_comments()
        except NovaError as exc:
            errors.append(str(exc))
            existing = None
        if existing is None:  # cannot tell what is there: post nothing twice, list it all
            inline, overflow = [], groups
        else:
            known = {m.group(1) for c in existing if (m := _FP.search(c.body or ""))}
            fresh = [(fp, g) for fp, g in groups if fp not in known]
            if len(groups) > len(fresh):
                notes.append(
                    f"{len(groups) - len(fresh)} finding(s) were already posted on an earlier run"
                )
            limit = max(0, self.settings.review.max_inline_comments)
            inline, overflow = fresh[:limit], fresh[limit:]
        earlier = self._finished_summary() if result.since else None
        posted, rejected = self._post_review(result, inline, ids, notes, errors)
        self._placing = placing(groups, inline, rejected, overflow, existing is not None)
        overflow = rejected + overflow
        outdated: list[PullRequestComment] = []
        if existing is not None and not self.fallback:
            outdated = self._mark_outdated(existing, ids, errors)
        by_fp = {m.group(1): c for c in existing or [] if (m := _FP.search(c.body or ""))}
        carried = carry(
            earlier[1] if earlier else None,
            [c.body or "" for c in outdated],
            [by_fp[fp].body or "" for fp, _g in groups if fp in by_fp],
        )
        summary_posted = self._upsert_summary(
            result, posted, overflow, notes, errors, carried, earlier[0] if earlier else ""
        )
        if self.fallback:
            notes.append(
                "the GitHub token is read-only (a fork pull request?): findings are "
                "shown as workflow annotations and in the job summary"
            )
        return PublishReport(
            "github",
            inline_posted=posted,
            summary_posted=summary_posted,
            notes=tuple(notes),
            errors=tuple(errors),
            carried=carried,
        )

    def _event(self, result: ReviewResult) -> str:
        fail_on = self.settings.review.fail_on
        if (
            self.session.github.request_changes
            and fail_on != "never"
            and any(
                severity_rank(p.comment.severity) >= severity_rank(fail_on)
                for p in result.placements
            )
        ):
            return "REQUEST_CHANGES"
        return "COMMENT"

    def _post_review(
        self,
        result: ReviewResult,
        inline: list[Group],
        ids: LineIds,
        notes: list[str],
        errors: list[str],
    ) -> tuple[int, list[Group]]:
        """Post one review; return (inline comments now on the PR, groups moved to the
        summary). A rejected, failed or timed-out review never loses or doubles a finding."""
        from github import GithubException
        from requests import RequestException

        event = self._event(result)
        if not inline and event == "COMMENT":
            return 0, []
        comments: list[ReviewComment] = []
        for fp, group in inline:
            p = group[0]
            assert p.path is not None and p.line is not None, "inline findings are placed"
            text, nth = ids.get((p.path, p.line), ("", 0))
            entry: ReviewComment = {
                "path": p.path,
                "line": p.end_line or p.line,
                "side": "RIGHT",
                "body": _inline_body(group, fp, line_key(p.path, text, nth)),
            }
            if p.end_line:
                entry["start_line"], entry["start_side"] = p.line, "RIGHT"
            comments.append(entry)
        body = f"Nova found {len(result.placements)} issue(s); see the summary comment."
        assert self.session.repo is not None and result.change.head_ref, "fetch the change first"
        try:
            commit = self.session.repo.get_commit(result.change.head_ref)
            self._pr.create_review(commit=commit, body=body, event=event, comments=comments)
        except GithubException as exc:
            if exc.status == 403 and not _rate_limited(exc):
                self._fall_back(result)
                return 0, inline
            data = exc.data if isinstance(exc.data, dict) else {"message": exc.data}
            why = redact(str((data.get("errors") or [data.get("message")])[0]))
            if exc.status == 422:
                notes.append(
                    f"GitHub rejected the inline comments ({why}); they are listed below instead"
                )
                return 0, inline
            return self._settle(inline, str(github_error(exc, "posting the review")), notes, errors)
        except RequestException as exc:
            what = "timed out" if timed_out(exc) else f"failed ({type(exc).__name__})"
            return self._settle(inline, f"posting the review {what}", notes, errors)
        return len(comments), []

    def _settle(
        self, inline: list[Group], what: str, notes: list[str], errors: list[str]
    ) -> tuple[int, list[Group]]:
        """The review POST failed in a way that may still have stored it: read back what
        landed (never POST again blindly) and list the rest in the summary."""
        try:
            landed = {
                m.group(1) for c in self._own_review_comments() if (m := _FP.search(c.body or ""))
            }
        except NovaError as exc:
            errors.append(f"{what}, and reading it back failed: {exc}")
            return 0, inline
        missing = [(fp, g) for fp, g in inline if fp not in landed]
        if missing:  # GitHub failed, not the token: an error, and the next run completes it
            errors.append(
                f"{what}; {len(missing)} inline comment(s) are listed in the summary "
                "instead, and the next run posts them"
            )
        else:
            notes.append(f"{what}, but GitHub had stored it")
        return len(inline) - len(missing), missing

    def _fall_back(self, result: ReviewResult) -> None:
        """Read-only token (fork pull request): annotations still show every finding."""
        if self.fallback:
            return
        self.fallback = True
        for line in workflow_annotations(result):
            write_command(self.annotations, line)  # Nova's own command, past the guard

    def _mark_outdated(
        self, existing: list[PullRequestComment], ids: LineIds, errors: list[str]
    ) -> list[PullRequestComment]:
        """Mark Nova's comments whose line left the diff; return those marked now."""
        from github import GithubException

        current = {line_key(path or "", text, nth) for (path, _n), (text, nth) in ids.items()}
        marked: list[PullRequestComment] = []
        for c in existing:
            key = _LINE.search(c.body)
            if (key and key.group(1) in current) or c.body.startswith(OUTDATED):
                continue
            try:
                c.edit(f"{OUTDATED}.\n\n{c.body}")
            except GithubException as exc:
                if exc.status != 403:
                    errors.append(str(github_error(exc, "marking an outdated comment")))
                return marked
            marked.append(c)
        return marked

    def _summary_body(
        self,
        result: ReviewResult,
        posted: int,
        overflow: list[Group],
        notes: list[str],
        carried: tuple[Severity, ...] = (),
        earlier: str = "",
        failed: Sequence[str] = (),
    ) -> str:
        """The summary; ``failed`` (what failed on GitHub so far) is said in it and marks
        the review degraded, so the next run on this head completes it."""
        refused = (
            "read-only token"
            if self.fallback
            else refusal([*failed, *notes], "GitHub did not take the review")
        )
        return render_summary(
            result,
            posted=self._placing.inline,
            inline_before=self._placing.before,
            outside=self._placing.listed(
                overflow, refused, self.settings.review.max_inline_comments
            ),
            notes=notes,
            clean=clean_text,
            host="GitHub",
            limit=BODY_LIMIT,
            inline_noun="inline comments",
            carried=carried,
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
        carried: tuple[Severity, ...] = (),
        earlier: str = "",
    ) -> bool:
        """Create or edit Nova's one summary comment. Editing is idempotent; a create that
        timed out is looked for before it is tried once more."""
        from github import GithubException
        from requests import RequestException

        body = self._summary_body(result, posted, overflow, notes, carried, earlier, errors)
        for attempt in range(2):
            try:
                comment = self._summary_comment()
                if comment is None:
                    self._pr.create_issue_comment(body)
                else:
                    comment.edit(body)
                return True
            except GithubException as exc:
                if exc.status == 403 and not _rate_limited(exc):
                    self._fall_back(result)
                    return False
                failure = str(github_error(exc, f"posting the summary on {result.change.id}"))
            except RequestException as exc:
                failure = (
                    f"posting the summary on {result.change.id} "
                    f"{'timed out' if timed_out(exc) else 'failed'}"
                )
            if attempt == 1:
                errors.append(failure)
        return False
