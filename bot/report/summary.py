"""The summary comment GitHub and GitLab show (one renderer; hosts only move it).

The body is the digest (``digest.py``) in Markdown (``markdown.py``): the verdict in words
with the counts, the walkthrough, the findings not posted inline with why, earlier findings
still standing (incremental reviews), then folded details; it ends with Nova's hidden
markers: the head reviewed and the verdict a re-run exits by. Every untrusted text goes
through the host's ``clean`` function first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.change import Placement, Severity
from bot.report.digest import OVER_CAP, Listed, build_digest
from bot.report.markdown import render_markdown
from bot.review.result import ReviewResult, verdict_marker

__all__ = ["SUMMARY_MARK", "render_summary"]

SUMMARY_MARK = "<!-- nova:summary -->"


def render_summary(
    result: ReviewResult,
    *,
    posted: int = 0,
    overflow: Sequence[Placement] = (),
    notes: Sequence[str],
    clean: Callable[[str], str],
    host: str,
    limit: int,
    inline_noun: str = "inline comments",
    carried: tuple[Severity, ...] = (),
    earlier: Sequence[str] = (),
    outside: Sequence[Listed] | None = None,
    inline_before: int = 0,
    fail_on: str | None = None,
    failed: Sequence[str] = (),
) -> str:
    """The whole body, markers included, at most ``limit`` characters (the verdict and
    counts always kept). ``outside`` are the placed findings not posted inline, with why
    (``overflow``: those over the cap, without a reason of their own); ``posted`` counts
    the findings posted inline now, ``inline_before`` those inline from earlier runs.
    ``failed``: the host writes that failed in this publish, listed with the errors (the
    verdict marker then says the review is degraded, and the next run completes it)."""
    listed = (
        list(outside)
        if outside is not None
        else [Listed(p, OVER_CAP, "more than the inline comments of one run") for p in overflow]
    )
    digest = build_digest(
        result,
        inline=posted,
        inline_before=inline_before,
        outside=listed,
        fail_on=fail_on,
        carried=carried,
        earlier=earlier,
        notes=[*result.notes, *notes],
        inline_noun=inline_noun,
    )
    digest.errors += failed
    c = result.change
    verdict = verdict_marker(result, carried, len(failed))
    marks = f"<!-- nova:head:{c.head_ref} --><!-- nova:verdict:{verdict} -->"
    body = render_markdown(
        digest,
        clean=clean,
        heading=f"## Nova review of `{(c.head_ref or '')[:7]}`",
        limit=limit - len(SUMMARY_MARK) - len(marks) - 4,
        where=host,
    )
    return f"{SUMMARY_MARK}\n{body}\n\n{marks}"
