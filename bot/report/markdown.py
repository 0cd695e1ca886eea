"""The digest as Markdown: the GitHub and GitLab summary comments, the Actions job summary
and ``-o markdown``. Verdict and counts first, then the walkthrough, the findings not posted
inline (by file, each with why), and ``<details>`` a reader opens: files skipped, files no
analyzer covered, the run (model, calls, tokens, time), fallbacks, notes, dismissed findings.

Every untrusted text (the model's, paths, people's reasons) goes through ``clean`` first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from itertools import groupby

from bot.report.digest import Digest, Listed, plural, why_text
from bot.report.fit import Part, fit
from bot.report.untrusted import cap, rule_label
from bot.review.result import Dismissal

__all__ = ["ICON", "LISTED_HEADING", "render_markdown"]

ICON = {"error": "🔴", "warning": "🟠", "info": "🔵"}
LISTED_HEADING = "### Not posted inline"
_ROW_LIMIT = 1000  # one finding's text in a summary row (the inline comment has it whole)
WALK_OPEN = 20  # walkthrough lines shown open; more are folded

Clean = Callable[[str], str]
_FOLD_TAG = re.compile(r"<(/?\s*(?:details|summary))", re.IGNORECASE)


def _fold_safe(clean: Clean, text: str) -> str:
    return _FOLD_TAG.sub(r"&lt;\1", clean(text))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _code(text: str, clean: Clean) -> str:
    """``text`` as inline code: cleaned, and no backtick to end the span early."""
    return "`" + clean(text).replace("`", "'") + "`"


def finding_row(item: Listed, clean: Clean) -> str:
    """``- `path:line` 🟠 **warning** (rule) text — _why: detail_``."""
    c = item.placement.comment
    where = _code(f"{item.path}:{item.line or '?'}", clean)
    text = cap(_flat(clean(c.body)), _ROW_LIMIT, where="a summary row")
    row = f"- {where} {ICON[c.severity]} **{c.severity}**{rule_label(c.rule, c.url, clean)} {text}"
    return f"{row} — _{_flat(clean(why_text(item)))}_" if item.why else row


def dismissal_row(d: Dismissal, clean: Clean) -> str:
    """``- **dismissed** `path:line` **warning** text — dismissed by @alice, 2026-…: reason``.
    Rows do not start with ``- ``` ``: they are not findings a later run carries
    (``earlier.py``)."""
    p, c = d.placement, d.placement.comment
    where = _code(f"{p.path or c.path}:{p.line or c.line or '?'}", clean)
    # a login in a code span: the summary names who decided without mentioning them again
    login = clean(d.by.lstrip("@")).replace("`", "'")
    who = clean(d.by) if d.kind == "ignored" else f"`@{login}`"
    when = f", {clean(d.at)}" if d.at else ""
    why = f": {_flat(clean(d.reason))}" if d.reason else ""
    text = cap(_flat(clean(c.body)), _ROW_LIMIT, where="a summary row")
    return f"- **{d.kind}** {where} **{c.severity}** {text} — {d.kind} by {who}{when}{why}"


def _listed(d: Digest, clean: Clean) -> Part:
    heading = "### Findings" if d.local else LISTED_HEADING
    part = Part(2, ["", f"{heading} ({len(d.outside)})"], name="findings not inline")
    by_file = sorted(d.outside, key=lambda item: (item.path, item.line or 0))
    for path, items in groupby(by_file, key=lambda item: item.path):
        rows = list(items)
        part.rows += ["", f"**{_code(path, clean)}** ({len(rows)})"]
        part.rows += [finding_row(item, clean) for item in rows]
    return part


def _details(d: Digest, clean: Clean) -> Part:
    facts = dict(d.facts)
    gist = [plural(len(d.skipped_files), "file") + " skipped"] if d.skipped else []
    gist += ["uncovered files"] if d.uncovered else []
    gist += [facts.get("model", ""), plural(int(facts.get("calls", "0")), "call")]
    gist += [f"{len(d.fallbacks)} fallback(s)"] if d.fallbacks else []
    gist += [facts.get("time", "")]
    rows = [""]
    if d.skipped:
        rows += ["**Files skipped**", ""]
        rows += [f"- {clean(files)}: {clean(why)}" for files, why in d.skipped]
        rows += [""]
    if d.uncovered:
        rows += ["**Files no analyzer covered**", ""]
        rows += [f"- {clean(n)}" for n in d.uncovered] + [""]
    rows += ["**Run**", "", "| " + " | ".join(facts) + " |", "|" + "---|" * len(facts)]
    rows += ["| " + " | ".join(clean(v) for v in facts.values()) + " |", ""]
    if d.fallbacks:
        rows += ["**Fallbacks**", ""] + [f"- {clean(n)}" for n in d.fallbacks] + [""]
    if d.notes:
        rows += ["**Notes**", ""] + [f"- {clean(_flat(n))}" for n in d.notes] + [""]
    summary = " · ".join(g for g in gist if g)
    return Part(4, ["", f"<details><summary>Details: {summary}</summary>"], rows, ["</details>"])


def _model_summary(summary: str, clean: Clean) -> Part:
    """The model's words: one paragraph per batch of a big change, the first open."""
    first, _, rest = clean(summary).partition("\n\n")
    rows = first.splitlines()
    if rest.strip():
        more = rest.count("\n\n") + 1
        rows += ["", f"<details><summary>{plural(more, 'more part')}</summary>", ""]
        rows += [*rest.splitlines(), "", "</details>"]
    return Part(3, ["", "**The model's summary**", ""], rows)


def _dismissed(d: Digest, clean: Clean) -> Part:
    head = ["", f"<details><summary>Dismissed by people ({len(d.dismissed)})</summary>", ""]
    rows = [dismissal_row(x, clean) for x in d.dismissed]
    return Part(5, head, rows, ["", "</details>"], name="dismissed findings")


def render_markdown(
    d: Digest, *, clean: Clean, heading: str, limit: int = 1_000_000, where: str = "the host"
) -> str:
    """The whole Markdown body (no markers), at most ``limit`` characters. Untrusted text
    cannot open or close a fold (``<details>``): a model's answer must not hide findings."""
    clean = partial(_fold_safe, clean)
    top = [heading, "", f"**{clean(d.verdict())}**", "", d.counts() + "  "]
    top += [line for line in [d.placement_line()] if line]
    top += ["", *(f"_{clean(_flat(n))}_" for n in d.lead)] if d.lead else []
    parts = [Part(0, top)]
    if d.errors:
        parts.append(Part(0, ["", "**Errors**", ""], [f"- {clean(_flat(e))}" for e in d.errors]))
    if d.walkthrough:
        how = "by the model" if d.walk_by_model else "files by directory"
        rows = [f"- {_code(w.label, clean)} — {clean(w.text)}" for w in d.walkthrough]
        if len(rows) > WALK_OPEN:  # the rest folded: the findings stay near the top
            more = len(rows) - WALK_OPEN + 1
            rows[WALK_OPEN - 1 :] = [
                "",
                f"<details><summary>{plural(more, 'more file')}</summary>",
                "",
                *rows[WALK_OPEN - 1 :],
                "",
                "</details>",
            ]
        parts.append(Part(1, ["", f"### Walkthrough ({how})", ""], rows, name="walkthrough"))
    if d.summary:
        parts.append(_model_summary(d.summary, clean))
    if d.outside:
        parts.append(_listed(d, clean))
    shown = {r for p in parts for r in p.rows}
    standing = [row for row in d.earlier if row not in shown]
    if standing:
        head = ["", f"### Earlier findings (reviews before `{d.since}`)", ""]
        parts.append(Part(3, head, standing, name="earlier findings"))
    parts.append(_details(d, clean))
    if d.dismissed:
        parts.append(_dismissed(d, clean))
    return fit(parts, limit, where=where)
