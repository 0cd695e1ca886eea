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
from bot.report.formats import summary_text
from bot.report.untrusted import clean_text
from bot.review.result import ReviewResult, verdict_marker

__all__ = ["DIFF_MARK", "FP_MARK", "VERDICT_MARK", "Summary", "line_link"]

DIFF_MARK = re.compile(r"nova:diff:(\d+)")
VERDICT_MARK = re.compile(r"nova:diff:(\d+) nova:verdict:([a-z0-9=,]+)")
FP_MARK = re.compile(r"nova:fp:([0-9a-f,]*)")
_WHERE = {"inline": "inline comments", "lint": "lint messages on the build", "summary": "this list"}


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

    def text(self) -> str:
        change = self.result.change
        out = [f"= Nova review of diff {self.diff_id} ="]
        text = summary_text(self.result)
        if text:
            out += ["", clean_text(text)]
        for failure in self.failures:
            out += ["", f"(WARNING) {clean_text(failure)}"]
        if self.placed:
            out += ["", f"**Findings** ({len(self.placed)}, also as {_WHERE[self.mode]}):"]
            for _fp, p in self.placed:
                loc = f"{p.path}:{p.line}"
                link = line_link(
                    change.url, self.diff_id, self.changesets.get(p.path or ""), p.line
                )
                loc = f"[[ {link} | {loc} ]]" if link else f"`{loc}`"
                out.append(f"- {loc} ({p.comment.severity}) {clean_text(p.comment.body)}")
        if self.unplaced:
            out += ["", "**Not placed on a line**:"]
            for _fp, p in self.unplaced:
                out.append(
                    f"- `{clean_text(p.path or p.comment.path)}:"
                    f"{p.comment.line or '?'}` ({p.comment.severity}) "
                    f"{clean_text(p.comment.body)} //({clean_text(p.reason or '')})//"
                )
        if not self.placed and not self.unplaced:
            out += ["", "No new findings."]
        if self.result.dismissed:  # taken out of the gate by people (bot.conversation)
            out += ["", "**Dismissed** (not counted):"]
            out += [
                f"- `{d.placement.path}:{d.placement.line}` ({d.placement.comment.severity}) "
                f"{d.kind} by `{clean_text(d.by)}`"
                + (f": {clean_text(d.reason)}" if d.reason else "")
                for d in self.result.dismissed
            ]
        verdict = verdict_marker(self.result, failed=len(self.failures))  # degraded if any
        out += [
            "",
            f"//nova:diff:{self.diff_id} nova:verdict:{verdict} nova:fp:{','.join(self.all_fps)}//",
        ]
        return "\n".join(out)
