"""The Markdown summary comment GitHub and GitLab show (one renderer; hosts only move it).

The body lists what was reviewed, the model's summary and notes, the findings not posted
inline, those not placed on a line, earlier findings still standing (incremental reviews),
and ends with Nova's hidden markers: the head reviewed and the verdict a re-run exits by.
Every untrusted text goes through the host's ``clean`` function first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.change import Placement, Severity
from bot.report.formats import summary_text
from bot.report.untrusted import cap
from bot.review.result import ReviewResult, verdict_marker

__all__ = ["SUMMARY_MARK", "render_summary"]

SUMMARY_MARK = "<!-- nova:summary -->"
_ROW_LIMIT = 4000  # one finding's text in a summary row


def render_summary(
    result: ReviewResult,
    *,
    posted: int,
    overflow: Sequence[Placement],
    notes: Sequence[str],
    clean: Callable[[str], str],
    host: str,
    limit: int,
    inline_noun: str = "inline comment(s)",
    carried: tuple[Severity, ...] = (),
    earlier: Sequence[str] = (),
    failed: int = 0,
) -> str:
    """The whole body, markers included, at most ``limit`` characters (cut with a note).
    ``failed``: the host writes that failed in this publish (the verdict marker then says
    the review is degraded, and the next run completes it)."""
    c = result.change
    out = [f"## Nova review of `{(c.head_ref or '')[:7]}`", ""]
    out.append(
        f"Reviewed {len(c.files)} file(s): {posted} new {inline_noun}, "
        f"{len(result.unplaced)} finding(s) not placed on a line."
    )
    text = summary_text(result)
    if text:
        out += ["", clean(text)]
    if overflow:
        out += ["", "### Findings not posted inline", ""]
        out += [
            f"- `{p.path}:{p.line}` **{p.comment.severity}** "
            f"{cap(clean(p.comment.body), _ROW_LIMIT, where='a summary row')}"
            for p in overflow
        ]
    if result.unplaced:
        out += ["", "### Not placed on a line", ""]
        out += [
            f"- `{clean(p.path or p.comment.path)}:{p.comment.line or '?'}` "
            f"**{p.comment.severity}** "
            f"{cap(clean(p.comment.body), _ROW_LIMIT, where='a summary row')} "
            f"_({clean(p.reason or '')})_"
            for p in result.unplaced
        ]
    if result.dismissed:  # taken out of the gate by people (bot.conversation)
        out += ["", "### Dismissed (not counted)", ""]
        out += [
            f"- `{d.placement.path}:{d.placement.line}` **{d.placement.comment.severity}** "
            f"{d.kind} by `{clean(d.by)}`" + (f": {clean(d.reason)}" if d.reason else "")
            for d in result.dismissed
        ]
    standing = [row for row in earlier if row not in out]
    if standing:
        out += [
            "",
            f"### Earlier findings (reviews before `{(result.since or '')[:7]}`)",
            "",
            *standing,
        ]
    if notes:
        out += ["", *[f"_{clean(n)}_" for n in notes]]
    verdict = verdict_marker(result, carried, failed)
    marks = f"<!-- nova:head:{c.head_ref} --><!-- nova:verdict:{verdict} -->"
    body = cap("\n".join(out), limit - len(SUMMARY_MARK) - len(marks) - 4, where=host)
    return f"{SUMMARY_MARK}\n{body}\n\n{marks}"
