"""What a reviewer sees first of a rendered summary, and a scripted model with many findings.

Shared by the summary tests (tests/report/) and bench/summary.py (the requests 2.28 -> 2.32
change): ``many_findings`` answers each review batch with findings on the files it shows
(some on lines, some quoting code that is not there, so they cannot be placed) and a
walkthrough line per file; ``read_screen`` splits a rendered body into what is open and what
is folded, and checks the first screen and the counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.change import FileDiff
from tests.servers.openai_server import Reply, text

SCREEN = 15  # rendered lines a reviewer sees before scrolling
_SEVERITIES = ("error", "warning", "warning", "info", "warning", "info", "warning")
_FILE = re.compile(r"^File: (\S+) \(", re.M)


def many_findings(files: Sequence[FileDiff], every: int = 9) -> Callable[[dict[str, Any]], Reply]:
    """A responder: for each file a batch shows, a finding on every ``every``-th added line
    (quoting it), one quoting code that is not in the file (not placed), and a walkthrough
    line."""
    by_path = {f.path: f for f in files}

    def reply(body: dict[str, Any]) -> Reply:
        prompt = "\n".join(str(m.get("content") or "") for m in body["messages"])
        paths = [p for p in dict.fromkeys(_FILE.findall(prompt)) if p in by_path]
        comments, walk = [], []
        for path in paths:
            added = [ln for h in by_path[path].hunks for ln in h.lines if ln.kind == "added"]
            for n, ln in enumerate(added[::every]):
                if not ln.text.strip():
                    continue
                comments.append(
                    {
                        "path": path,
                        "line": ln.new_no,
                        "code": ln.text,
                        "body": f"check this ({path} #{n})",
                        "severity": _SEVERITIES[(len(comments)) % len(_SEVERITIES)],
                    }
                )
            if added:
                comments.append(
                    {"path": path, "line": 1, "code": "no such line anywhere()", "body": "gone"}
                )
            walk.append({"path": path, "change": f"updates {path.rsplit('/', 1)[-1]}"})
        return text(
            json.dumps({"summary": "A scripted review.", "walkthrough": walk, "comments": comments})
        )

    return reply


@dataclass
class Screen:
    """A rendered body: its open lines (markers and blanks left out) and its folded ones."""

    open: list[str] = field(default_factory=list)
    folded: list[str] = field(default_factory=list)
    rows: int = 0  # finding rows listed (each finding not inline, once)

    @property
    def first(self) -> list[str]:
        return self.open[:SCREEN]

    def problems(self, findings: int) -> list[str]:
        """What a reviewer would miss or misread; [] when the body is right. ``findings`` is
        the number of findings of the run (from ``-o json``)."""
        out = []
        first = "\n".join(self.first)
        if not re.search(r"\b(Blocking|Not blocking)\b", first):
            out.append("no verdict on the first screen")
        counts = re.search(r"(\d+) findings?: (\d+) errors?, (\d+) warnings?, (\d+) info", first)
        if not counts:
            out.append("no severity counts on the first screen")
        elif int(counts[1]) != findings or sum(map(int, counts.groups()[1:])) != findings:
            out.append(f"counts {counts.group(0)!r} do not add up to {findings} findings")
        if "Walkthrough" not in first:
            out.append("no walkthrough on the first screen")
        skipped = [ln for ln in self.open if "skipped" in ln.lower()]
        if skipped:
            out.append(f"'skipped' outside the folded details: {skipped[:2]}")
        where = re.search(r"Of (\d+) findings?: (.*)\.", "\n".join(self.open))
        if not where:
            if findings:
                out.append("no line saying where the findings are")
        else:
            parts = [int(n) for n in re.findall(r"(\d+) [a-z]", where[2])]
            if sum(parts) != int(where[1]):
                out.append(f"{where.group(0)!r} does not add up")
            below = re.search(r"(\d+) listed below", where[2])
            listed = int(below[1]) if below else int(where[1])  # a terminal lists them all
            if self.rows != listed:
                out.append(f"{self.rows} finding rows listed, {listed} said")
        return out


def read_markdown(body: str) -> Screen:
    """GitHub / GitLab: ``<details>`` … ``</details>`` is folded; HTML comments are hidden."""
    screen, depth = Screen(), 0
    for line in re.sub(r"<!--.*?-->", "", body, flags=re.S).splitlines():
        screen.rows += bool(re.match(r"- `.*?` \S+ \*\*(error|warning|info)\*\*", line))
        depth += line.count("<details>")
        (screen.folded if depth else screen.open).append(line) if line.strip() else None
        depth -= line.count("</details>")
    return screen


def read_remarkup(body: str) -> Screen:
    """Phabricator: a ``lines=N`` code block shows a few lines and scrolls (folded); the
    marker line (``//nova:diff:…//``) is Nova's, shown small at the end."""
    screen, folding = Screen(), False
    for line in body.splitlines():
        screen.rows += bool(re.match(r"- (\[\[|`).*? \((error|warning|info)\) ", line))
        if line.startswith("  lang=text, name="):
            folding = True
        elif not line.startswith("  "):
            folding = False
        if line.strip() and "nova:diff:" not in line:
            (screen.folded if folding else screen.open).append(line)
    return screen


def read_text(body: str) -> Screen:
    """The terminal: everything from ``Details:`` on is the details (printed last)."""
    screen, folding = Screen(), False
    for line in body.splitlines():
        screen.rows += bool(re.match(r" {10}\[(error|warning|info)\] ", line))
        folding = folding or line == "Details:"
        if line.strip():
            (screen.folded if folding else screen.open).append(line)
    return screen
