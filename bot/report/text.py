"""The digest as terminal text (``-o text``, the default): verdict and counts first, the
walkthrough, every finding by file with its line's text (those not placed on a line with
why), the model's summary, then the details (files skipped, uncovered, the run) last."""

from __future__ import annotations

from collections.abc import Callable
from itertools import groupby

from bot.report.digest import Digest, Listed, why_text
from bot.report.fingerprint import line_texts
from bot.review.result import ReviewResult

__all__ = ["render_text"]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _finding(
    item: Listed, texts: dict[tuple[str | None, int | None], str], scrub: Callable[[str], str]
) -> list[str]:
    p, c = item.placement, item.placement.comment
    label = f"[{c.severity}] {c.body} ({c.origin}{f' {c.rule}' if c.rule else ''})"
    if not p.placed:
        return [
            f"  {'?' if not c.line else c.line:>7} | (not placed on a line)",
            f"          {label}",
            f"          why: {_flat(why_text(item))}",
        ]
    span = f"{p.line}-{p.end_line}" if p.end_line else f"{p.line}"
    code = texts.get((item.path, p.line or 0), "")
    out = [f"  {span:>7} | {scrub(code).strip()[:100]}", f"          {label}"]
    if p.suggestion is not None:
        out.append(f"          suggestion: {p.suggestion.strip() or '(delete line)'}")
    return out


def render_text(result: ReviewResult, d: Digest) -> str:
    from bot.analyzers.secrets import Scrubber

    scrub = Scrubber().scrub  # a committed key's line is shown, never the key (CI logs)
    c = result.change
    out = [f"Review of {c.id}: {c.title}".rstrip(": "), "", d.verdict(), d.counts()]
    out += [line for line in [d.placement_line(), *d.lead] if line] + [""]
    if d.errors:
        out += ["Errors:", *(f"  {_flat(e)}" for e in d.errors), ""]
    if d.walkthrough:
        how = "by the model" if d.walk_by_model else "files by directory"
        width = min(40, max(len(w.label) for w in d.walkthrough))
        out += [f"Walkthrough ({how}):"]
        out += [f"  {w.label:<{width}}  {w.text}" for w in d.walkthrough] + [""]
    texts = line_texts(c)
    by_file = sorted(d.outside, key=lambda item: (item.path, item.line or 0))
    if by_file:
        out.append(f"Findings ({len(by_file)}), by file:")
    for path, items in groupby(by_file, key=lambda item: item.path):
        out.append(path)
        for item in items:
            out += _finding(item, texts, scrub)
        out.append("")
    if not d.outside and not d.total:
        out += ["No findings.", ""]
    if d.summary:
        out += ["Summary by the model:", *("  " + line for line in d.summary.splitlines()), ""]
    out += _details(d)
    return "\n".join(out) + "\n"


def _details(d: Digest) -> list[str]:
    out = ["Details:"]
    if d.skipped:
        out += ["  files skipped:", *(f"    {files}: {why}" for files, why in d.skipped)]
    if d.uncovered:
        out += ["  files no analyzer covered:", *(f"    {n}" for n in d.uncovered)]
    out += ["  " + ", ".join(f"{k} {v}" for k, v in d.facts)]
    if d.fallbacks:
        out += ["  fallbacks:", *(f"    {n}" for n in d.fallbacks)]
    if d.notes:
        out += ["  notes:", *(f"    {_flat(n)}" for n in d.notes)]
    if d.dismissed:
        out += ["", f"Dismissed by people ({len(d.dismissed)}):"]
        for x in d.dismissed:
            p, c = x.placement, x.placement.comment
            when = f", {x.at}" if x.at else ""
            why = f": {_flat(x.reason)}" if x.reason else ""
            out.append(
                f"  {x.kind} {p.path or c.path}:{p.line or c.line or '?'} [{c.severity}] "
                f"{_flat(c.body)} — by {x.by}{when}{why}"
            )
    return out
