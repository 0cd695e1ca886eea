"""The digest as Remarkup, for the Phabricator / Phorge summary comment.

Remarkup has no collapsible block (Phorge's remarkup reference lists none; ``<details>`` is
not among its HTML-like tags, only ``<table>``). Its equivalent of a folded section is a
code block with ``lines=N``: Phorge shows N lines and scrolls the rest, and renders nothing
inside it (no links, no mentions, no embeds). The details (files skipped, uncovered, fallbacks,
notes) and the dismissed findings go in such blocks; the run's facts in a small table.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import groupby

from bot.report.digest import Digest, Listed, why_text
from bot.report.fit import Part, fit
from bot.report.markdown import WALK_OPEN
from bot.report.untrusted import cap

__all__ = ["render_remarkup"]

Clean = Callable[[str], str]
Link = Callable[[Listed], str | None]
_ROW_LIMIT = 1000
_FOLD_LINES = 8  # lines a folded block shows before it scrolls


def _flat(text: str) -> str:
    return " ".join(text.split())


def _mono(text: str, clean: Clean) -> str:
    return "`" + clean(text).replace("`", "'") + "`"


def _row(item: Listed, clean: Clean, link: Link) -> str:
    c = item.placement.comment
    where = f"{item.path}:{item.line or '?'}"
    url = link(item)
    loc = f"[[ {url} | {clean(where)} ]]" if url else _mono(where, clean)
    text = cap(_flat(clean(c.body)), _ROW_LIMIT, where="a summary row")
    why = f" //({_flat(clean(why_text(item)))})//" if item.why else ""
    return f"- {loc} ({c.severity}) {text}{why}"


def _folded(name: str, lines: list[str], clean: Clean) -> list[str]:
    """A code block that shows ``_FOLD_LINES`` lines and scrolls: Remarkup's fold."""
    body = [_flat(clean(line)).replace("```", "'''") or "." for line in lines]
    return [f"  lang=text, name={name}, lines={_FOLD_LINES}", *(f"  {line}" for line in body)]


def _details(d: Digest, clean: Clean) -> Part:
    facts = dict(d.facts)
    table = [
        "| " + " | ".join(facts) + " |",
        "| " + " | ".join("---" for _ in facts) + " |",
        "| " + " | ".join(clean(v).replace("|", "/") for v in facts.values()) + " |",
    ]
    lines = [f"skipped {files}: {why}" for files, why in d.skipped]
    lines += [f"not covered by an analyzer: {n}" for n in d.uncovered]
    lines += [f"fallback: {n}" for n in d.fallbacks]
    lines += [f"note: {n}" for n in d.notes]
    head = ["", "== Details =="]
    rows = ["", *table]
    if lines:
        rows += ["", *_folded("details", lines, clean)]
    return Part(4, head, rows, name="details")


def render_remarkup(
    d: Digest,
    *,
    clean: Clean,
    heading: str,
    link: Link,
    warnings: list[str],
    limit: int,
    where: str = "Phabricator",
) -> str:
    """The whole Remarkup body (no markers), at most ``limit`` characters."""
    top = [heading, "", f"**{clean(d.verdict())}**", "", d.counts()]
    top += [line for line in [d.placement_line()] if line]
    top += ["", *(f"//{clean(_flat(n))}//" for n in d.lead)] if d.lead else []
    parts = [Part(0, top)]
    problems = [*d.errors, *warnings]
    if problems:
        parts.append(Part(0, [""], [f"(WARNING) {clean(_flat(p))}" for p in problems]))
    if d.walkthrough:
        how = "by the model" if d.walk_by_model else "files by directory"
        rows = [f"- {_mono(w.label, clean)} — {clean(w.text)}" for w in d.walkthrough]
        if len(rows) > WALK_OPEN:  # the rest in a scrolling block: findings stay near the top
            more = [f"{w.label} — {w.text}" for w in d.walkthrough[WALK_OPEN - 1 :]]
            rows[WALK_OPEN - 1 :] = ["", *_folded("walkthrough", more, clean)]
        parts.append(Part(1, ["", f"== Walkthrough ({how}) ==", ""], rows, name="walkthrough"))
    if d.summary:  # a big change: one paragraph per batch, the first open
        first, _, later = clean(d.summary).partition("\n\n")
        rows = first.splitlines()
        if later.strip():
            lines = [ln for ln in later.splitlines() if ln.strip()]
            rows += ["", *_folded("summary", lines, clean)]
        parts.append(Part(3, ["", "**The model's summary**:", ""], rows))
    if d.outside:
        title = "Findings" if d.local else "Not posted inline"
        part = Part(2, ["", f"== {title} ({len(d.outside)}) =="], name="findings")
        by_file = sorted(d.outside, key=lambda item: (item.path, item.line or 0))
        for path, items in groupby(by_file, key=lambda item: item.path):
            group = list(items)
            part.rows += ["", f"**{_mono(path, clean)}** ({len(group)})"]
            part.rows += [_row(item, clean, link) for item in group]
        parts.append(part)
    parts.append(_details(d, clean))
    if d.dismissed:
        lines = [
            f"{x.kind} {x.placement.path or x.placement.comment.path}:"
            f"{x.placement.line or x.placement.comment.line or '?'} "
            f"[{x.placement.comment.severity}] {x.placement.comment.body} — by {x.by}"
            + (f", {x.at}" if x.at else "")
            + (f": {x.reason}" if x.reason else "")
            for x in d.dismissed
        ]
        head = ["", f"== Dismissed by people ({len(d.dismissed)}) ==", ""]
        parts.append(Part(5, head, _folded("dismissed", lines, clean), name="dismissed"))
    return fit(parts, limit, where=where)
