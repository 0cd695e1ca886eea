"""Render a review: ``text`` (grouped by file, line shown), ``markdown``, ``json``, ``sarif``."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from bot.change import Placement
from bot.errors import UsageError, redact
from bot.report.fingerprint import line_texts
from bot.review.result import ReviewResult

__all__ = ["FORMATS", "format_result", "result_to_dict", "summary_text"]

FORMATS = ("text", "markdown", "json", "sarif")


def summary_text(result: ReviewResult) -> str:
    """The summary: the model's words, then notes and errors, so nothing is lost."""
    parts = [result.summary.strip()] if result.summary.strip() else []
    parts += [f"Note: {n}" for n in result.notes]
    parts += [f"Error: {e}" for e in result.errors]
    return "\n".join(parts)


def result_to_dict(result: ReviewResult) -> dict[str, Any]:
    return {
        "change": result.change.summary_dict(),
        "summary": summary_text(result),
        "comments": [
            {
                "path": p.path,
                "line": p.line,
                "end_line": p.end_line,
                "severity": p.comment.severity,
                "body": p.comment.body,
                "suggestion": p.suggestion,
                "origin": p.comment.origin,
                "rule": p.comment.rule,
                "url": p.comment.url,
            }
            for p in result.placed
        ],
        "unplaced": [
            {
                "path": p.path or p.comment.path,
                "line": p.comment.line,
                "body": p.comment.body,
                "reason": p.reason,
            }
            for p in result.unplaced
        ],
        "stats": {**result.stats.token_usage(), "seconds": result.stats.seconds},
    }


def _format_text(result: ReviewResult) -> str:
    from bot.analyzers.secrets import Scrubber

    scrub = Scrubber().scrub  # a committed key's line is shown, never the key (CI logs)
    texts = line_texts(result.change)
    c = result.change
    out = [f"Review of {c.id}: {c.title}".rstrip(": "), ""]
    by_file: dict[str, list[Placement]] = defaultdict(list)
    for p in result.placed:
        by_file[p.path or ""].append(p)
    for path in sorted(by_file):
        out.append(path)
        for p in sorted(by_file[path], key=lambda p: p.line or 0):
            span = f"{p.line}-{p.end_line}" if p.end_line else f"{p.line}"
            out.append(f"  {span:>7} | {scrub(texts.get((path, p.line or 0), '')).strip()[:100]}")
            out.append(f"          [{p.comment.severity}] {p.comment.body} ({p.comment.origin})")
            if p.suggestion is not None:
                out.append(f"          suggestion: {p.suggestion.strip() or '(delete line)'}")
        out.append("")
    if result.unplaced:
        out.append("Not placed on a line:")
        for p in result.unplaced:
            where = f"{p.path or p.comment.path}:{p.comment.line or '?'}"
            out.append(f"  {where} [{p.comment.severity}] {p.comment.body}")
            out.append(f"      why not placed: {p.reason}")
        out.append("")
    if not result.placements:
        out.append("No findings.")
        out.append("")
    summary = summary_text(result)
    if summary:
        out += ["Summary:", *("  " + line for line in summary.splitlines()), ""]
    s = result.stats
    out.append(
        f"{len(result.placed)} placed, {len(result.unplaced)} unplaced; "
        f"{s.llm_calls} LLM calls, {s.prompt_tokens}+{s.completion_tokens} tokens, "
        f"{s.seconds:.1f}s"
    )
    return "\n".join(out) + "\n"


def _format_markdown(result: ReviewResult) -> str:
    c = result.change
    out = [f"## Nova review of `{c.id}`" + (f": {c.title}" if c.title else ""), ""]
    summary = summary_text(result)
    if summary:
        out += [summary, ""]
    if result.placed:
        out += ["| File | Line | Severity | Finding |", "|---|---|---|---|"]
        for p in result.placed:
            body = p.comment.body.replace("|", "\\|").replace("\n", " ")
            out.append(f"| `{p.path}` | {p.line} | {p.comment.severity} | {body} |")
        out.append("")
    if result.unplaced:
        out.append("**Not placed on a line**")
        out.append("")
        for p in result.unplaced:
            out.append(
                f"- `{p.path or p.comment.path}`:{p.comment.line or '?'} — "
                f"{p.comment.body} _(not placed: {p.reason})_"
            )
        out.append("")
    if not result.placements:
        out += ["No findings.", ""]
    return "\n".join(out)


def _format_sarif(result: ReviewResult) -> str:
    from bot.report.sarif import to_sarif

    return json.dumps(to_sarif(result), indent=2, ensure_ascii=False) + "\n"


def format_result(result: ReviewResult, fmt: str) -> str:
    if fmt == "text":
        text = _format_text(result)
    elif fmt == "markdown":
        text = _format_markdown(result)
    elif fmt == "json":
        text = json.dumps(result_to_dict(result), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "sarif":
        text = _format_sarif(result)
    else:
        raise UsageError(f"unknown output format {fmt!r}; use one of {', '.join(FORMATS)}")
    return redact(text)
