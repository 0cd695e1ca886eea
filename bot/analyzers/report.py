"""What a linter's results file says, before its paths are made repository-relative.

Every format parser (``bot.analyzers.formats``) turns bytes into ``Report`` objects: one per
tool run the file holds. Paths stay as the tool wrote them (absolute, ``file://`` URIs,
relative to where the tool ran); ``bot.analyzers.paths`` maps them onto the change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.change import Severity

__all__ = ["Edit", "Finding", "Report", "ResultsError", "apply_fix", "clip"]

MAX_MESSAGE = 2000  # characters of one finding's message kept (a comment body, not a log)


class ResultsError(ValueError):
    """A results file that cannot be read as its format: one line saying why."""


@dataclass(frozen=True, slots=True)
class Edit:
    """A replacement inside one line: columns are 1-based, ``end`` exclusive."""

    line: int
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Finding:
    path: str  # as the tool wrote it
    line: int | None  # 1-based; None: the finding is about the whole file
    message: str
    severity: Severity = "warning"
    end_line: int | None = None
    rule: str | None = None
    url: str | None = None  # the rule's documentation
    fix: Edit | None = None  # the tool's fix, when it changes this one line only


@dataclass(slots=True)
class Report:
    tool: str  # the tool the file names ("" when it names none)
    findings: list[Finding] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)  # every file it names, clean ones included


def clip(text: object, limit: int = MAX_MESSAGE) -> str:
    """A message from a results file as one bounded string."""
    value = text if isinstance(text, str) else "" if text is None else str(text)
    value = value.strip()
    return value if len(value) <= limit else value[: limit - 1] + "…"


def positive(value: object) -> int | None:
    """A line number from untrusted JSON: a positive int, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 0 < value < 10**9:
        return value
    if isinstance(value, str) and value.isdigit() and 0 < int(value) < 10**9:
        return int(value)
    return None


def apply_fix(text: str, fix: Edit) -> str | None:
    """``text`` (the line) with ``fix`` applied; None when the columns do not fit it. Only
    ASCII lines: tools count columns in bytes (reviewdog) or UTF-16 units (SARIF)."""
    if (
        not text.isascii()
        or not 1 <= fix.start <= fix.end <= len(text) + 1
        or "\n" in fix.text
        or "\r" in fix.text
    ):
        return None
    return text[: fix.start - 1] + fix.text + text[fix.end - 1 :]
