"""Render a review: ``text`` (grouped by file, line shown), ``markdown``, ``json``, ``sarif``."""

from __future__ import annotations

import json
from typing import Any

from bot.errors import UsageError, redact
from bot.report.digest import Digest, build_digest, why_text
from bot.review.result import ReviewResult

__all__ = ["FORMATS", "digest_to_dict", "format_result", "result_to_dict", "summary_text"]

FORMATS = ("text", "markdown", "json", "sarif")
# GitHub takes a job summary of at most 1 MiB per step: at most 4 UTF-8 bytes a character
MARKDOWN_LIMIT = 262_000


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
        **digest_to_dict(build_digest(result, local=True)),
    }


def digest_to_dict(d: Digest) -> dict[str, Any]:
    """The summary's structure as data: the same fields every surface renders."""
    return {
        "verdict": {
            "text": d.verdict(),
            "blocking": bool(d.blocking),
            "fail_on": d.fail_on,
            "severities": d.severities,
            "origins": d.origins,
            "carried": d.carried,
            "dismissed": len(d.dismissed),
        },
        "walkthrough": {
            "by": "model" if d.walk_by_model else "directory",
            "entries": [{"label": w.label, "text": w.text} for w in d.walkthrough],
        },
        "not_placed": [
            {"path": item.path, "line": item.line, "why": item.why, "detail": why_text(item)}
            for item in d.outside
            if not item.placement.placed
        ],
        "details": {
            "skipped": [{"files": files, "why": why} for files, why in d.skipped],
            "uncovered": d.uncovered,
            "fallbacks": d.fallbacks,
            "notes": d.notes,
            "errors": d.errors,
            "run": dict(d.facts),
        },
        "dismissed": [
            {
                "path": x.placement.path or x.placement.comment.path,
                "line": x.placement.line or x.placement.comment.line,
                "severity": x.placement.comment.severity,
                "body": x.placement.comment.body,
                "kind": x.kind,
                "by": x.by,
                "at": x.at,
                "reason": x.reason,
            }
            for x in d.dismissed
        ],
    }


def _format_text(result: ReviewResult) -> str:
    from bot.report.text import render_text

    return render_text(result, build_digest(result, local=True))


def _format_markdown(result: ReviewResult) -> str:
    from bot.report.markdown import render_markdown

    c = result.change
    heading = f"## Nova review of `{c.id}`" + (f": {c.title}" if c.title else "")
    digest = build_digest(result, local=True)
    body = render_markdown(
        digest, clean=str, heading=heading, limit=MARKDOWN_LIMIT, where="the job summary"
    )
    return body + "\n"


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
