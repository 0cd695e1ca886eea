"""The change under review and the findings on it: plain data every stage passes on.

Files, hunks and lines with their old and new numbers, a finding (``Comment``) as an agent
or analyzer proposes it, and where it was placed. No I/O, no settings.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal, NamedTuple

LineKind = Literal["added", "removed", "context"]
FileStatus = Literal["added", "deleted", "modified", "renamed", "copied"]
Severity = Literal["info", "warning", "error"]

SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")
_SEVERITY_ALIASES = {
    "critical": "error",
    "blocker": "error",
    "high": "error",
    "bug": "error",
    "major": "error",
    "medium": "warning",
    "warn": "warning",
    "minor": "info",
    "low": "info",
    "nit": "info",
    "suggestion": "info",
    "style": "info",
    "note": "info",
}


def normalize_severity(value: object) -> Severity:
    text = str(value or "").strip().lower()
    for severity in SEVERITIES:
        if text == severity:
            return severity
    alias = _SEVERITY_ALIASES.get(text, "warning")
    return "error" if alias == "error" else "info" if alias == "info" else "warning"


def severity_rank(value: str) -> int:
    return SEVERITIES.index(normalize_severity(value))


class Line(NamedTuple):
    """One line of a hunk. ``old_no`` is None for added lines, ``new_no`` for removed ones."""

    kind: LineKind
    old_no: int | None
    new_no: int | None
    text: str
    no_newline: bool = False  # followed by "\\ No newline at end of file"


@dataclass(frozen=True, slots=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    header: str
    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class FileDiff:
    old_path: str | None  # None for an added file
    new_path: str | None  # None for a deleted file
    status: FileStatus
    is_binary: bool = False
    hunks: tuple[Hunk, ...] = ()
    old_mode: str | None = None
    new_mode: str | None = None
    similarity: int | None = None

    @property
    def path(self) -> str:
        """The path a reviewer sees: the new path, or the old one for a deleted file."""
        return self.new_path or self.old_path or ""

    @property
    def added_count(self) -> int:
        return sum(1 for h in self.hunks for ln in h.lines if ln.kind == "added")

    @property
    def removed_count(self) -> int:
        return sum(1 for h in self.hunks for ln in h.lines if ln.kind == "removed")


@dataclass(frozen=True, slots=True)
class Change:
    id: str
    source: str
    title: str = ""
    description: str = ""
    author: str = ""
    base_ref: str | None = None
    head_ref: str | None = None
    url: str | None = None
    files: tuple[FileDiff, ...] = ()
    raw_diff: str = ""
    notes: tuple[str, ...] = ()  # what the source could not fetch, and why

    def summary_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "source": self.source,
            "title": self.title,
            "author": self.author,
            "base_ref": self.base_ref,
            "head_ref": self.head_ref,
            "url": self.url,
            "files": len(self.files),
        }


@dataclass(frozen=True, slots=True)
class Comment:
    """A finding as an agent or analyzer proposes it; ``line`` is meant as a NEW line number."""

    path: str
    line: int | None
    body: str
    end_line: int | None = None
    severity: Severity = "warning"
    suggestion: str | None = None
    code: str | None = None  # exact text of the line meant, used to anchor
    origin: str = "llm"
    rule: str | None = None
    url: str | None = None  # the rule's documentation

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Placement:
    """A comment placed on a commentable NEW line, or moved to the summary with ``reason``."""

    comment: Comment
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    suggestion: str | None = None
    how: str = ""  # exact | code | translated | number — how the line was found
    reason: str | None = None  # set when the comment could not be placed

    @property
    def placed(self) -> bool:
        return self.reason is None and self.line is not None
