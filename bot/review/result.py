"""A review's result: what was placed, what each host posted, the verdict a re-run on the
same head exits by, and the exit code (plain data, no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.change import SEVERITIES, Change, Placement, Severity, severity_rank
from bot.llm.usage import Stats

__all__ = [
    "Dismissal",
    "PriorReview",
    "PublishReport",
    "ReviewResult",
    "Walk",
    "exit_code_for",
    "parse_verdict",
    "verdict_marker",
]


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
class Dismissal:
    """A finding people took out of the gate, on the record: ``dismissed`` by a reply in its
    thread (``by`` is the host login), or ``ignored`` by an ``[[ignore]]`` rule of the base
    revision's ``.nova.toml`` (``by`` is ``.nova.toml``). It is listed in the summary, never
    posted again, and does not count for ``--fail-on``."""

    placement: Placement
    kind: str  # dismissed | ignored
    by: str
    reason: str = ""
    at: str = ""  # ISO 8601 time of the decision, when the host gives one
    fingerprint: str = ""


@dataclass(frozen=True, slots=True)
class Walk:
    """One line of the walkthrough: a changed file or group of files (``label``) and what
    changed there (the model's words, or the status and size of the change)."""

    label: str
    text: str


@dataclass(frozen=True, slots=True)
class PriorReview:
    """Nova's own earlier review of a head, read back from its summary on the host."""

    head: str
    severities: tuple[Severity, ...] = ()  # one per finding, placed or not
    errors: int = 0  # services that failed in that run (then it is not a finished review)
    heard: int = 0  # the newest dismissal in the conversation that review took in

    @property
    def complete(self) -> bool:
        """Every service answered in that run: the review is on the host as it should be.
        A degraded one (the model, a host write failed) is done again by the next run,
        which posts what is missing and nothing twice."""
        return self.errors == 0

    def reaches(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        return any(severity_rank(s) >= severity_rank(fail_on) for s in self.severities)


def verdict_marker(
    result: ReviewResult, carried: tuple[Severity, ...] = (), failed: int = 0
) -> str:
    """``error=1,warning=0,info=2,failed=0``: what a re-run on the same head exits by.
    ``failed`` counts the services that failed in this run: the result's errors and those
    of the publish that writes the marker (then the review is degraded, not finished)."""
    counts = {s: 0 for s in SEVERITIES}
    for severity in [*(p.comment.severity for p in result.placements), *carried]:
        counts[severity] += 1
    heard = [f"heard={result.heard}"] if result.heard else []
    return ",".join(
        [
            *(f"{s}={counts[s]}" for s in reversed(SEVERITIES)),
            f"failed={len(result.errors) + failed}",
            *heard,
        ]
    )


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
    return PriorReview(
        head=head,
        severities=severities,
        errors=counts.get("failed", 0),
        heard=counts.get("heard", 0),
    )


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
    # findings taken out of the gate by people (replies, [[ignore]] rules): listed, not counted
    dismissed: list[Dismissal] = field(default_factory=list)
    heard: int = 0  # the newest dismissal (host order) this review took in (bot.conversation)
    walkthrough: list[Walk] = field(default_factory=list)  # the model's, one line a file
    fail_on: str = "error"  # the gate the verdict is read against (exit_code_for's)
    model: str = ""  # the model that reviewed, when one did

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
