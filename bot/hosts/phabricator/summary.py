"""The summary comment Nova posts on a revision, and the markers re-runs read back.

Every finding is listed as ``file:line`` linking to its line on the revision page:
``<revision uri>?id=<diff>#C<changeset>NL<line>`` — ``C…NL…`` is the id Differential gives
the new-file line number cell of that changeset. The comment ends with hidden markers: the
diff ID (``nova:diff:``) and the fingerprints of every finding (``nova:fp:``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.change import Placement
from bot.report.digest import Listed, build_digest
from bot.report.remarkup import render_remarkup
from bot.report.untrusted import clean_text
from bot.review.result import ReviewResult, verdict_marker

__all__ = ["DIFF_MARK", "FP_MARK", "VERDICT_MARK", "Summary", "line_link"]

DIFF_MARK = re.compile(r"nova:diff:(\d+)")
VERDICT_MARK = re.compile(r"nova:diff:(\d+) nova:verdict:([a-z0-9=,]+)")
FP_MARK = re.compile(r"nova:fp:([0-9a-f,]*)")
BODY_LIMIT = 512_000  # Nova's bound on a comment: Conduit states none; a page must load
_WHY = {  # the placed findings a mode lists in the summary, and why they are not inline
    "lint": ("no inline comments on this server", "also as lint messages on the build"),
    "summary": ("no inline comments on this server", "Nova's extension is not installed"),
}


def line_link(
    uri: str | None, diff_id: int | None, changeset: int | None, line: int | None
) -> str | None:
    """The revision page at ``line`` of the new file, or at the diff when it is unknown."""
    if not uri:
        return None
    link = f"{uri}?id={diff_id}" if diff_id else uri
    if changeset and line:
        link += f"#C{changeset}NL{line}"
    return link


@dataclass
class Summary:
    """What goes in the summary comment; ``text()`` renders it as remarkup."""

    result: ReviewResult
    diff_id: int | None
    changesets: dict[str, int]
    mode: str  # inline | lint | summary: where else the findings are
    placed: list[tuple[str, Placement]] = field(default_factory=list)
    unplaced: list[tuple[str, Placement]] = field(default_factory=list)
    all_fps: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # what could not be posted, and why
    notes: list[str] = field(default_factory=list)  # Nova's own (trusted) remarks

    def text(self) -> str:
        """The digest in Remarkup (``bot.report.remarkup``), then the markers."""
        change = self.result.change
        why = _WHY.get(self.mode)
        listed = [Listed(p, *why) for _fp, p in self.placed] if why else []
        new = len(self.placed) + len(self.unplaced)
        digest = build_digest(
            self.result,
            inline=0 if why else len(self.placed),
            inline_before=len(self.result.placements) - new,
            outside=listed,
            unplaced=[p for _fp, p in self.unplaced],
        )

        def link(item: Listed) -> str | None:
            p = item.placement
            if not p.placed:
                return None
            return line_link(change.url, self.diff_id, self.changesets.get(p.path or ""), p.line)

        body = render_remarkup(
            digest,
            clean=clean_text,
            heading=f"= Nova review of diff {self.diff_id} =",
            link=link,
            warnings=self.failures,
            limit=BODY_LIMIT - 200 - 17 * len(self.all_fps) - sum(len(n) + 9 for n in self.notes),
        )
        body += "".join(f"\n\n(NOTE) {note}" for note in self.notes)  # Nova's own words
        verdict = verdict_marker(self.result, failed=len(self.failures))  # degraded if any
        return (
            f"{body}\n\n"
            f"//nova:diff:{self.diff_id} nova:verdict:{verdict} nova:fp:{','.join(self.all_fps)}//"
        )
