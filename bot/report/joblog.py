"""Findings as plain job-log lines: where a host that cannot post (a read-only token) puts
every finding, so none is lost. The job log renders ANSI escapes and CI section markers, so
the model's text is kept to one plain line."""

from __future__ import annotations

import re

from bot.report.untrusted import clean_text
from bot.review.result import ReviewResult

__all__ = ["job_log_lines", "plain_line"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")


def plain_line(text: str) -> str:
    return _CONTROL.sub(" ", clean_text(text)).replace("\n", " ").strip()


def job_log_lines(result: ReviewResult) -> list[str]:
    """One line per finding, placed or not: ``nova: path:line: severity: text``."""
    out = []
    for p in result.placements:
        path = plain_line(p.path or p.comment.path)
        line = p.line if p.placed else p.comment.line
        where = f"{path}:{line}" if line else path
        tail = "" if p.placed else f" (not placed on a line: {plain_line(p.reason or '')})"
        out.append(f"nova: {where}: {p.comment.severity}: {plain_line(p.comment.body)}{tail}")
    return out
