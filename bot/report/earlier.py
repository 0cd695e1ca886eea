"""Earlier reviews' findings after an incremental review, for the hosts that keep them.

An incremental review shows the model only what the new pushes changed, so it does not find
the earlier findings again. They still stand: listed in the summary, and counted for
``--fail-on`` (the verdict a re-run exits by) until a push changes their line (the host marks
the comment ``OUTDATED``) or this run finds them again (then they count as this run's).
Every input is Nova's own text, read back from the host (only its own comments count).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from bot.change import SEVERITIES, Severity, normalize_severity
from bot.review.result import PriorReview

__all__ = ["OUTDATED", "carried", "earlier_rows", "severities"]

OUTDATED = "> **Outdated**: Nova no longer reports this"
_LABEL = re.compile(r"\*\*(error|warning|info)\*\*")
_SECTIONS = (
    "### Not posted inline",  # and the headings of summaries before it:
    "### Findings not posted inline",
    "### Not placed on a line",
    "### Earlier findings",
)


def severities(text: str) -> list[Severity]:
    """The severity of each finding in one of Nova's comment bodies."""
    return [normalize_severity(m) for m in _LABEL.findall(text)]


def carried(
    earlier: PriorReview | None, outdated: Iterable[str], found_again: Iterable[str]
) -> tuple[Severity, ...]:
    """The earlier verdict's findings that still stand: less those in the comments marked
    outdated now and those in the comments of findings this run found again."""
    if earlier is None:
        return ()
    counts = Counter(earlier.severities)
    counts.subtract(s for body in outdated for s in severities(body))
    counts.subtract(s for body in found_again for s in severities(body))
    return tuple(s for s in SEVERITIES for _ in range(max(0, counts[s])))


def earlier_rows(body: str) -> list[str]:
    """The finding rows of Nova's previous summary (its own text), to keep them listed."""
    rows: list[str] = []
    inside = False
    for line in body.splitlines():
        if line.startswith("### "):
            inside = line.startswith(_SECTIONS)
        elif inside and line.startswith("- `"):
            rows.append(line)
    return list(dict.fromkeys(rows))
