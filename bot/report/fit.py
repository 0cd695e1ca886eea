"""A body within a host's limit, the most important parts kept when it is cut.

A rendered body is a list of ``Part``s in reading order, each with a rank (0 first kept).
When the whole does not fit, parts are taken in rank order, each whole if it fits, else
cut row by row with a line saying how many rows were left out; parts that do not fit at all
are named in one closing line. The verdict and counts are rank 0: they always stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.report.untrusted import cap

__all__ = ["Part", "fit"]


@dataclass
class Part:
    """``head`` and ``tail`` stay together (a heading, ``<details>`` … ``</details>``);
    ``rows`` may be cut from the end."""

    rank: int
    head: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    name: str = ""

    def lines(self) -> list[str]:
        return [*self.head, *self.rows, *self.tail]


def _size(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def fit(parts: Sequence[Part], limit: int, *, where: str, more: str = "- … {n} more") -> str:
    """The parts joined, at most ``limit`` characters. ``more`` words the cut rows' line."""
    whole = "\n".join(line for p in parts for line in p.lines())
    if len(whole) <= limit:
        return whole
    note_room = 200  # the closing line naming what did not fit
    budget = limit - note_room
    kept: dict[int, list[str]] = {}
    dropped: list[str] = []
    for i in sorted(range(len(parts)), key=lambda i: parts[i].rank):
        p = parts[i]
        size = _size(p.lines())
        if size <= budget:
            kept[i] = p.lines()
            budget -= size
            continue
        frame = _size(p.head) + _size(p.tail) + 80
        if not p.rows or frame > budget:
            if p.name:
                dropped.append(p.name)
            continue
        rows: list[str] = []
        room = budget - frame
        for row in p.rows:
            if len(row) + 1 > room:
                if room > 200:  # one long row: its start, saying it was cut
                    rows.append(cap(row, room - 1, where=where).replace("\n\n", " "))
                break
            rows.append(row)
            room -= len(row) + 1
        if len(rows) < len(p.rows):
            rows.append(more.format(n=len(p.rows) - len(rows)) + f" (cut at {where}'s limit)")
        unclosed = sum(r.count("<details>") - r.count("</details>") for r in rows)
        rows += ["</details>"] * max(0, unclosed)  # a cut inside a fold still closes it
        kept[i] = [*p.head, *rows, *p.tail]
        budget -= _size(kept[i])
    out = [line for i in range(len(parts)) if i in kept for line in kept[i]]
    if dropped:
        out += ["", f"_Left out at {where}'s limit: {', '.join(dropped)}._"]
    text = "\n".join(out)
    return text[:limit]
