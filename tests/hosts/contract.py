"""The host contract: what every code host's local server must see Nova do.

A *harness* drives one host's local server (tests/servers/) the same way for every host:
it turns a change of a real git repository into that host's change (pull request, merge
request, revision), names it for ``nova review``, lists what Nova stored there (its inline
comments and its summary, only those written by Nova's own identity), forges Nova's markers
as another user, makes the server refuse one position, and switches to credentials that can
read but not write. The tests in ``test_contract.py`` and ``test_publishers.py`` run against
every harness in ``HARNESSES`` (tests/hosts/conftest.py): a new host adds one
``harness_<host>.py`` and one entry there.

The change, the model's answer and where each finding belongs are shared by every host, so
one set of expectations holds for all of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest
from click.testing import Result

from tests.conftest import GitRepo

__all__ = [
    "BODIES",
    "EXPECTED",
    "FINDINGS",
    "HostChange",
    "HostHarness",
    "Inline",
    "build_change",
    "fingerprints",
    "json_output",
    "model_reply",
    "new_side_lines",
]

TITLE = "Cart changes"

# (path, line the model names, the line's text, body, severity); None: the line was deleted
FINDINGS: tuple[tuple[str, int, str, str, str, tuple[str, int] | None], ...] = (
    ("shop/cart.py", 5, "line_5 = 50", "magic number", "warning", ("shop/cart.py", 5)),
    ("shop/cart.py", 19, "line_20 = 200", "big number", "warning", ("shop/cart.py", 19)),
    (
        "shop/total.py",
        5,
        "    return sum(items)",
        "None items crash",
        "error",
        ("shop/total.py", 5),
    ),
    ("shop/cart.py", 4, "line_4 = 4", "context note", "info", ("shop/cart.py", 4)),
    ("shop/cart.py", 12, "line_12 = 12", "deleted line finding", "warning", None),
)
BODIES = tuple(f[3] for f in FINDINGS)
# body -> the one (path, line) its inline comment may be on
EXPECTED: dict[str, tuple[str, int]] = {f[3]: f[5] for f in FINDINGS if f[5] is not None}


@dataclass(frozen=True)
class Inline:
    """An inline comment as the server stored it."""

    path: str
    line: int
    body: str


@dataclass(frozen=True)
class HostChange:
    ref: str  # what ``nova review`` is given
    base: str
    head: str
    lines: dict[str, set[int]]  # path -> NEW lines of git's diff (added and context)


class HostHarness(Protocol):
    name: str  # the host's name in bot.hosts (and the test id)
    refusal: str  # what the run's output says when the credentials cannot write
    edits_summary: bool  # one summary edited in place (else each posting run adds one)

    def start(self, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
        """Start the local server and point Nova's environment at it."""

    def stop(self) -> None: ...

    def add_change(self, repo: GitRepo, base: str, head: str) -> str:
        """Make ``base..head`` of ``repo`` a change on the server; return its reference."""

    def review(self, tmp_path: Path, *args: str) -> Result:
        """``nova review`` (no checkout) with ``args``."""

    def inline_comments(self) -> list[Inline]:
        """Nova's own inline comments, as the server stored them."""

    def summaries(self) -> list[str]:
        """Nova's own summary comments (one at most, when the contract holds)."""

    def writes(self) -> int:
        """How many write requests the server has seen."""

    def forge(self, head: str, fps: Sequence[str], where: tuple[str, int]) -> None:
        """As ANOTHER user: a summary saying ``head`` was reviewed with no findings, and
        comments at ``where`` carrying the fingerprints ``fps``."""

    def clear(self) -> None:
        """Delete every comment on the change (Nova's and anyone's)."""

    def refuse(self, path: str, line: int) -> None:
        """The server refuses an inline comment on ``path:line`` from now on."""

    def read_only(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Switch to credentials that may read the change but not write to it."""

    def fail_writes(self) -> None:
        """From now on the server answers every write with HTTP 500 and stores nothing."""

    def fail_inline(self, times: int) -> None:
        """The server answers the next ``times`` writes of inline comments (GitHub's
        review, a GitLab thread, the Phabricator extension's call) with HTTP 500 and
        stores nothing; the summary is still written."""


def build_change(repo: GitRepo) -> tuple[str, str]:
    """A change with an edited, a shortened and an added file: (base, head)."""
    repo.write("shop/cart.py", "".join(f"line_{i} = {i}\n" for i in range(1, 31)))
    base = repo.commit("base")
    repo.write(
        "shop/cart.py",
        "".join(f"line_{i} = {i * 10 if i in (5, 20) else i}\n" for i in range(1, 31) if i != 12),
    )
    repo.write("shop/total.py", "import os\n\n\ndef total(items):\n    return sum(items)\n")
    head = repo.commit(f"{TITLE}\n\nTouches the cart.")
    return base, head


def model_reply(wording: str = "") -> str:
    """The model's answer for ``build_change``: every finding of FINDINGS."""
    return json.dumps(
        {
            "summary": "Cart arithmetic changed.",
            "comments": [
                {
                    "path": path,
                    "line": line,
                    "code": code,
                    "body": f"{body}{wording}",
                    "severity": severity,
                }
                for path, line, code, body, severity, _where in FINDINGS
            ],
        }
    )


def new_side_lines(repo: GitRepo, base: str, head: str) -> dict[str, set[int]]:
    """NEW line numbers a comment may name (added and context), by git's own diff."""
    lines: dict[str, set[int]] = {}
    path, number = "", 0
    for row in repo.git("diff", "-M", base, head).splitlines():
        if row.startswith("+++ "):
            path = row[len("+++ b/") :]
            lines.setdefault(path, set())
        elif m := re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", row):
            number = int(m.group(1))
        elif row.startswith(("+", " ")) and path:
            lines[path].add(number)
            number += 1
    return lines


def fingerprints(texts: Sequence[str]) -> list[str]:
    """Every fingerprint in Nova's markers (``nova:fp:ab…``, ``nova:fp:ab…,cd…``)."""
    found = [
        fp
        for text in texts
        for group in re.findall(r"nova:fp:([0-9a-f,]+)", text)
        for fp in group.split(",")
        if fp
    ]
    return list(dict.fromkeys(found))


def json_output(stdout: str) -> dict[str, Any]:
    """``-o json``'s document (a GitHub read-only run prints ``::`` annotations first)."""
    data = json.loads("\n".join(ln for ln in stdout.splitlines() if not ln.startswith("::")))
    assert isinstance(data, dict)
    return data
