"""Plain data passed between the stages. No I/O, no settings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal, NamedTuple

LineKind = Literal["added", "removed", "context"]
FileStatus = Literal["added", "deleted", "modified", "renamed", "copied"]
Severity = Literal["info", "warning", "error"]

SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")
_SEVERITY_ALIASES = {
    "critical": "error", "blocker": "error", "high": "error", "bug": "error", "major": "error",
    "medium": "warning", "warn": "warning", "minor": "info", "low": "info", "nit": "info",
    "suggestion": "info", "style": "info", "note": "info",
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
            "id": self.id, "source": self.source, "title": self.title, "author": self.author,
            "base_ref": self.base_ref, "head_ref": self.head_ref, "url": self.url,
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


@dataclass(slots=True)
class Stats:
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def add_usage(self, prompt: int, completion: int) -> None:
        self.llm_calls += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion


@dataclass(frozen=True, slots=True)
class PublishReport:
    """What one host publisher posted (publishers return it; they never mutate the result)."""

    host: str
    inline_posted: int = 0
    summary_posted: bool = False
    notes: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    # findings of earlier reviews that still stand (an incremental review of new pushes
    # did not see them again): they still count for --fail-on
    carried: tuple[Severity, ...] = ()


@dataclass(frozen=True, slots=True)
class PriorReview:
    """Nova's own earlier review of a head, read back from its summary on the host."""

    head: str
    severities: tuple[Severity, ...] = ()  # one per finding, placed or not
    errors: int = 0  # services that failed in that run (then it is not a finished review)

    def reaches(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        return any(severity_rank(s) >= severity_rank(fail_on) for s in self.severities)


def verdict_marker(result: ReviewResult, carried: tuple[Severity, ...] = ()) -> str:
    """``error=1,warning=0,info=2,failed=0``: what a re-run on the same head exits by."""
    counts = {s: 0 for s in SEVERITIES}
    for severity in [*(p.comment.severity for p in result.placements), *carried]:
        counts[severity] += 1
    return ",".join([*(f"{s}={counts[s]}" for s in reversed(SEVERITIES)),
                     f"failed={len(result.errors)}"])


def parse_verdict(head: str, text: str) -> PriorReview | None:
    """The inverse of ``verdict_marker``; None when the text is not one."""
    counts: dict[str, int] = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        if not value.isdigit():
            return None
        counts[key.strip()] = int(value)
    if not set(SEVERITIES) <= counts.keys():
        return None
    severities = tuple(s for s in SEVERITIES for _ in range(min(counts[s], 10_000)))
    return PriorReview(head=head, severities=severities, errors=counts.get("failed", 0))


@dataclass(slots=True)
class ReviewResult:
    change: Change
    summary: str
    placements: list[Placement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # skipped files, analyzer/LLM status
    errors: list[str] = field(default_factory=list)  # batches that failed
    stats: Stats = field(default_factory=Stats)
    reports: list[PublishReport] = field(default_factory=list)  # what each host posted
    prior: PriorReview | None = None  # set when this head was reviewed before (skipped run)
    since: str | None = None  # incremental review: only what changed after this head

    @property
    def carried(self) -> tuple[Severity, ...]:
        return tuple(s for r in self.reports for s in r.carried)

    @property
    def inline_posted(self) -> int:
        return sum(r.inline_posted for r in self.reports)

    @property
    def placed(self) -> list[Placement]:
        return [p for p in self.placements if p.placed]

    @property
    def unplaced(self) -> list[Placement]:
        return [p for p in self.placements if not p.placed]


def exit_code_for(result: ReviewResult, fail_on: str) -> int:
    """3 when a service failed, 1 when a finding reaches ``fail_on``, else 0. A skipped re-run
    on a reviewed head exits by the verdict its first review recorded."""
    if result.errors:
        return 3
    if result.prior is not None:
        return 1 if result.prior.reaches(fail_on) else 0
    if fail_on != "never":
        threshold = severity_rank(fail_on)
        found = [*(p.comment.severity for p in result.placements), *result.carried]
        if any(severity_rank(s) >= threshold for s in found):
            return 1
    return 0
