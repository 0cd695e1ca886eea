"""Which findings a host posted inline and why the others are listed in its summary.

A host publisher groups findings by line (``fingerprint.group_findings``), posts the new
groups up to its cap, and lists the rest. ``placing`` records that in findings (not
comments), so the summary's counts add up: every finding of the run is inline (now or on an
earlier run) or listed once, with why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.report.digest import OVER_CAP, REFUSED, Listed
from bot.report.fingerprint import Group

__all__ = ["Placing", "placing", "refusal"]

UNREAD = "Nova could not read its earlier comments, so it posted none (none twice)"


@dataclass(frozen=True, slots=True)
class Placing:
    inline: int = 0  # findings posted inline by this run
    before: int = 0  # findings already inline from an earlier run
    capped: frozenset[str] = field(default_factory=frozenset)  # groups over the cap
    known: bool = True  # the host's earlier comments could be read

    def listed(self, overflow: Sequence[Group], refused: str, cap: int) -> list[Listed]:
        """The findings of ``overflow`` (groups not posted inline), each with why."""
        out = []
        for fp, group in overflow:
            if fp in self.capped:
                why, detail = OVER_CAP, f"{cap} inline comments per run (max_inline_comments)"
            elif not self.known:
                why, detail = REFUSED, UNREAD
            else:
                why, detail = REFUSED, refused
            out += [Listed(p, why, detail) for p in group]
        return out


def placing(
    groups: Sequence[Group],
    inline: Sequence[Group],
    rejected: Sequence[Group],
    overflow: Sequence[Group],
    known: bool,
) -> Placing:
    """``groups``: all of the run; ``inline``: those sent; ``rejected``: those of ``inline``
    the host did not take; ``overflow``: those over the cap (or all, when not ``known``)."""
    gone = {fp for fp, _g in rejected}
    new = {fp for fp, _g in [*inline, *overflow]}
    return Placing(
        inline=sum(len(g) for fp, g in inline if fp not in gone),
        before=sum(len(g) for fp, g in groups if fp not in new),
        capped=frozenset(fp for fp, _g in overflow) if known else frozenset(),
        known=known,
    )


def refusal(said: Sequence[str], default: str) -> str:
    """The host's own words for what moved findings to the summary (the last note or error
    saying so, up to its "; they are listed … instead"), else ``default``."""
    for text in reversed(said):
        if "instead" in text:
            return text.split("; ")[0]
    return default
