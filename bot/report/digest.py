"""The one structure every surface renders a review from (``Digest``), top to bottom:

1. the verdict in words ("Blocking: 2 errors (fail-on: error)" / "Not blocking"), with the
   counts by severity and by origin, and the dismissed findings;
2. the walkthrough: one line per changed file or group (the model's, from the review's own
   answers; without one, the files grouped by directory with their status and size);
3. the findings not posted inline, grouped by file, each with why;
4. the details a reader opens on demand: files skipped and why, files no analyzer covered,
   model, calls, tokens, time, fallbacks, other notes; and the dismissed findings.

Every finding of the run is counted once: inline (now or on an earlier run) or listed
(``outside``). The renderers (``markdown``, ``remarkup``, ``text``, ``formats``' JSON) only
lay this out; hosts say which findings went inline and why the others did not.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.change import SEVERITIES, FileDiff, Placement, Severity, severity_rank
from bot.review.result import Dismissal, ReviewResult, Walk

__all__ = [
    "Digest",
    "Listed",
    "build_digest",
    "counted",
    "plural",
    "why_not_placed",
    "why_text",
]

OVER_CAP = "over the cap"
REFUSED = "host refused"
OUTSIDE = "outside the diff"
AMBIGUOUS = "ambiguous"
_SKIPPED = re.compile(r"^skipped (.+?): (.+)$", re.DOTALL)
_UNCOVERED = "no analyzer configured"
_FAILED = "Failed: "  # a host write that failed in this publish (it says so, visibly)
# notes that change how the verdict reads: shown under it, never folded
_LEAD = (
    "was already reviewed",
    "incremental review:",
    "publishing was declined",
    "the change is empty",
    "no longer in this branch",
)
_FALLBACK = ("answered from then on", "answers were read from the text instead")
_NOUN = {"error": ("error", "errors"), "warning": ("warning", "warnings"), "info": ("info",) * 2}


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def counted(severity: Severity, n: int) -> str:
    """``2 errors``, ``1 warning``, ``3 info``."""
    one, many = _NOUN[severity]
    return plural(n, one, many)


def why_not_placed(reason: str) -> str:
    """The kind of reason the anchor gave: ambiguous or outside the diff."""
    return AMBIGUOUS if reason.startswith("ambiguous") or "matches several" in reason else OUTSIDE


def why_text(item: Listed) -> str:
    """``over the cap: 30 inline comments per run``; the detail alone when it says it all."""
    if not item.detail or item.detail == item.why:
        return item.why
    if item.detail.startswith(item.why):  # "ambiguous: the quoted code matches 3 lines"
        return item.detail
    return f"{item.why}: {item.detail}"


@dataclass(frozen=True, slots=True)
class Listed:
    """A finding not posted inline: ``why`` is its kind (ambiguous, outside the diff, over
    the cap, host refused…), ``detail`` the words behind it."""

    placement: Placement
    why: str
    detail: str = ""

    @property
    def path(self) -> str:
        return self.placement.path or self.placement.comment.path

    @property
    def line(self) -> int | None:
        return self.placement.line or self.placement.comment.line


@dataclass
class Digest:
    title: str
    fail_on: str
    severities: dict[Severity, int]  # this run's findings, and earlier ones still standing
    origins: dict[str, int]
    carried: int  # earlier reviews' findings still standing (counted in ``severities``)
    inline: int  # findings posted inline by this run
    inline_before: int  # findings already inline from an earlier run
    inline_noun: str
    outside: list[Listed]
    walkthrough: list[Walk]
    walk_by_model: bool
    summary: str  # the model's words
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (files, why)
    uncovered: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)
    lead: list[str] = field(default_factory=list)  # notes read with the verdict (not folded)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)  # model, calls, tokens, time
    dismissed: list[Dismissal] = field(default_factory=list)
    earlier: list[str] = field(default_factory=list)  # rows of earlier summaries still standing
    since: str = ""
    local: bool = False  # a terminal or file: every finding is listed, none posted inline

    @property
    def skipped_files(self) -> list[str]:
        return [path for files, _why in self.skipped for path in files.split(", ")]

    @property
    def total(self) -> int:
        return sum(self.severities.values())

    @property
    def findings(self) -> int:
        """This run's findings (the total less the earlier ones still standing)."""
        return self.total - self.carried

    @property
    def blocking(self) -> list[Severity]:
        if self.fail_on == "never":
            return []
        return [
            s
            for s in reversed(SEVERITIES)
            if self.severities[s] and severity_rank(s) >= severity_rank(self.fail_on)
        ]

    def verdict(self) -> str:
        """``Blocking: 2 errors (fail-on: error)`` or ``Not blocking (fail-on: error)``, then
        ``· 1 dismissed`` (people took it out of the gate), and ``Incomplete: …`` first when a
        service failed (the run exits 3)."""
        gate = f"(fail-on: {self.fail_on})"
        hits = self.blocking
        words = (
            f"Blocking: {', '.join(counted(s, self.severities[s]) for s in hits)} {gate}"
            if hits
            else f"Not blocking {gate}"
        )
        if self.dismissed:  # out of the gate, on the record
            words += f" · {len(self.dismissed)} dismissed"
        if self.errors:
            words = f"Incomplete: {plural(len(self.errors), 'failure')} (listed below); {words}"
        return words

    def counts(self) -> str:
        """``161 findings: 3 errors, 120 warnings, 38 info · model 150, ruff 11``."""
        parts = [
            f"{plural(self.total, 'finding')}: "
            + ", ".join(counted(s, self.severities[s]) for s in reversed(SEVERITIES))
        ]
        if self.origins:
            parts.append(", ".join(f"{o} {n}" for o, n in self.origins.items()))
        if self.carried:
            parts.append(f"{self.carried} from earlier reviews")
        return " · ".join(parts)

    def placement_line(self) -> str:
        """Where this run's findings are: ``30 as inline comments, 131 listed below`` ('' when
        this run has none)."""
        if not self.findings and not self.outside:
            return ""
        if self.local:
            on_line = sum(1 for item in self.outside if item.placement.placed)
            return (
                f"Of {plural(self.findings, 'finding')}: {on_line} on a line of the diff, "
                f"{len(self.outside) - on_line} not placed on a line."
            )
        parts = [f"{self.inline} as new {self.inline_noun}"]
        if self.inline_before:
            parts.append(f"{self.inline_before} already posted by an earlier run")
        parts.append(f"{len(self.outside)} listed below")
        return f"Of {plural(self.findings, 'finding')}: " + ", ".join(parts) + "."


def build_digest(
    result: ReviewResult,
    *,
    inline: int = 0,
    inline_before: int = 0,
    outside: Sequence[Listed] = (),
    fail_on: str | None = None,
    carried: Sequence[Severity] = (),
    earlier: Sequence[str] = (),
    notes: Sequence[str] | None = None,
    inline_noun: str = "inline comments",
    local: bool = False,
    unplaced: Sequence[Placement] | None = None,
) -> Digest:
    """The digest of ``result``. ``inline``/``inline_before`` count the placed findings on
    the host's lines; ``outside`` the placed findings it did not post, with why. The findings
    not placed on a line are listed (with the anchor's reason): all, or ``unplaced`` (those
    not listed by an earlier run). ``local`` (a terminal, a file): every finding is listed,
    those on a line without a why."""
    listed = [
        Listed(p, why_not_placed(p.reason or ""), p.reason or "")
        for p in (result.unplaced if unplaced is None else unplaced)
    ]
    if local:
        outside = [Listed(p, "") for p in result.placed]
    standing = list(carried)
    if result.prior is not None and not result.placements:  # a skipped re-run
        standing += result.prior.severities
    severities = [p.comment.severity for p in result.placements] + standing
    origins = Counter(_origin(p.comment.origin) for p in result.placements)
    notes = result.notes if notes is None else notes
    failed = [n.removeprefix(_FAILED) for n in notes if n.startswith(_FAILED)]
    skipped, uncovered, fallbacks, other = _sort_notes(
        [n for n in notes if not n.startswith(_FAILED)]
    )
    digest = Digest(
        title=result.change.title,
        fail_on=fail_on or result.fail_on,
        severities={s: severities.count(s) for s in SEVERITIES},
        origins=dict(origins.most_common()),
        carried=len(standing),
        inline=inline,
        inline_before=inline_before,
        inline_noun=inline_noun,
        outside=[*outside, *listed],
        walkthrough=list(result.walkthrough) or directory_walk(result.change.files),
        walk_by_model=bool(result.walkthrough),
        summary=result.summary.strip(),
        errors=list(dict.fromkeys([*result.errors, *failed])),
        facts=_facts(result),
        dismissed=list(result.dismissed),
        earlier=list(earlier),
        since=(result.since or "")[:7],
        skipped=skipped,
        uncovered=uncovered,
        fallbacks=fallbacks,
        lead=[n for n in other if any(word in n for word in _LEAD)],
        notes=[n for n in other if not any(word in n for word in _LEAD)],
        local=local,
    )
    return digest


def _origin(origin: str) -> str:
    return "model" if origin == "llm" else origin


def _sort_notes(
    notes: Sequence[str],
) -> tuple[list[tuple[str, str]], list[str], list[str], list[str]]:
    """(files skipped and why, uncovered files, fallbacks, other notes)."""
    skipped: list[tuple[str, str]] = []
    uncovered: list[str] = []
    fallbacks: list[str] = []
    other: list[str] = []
    for note in notes:
        m = _SKIPPED.match(note)
        if m:
            skipped.append((m.group(1), m.group(2)))
        elif _UNCOVERED in note:
            uncovered.append(note)
        elif any(word in note for word in _FALLBACK):
            fallbacks.append(note)
        else:
            other.append(note)
    return skipped, uncovered, fallbacks, other


def _facts(result: ReviewResult) -> list[tuple[str, str]]:
    s = result.stats
    out: list[tuple[str, str]] = []
    if result.model or s.llm_calls:
        out.append(("model", result.model or "?"))
        out.append(("calls", str(s.llm_calls)))
        out.append(("tokens", f"{s.prompt_tokens:,} in, {s.completion_tokens:,} out"))
    else:
        out.append(("model", "none (static analyzers only)"))
    out.append(("time", f"{s.seconds:.1f}s"))
    return out


WALK_GROUPS = 12  # directory groups before they are merged into their parents


def _group(files: Sequence[FileDiff], depth: int | None) -> dict[str, list[FileDiff]]:
    groups: dict[str, list[FileDiff]] = {}
    for f in files:
        folder = posixpath.dirname(f.path)
        if depth is not None:
            folder = "/".join(folder.split("/")[:depth])
        groups.setdefault(folder, []).append(f)
    return groups


def directory_walk(files: Sequence[FileDiff]) -> list[Walk]:
    """Without a model: the files grouped by directory, with their status and size (by
    their top directories when there are more than ``WALK_GROUPS`` directories)."""
    groups = _group(files, None)
    for depth in (3, 2, 1):
        if len(groups) <= WALK_GROUPS:
            break
        groups = _group(files, depth)
    out = []
    for folder in sorted(groups):
        members = groups[folder]
        status = Counter(f.status for f in members)
        added = sum(f.added_count for f in members)
        removed = sum(f.removed_count for f in members)
        kinds = ", ".join(f"{n} {kind}" for kind, n in status.most_common())
        label = f"{folder}/" if folder else "(top level)"
        size = f"+{added} −{removed}"
        if len(members) == 1:
            text = f"{members[0].status}, {size}"
            label = members[0].path
        else:
            text = f"{plural(len(members), 'file')}: {kinds}; {size}"
        out.append(Walk(label, text))
    return out
