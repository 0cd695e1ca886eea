"""Publish a review on a GitHub pull request.

One review per run with inline comments (``line``/``side: RIGHT``, ``start_line`` for
ranges, ``commit_id`` = head), at most ``max_inline_comments`` (GitHub's abuse detection),
most severe first; the rest go to one summary comment that is edited in place.

Re-runs never duplicate: every inline comment carries a hidden fingerprint made from the
file, the text of its line, the origin and the rule, never from the model's wording, so a
finding reworded on the next run is still recognised. A head SHA already reviewed is not
reviewed again (``--force`` overrides). A Nova comment whose line changed (its line's
content is no longer in the diff) is marked outdated, never deleted; one the model merely
did not repeat stays as it is (models are not deterministic).

Failures lose nothing: a 422 (GitHub rejects the whole review) moves every inline comment
into the summary; a 403 on a read-only token (fork pull requests) falls back to workflow
annotations (``::warning file=…,line=…::``) and the job summary.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from typing import IO, Any

from bot.config import Settings
from bot.errors import redact
from bot.hosts.github.source import GitHubSource, github_error
from bot.models import Placement, ReviewResult, severity_rank
from bot.publishers.fingerprint import fingerprint, line_key, line_texts
from bot.publishers.local import summary_text
from bot.publishers.untrusted import clean_suggestion, clean_text

__all__ = ["GitHubPublisher", "fingerprint", "line_key", "workflow_annotations"]

SUMMARY_MARK = "<!-- nova:summary -->"
_FP = re.compile(r"<!-- nova:fp:([0-9a-f]{16}) -->")
_HEAD = re.compile(r"<!-- nova:head:([0-9a-f]{7,40}) -->")
_LINE = re.compile(r"<!-- nova:line:([0-9a-f]{12}) -->")
OUTDATED = "> **Outdated**: Nova no longer reports this"
_ICON = {"error": "🔴", "warning": "🟠", "info": "🔵"}


def _escape_annotation(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_annotations(result: ReviewResult) -> list[str]:
    """``::warning file=…,line=…::`` lines: Actions shows them on the diff without a token."""
    level = {"error": "error", "warning": "warning", "info": "notice"}
    out = []
    for p in result.placements:
        where = f"file={p.path or p.comment.path}"
        if p.placed:
            where += f",line={p.line}" + (f",endLine={p.end_line}" if p.end_line else "")
        text = p.comment.body if p.placed else f"{p.comment.body} (not placed: {p.reason})"
        out.append(f"::{level[p.comment.severity]} {where},title=Nova::"
                   f"{_escape_annotation(clean_text(text))}")
    return out


def _inline_body(group: list[Placement], fp: str, key: str) -> str:
    parts = []
    for p in group:
        c = p.comment
        label = f"{_ICON[c.severity]} **{c.severity}**" + (f" ({c.rule})" if c.rule else "")
        parts.append(f"{label} {clean_text(c.body)}")
        suggestion = clean_suggestion(p.suggestion)
        if suggestion is not None:
            parts.append(f"```suggestion\n{suggestion}\n```")
    return "\n\n".join(parts) + f"\n\n<!-- nova:fp:{fp} --><!-- nova:line:{key} -->"


class GitHubPublisher:
    def __init__(self, source: GitHubSource, settings: Settings, *, force: bool = False,
                 annotations: IO[str] | None = None) -> None:
        self.source = source
        self.settings = settings
        self.force = force
        self.annotations = annotations or sys.stdout
        self.posted = 0
        self.fallback = False

    def _pr(self, change: Any) -> Any:
        """The pull request the source fetched (no second request)."""
        assert self.source.pull is not None, "fetch the change first"
        return self.source.pull

    def _summary_comment(self, pr: Any) -> Any:
        for comment in pr.get_issue_comments():
            if SUMMARY_MARK in (comment.body or ""):
                return comment
        return None

    def already_reviewed(self, change: Any) -> bool:
        """True when the summary says this head SHA was reviewed (and not ``--force``)."""
        if self.force:
            return False
        from github import GithubException

        try:
            comment = self._summary_comment(self._pr(change))
        except GithubException as exc:
            raise github_error(exc, f"reading comments of {change.id}") from exc
        m = _HEAD.search(comment.body or "") if comment is not None else None
        return bool(m and change.head_ref and change.head_ref.startswith(m.group(1)))

    def publish(self, result: ReviewResult) -> None:
        from github import GithubException

        pr = self._pr(result.change)
        try:
            existing = [c for c in pr.get_review_comments() if _FP.search(c.body or "")]
        except GithubException as exc:
            raise github_error(exc, f"listing review comments of {result.change.id}") from exc
        known = {_FP.search(c.body).group(1): c for c in existing}  # type: ignore[union-attr]
        groups = self._groups(result)
        fresh = [(fp, g) for fp, g in groups if fp not in known]
        limit = max(0, self.settings.max_inline_comments)
        inline, overflow = fresh[:limit], fresh[limit:]
        notes = [f"{len(groups) - len(fresh)} finding(s) were already posted on an earlier run"
                 ] if len(groups) > len(fresh) else []
        rejected = self._post_review(pr, result, inline)
        if rejected is not None:
            notes.append(f"GitHub rejected the inline comments ({rejected}); they are listed "
                         "below instead")
            overflow = inline + overflow
            inline = []
        if not self.fallback:
            self._mark_outdated(existing, result)
        self._upsert_summary(pr, result, overflow, notes)

    def _groups(self, result: ReviewResult) -> list[tuple[str, list[Placement]]]:
        texts = line_texts(result.change)
        grouped: dict[str, list[Placement]] = defaultdict(list)
        for p in result.placed:
            grouped[fingerprint(p, texts.get((p.path, p.line), ""))].append(p)
        return sorted(grouped.items(), key=lambda kv: (
            -max(severity_rank(p.comment.severity) for p in kv[1]), kv[1][0].path or "",
            kv[1][0].line or 0))

    def _event(self, result: ReviewResult) -> str:
        fail_on = self.settings.fail_on
        if self.settings.request_changes and fail_on != "never" and any(
                severity_rank(p.comment.severity) >= severity_rank(fail_on)
                for p in result.placements):
            return "REQUEST_CHANGES"
        return "COMMENT"

    def _post_review(self, pr: Any, result: ReviewResult,
                     inline: list[tuple[str, list[Placement]]]) -> str | None:
        """Post the review; return GitHub's reason when it rejected it (422)."""
        from github import GithubException

        event = self._event(result)
        if not inline and event == "COMMENT":
            return None
        comments = []
        texts = line_texts(result.change)
        for fp, group in inline:
            p = group[0]
            key = line_key(p.path or "", texts.get((p.path, p.line), ""))
            entry: dict[str, Any] = {"path": p.path, "line": p.end_line or p.line,
                                     "side": "RIGHT", "body": _inline_body(group, fp, key)}
            if p.end_line:
                entry.update(start_line=p.line, start_side="RIGHT")
            comments.append(entry)
        body = f"Nova found {len(result.placements)} issue(s); see the summary comment."
        try:
            commit = self.source._gh_repo.get_commit(result.change.head_ref)
            pr.create_review(commit=commit, body=body, event=event, comments=comments)
        except GithubException as exc:
            if exc.status == 403:
                self._fall_back(result)
                return None
            if exc.status == 422:
                data = exc.data if isinstance(exc.data, dict) else {}
                return redact(str((data.get("errors") or [data.get("message")])[0]))
            raise github_error(exc, f"posting the review on {result.change.id}") from exc
        self.posted = len(comments)
        return None

    def _fall_back(self, result: ReviewResult) -> None:
        """Read-only token (fork pull request): annotations still show every finding."""
        if self.fallback:
            return
        self.fallback = True
        for line in workflow_annotations(result):
            print(line, file=self.annotations)
        self.annotations.flush()
        result.notes.append("the GitHub token is read-only (a fork pull request?): findings "
                            "are shown as workflow annotations and in the job summary")

    def _mark_outdated(self, existing: list[Any], result: ReviewResult) -> None:
        from github import GithubException

        sha = (result.change.head_ref or "")[:7]
        current = {line_key(path or "", text)
                   for (path, _n), text in line_texts(result.change).items()}
        for c in existing:
            key = _LINE.search(c.body)
            if (key and key.group(1) in current) or c.body.startswith(OUTDATED):
                continue
            try:
                c.edit(f"{OUTDATED} at `{sha}`.\n\n{c.body}")
            except GithubException as exc:
                if exc.status == 403:
                    return
                raise github_error(exc, "marking an outdated comment") from exc

    def _summary_body(self, result: ReviewResult,
                      overflow: list[tuple[str, list[Placement]]], notes: list[str]) -> str:
        c = result.change
        out = [SUMMARY_MARK, f"## Nova review of `{(c.head_ref or '')[:7]}`", ""]
        out.append(f"Reviewed {len(c.files)} file(s): {self.posted} new inline comment(s), "
                   f"{len(result.unplaced)} finding(s) not placed on a line.")
        text = summary_text(result)
        if text:
            out += ["", clean_text(text)]
        if overflow:
            out += ["", "### Findings not posted inline", ""]
            for _fp, group in overflow:
                for p in group:
                    out.append(f"- `{p.path}:{p.line}` **{p.comment.severity}** "
                               f"{clean_text(p.comment.body)}")
        if result.unplaced:
            out += ["", "### Not placed on a line", ""]
            for p in result.unplaced:
                out.append(f"- `{clean_text(p.path or p.comment.path)}:{p.comment.line or '?'}`"
                           f" **{p.comment.severity}** {clean_text(p.comment.body)} "
                           f"_({clean_text(p.reason or '')})_")
        if notes:
            out += ["", *[f"_{clean_text(n)}_" for n in notes]]
        out += ["", f"<!-- nova:head:{c.head_ref} -->"]
        return "\n".join(out)

    def _upsert_summary(self, pr: Any, result: ReviewResult,
                        overflow: list[tuple[str, list[Placement]]], notes: list[str]) -> None:
        from github import GithubException

        body = self._summary_body(result, overflow, notes)
        try:
            comment = self._summary_comment(pr)
            if comment is None:
                pr.create_issue_comment(body)
            else:
                comment.edit(body)
        except GithubException as exc:
            if exc.status == 403:
                self._fall_back(result)
                return
            raise github_error(exc, f"posting the summary on {result.change.id}") from exc
