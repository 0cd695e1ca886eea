"""The done-when of the foundation: comments that quote their line land on that exact line,
whatever number the model cites (right, old, off by one, none); none lands on a wrong line;
the rest are unplaced with a reason. Lines that repeat are placed only where the number
singles one out (issue 11). Through the real CLI, git and the OpenAI client."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bot.cli import cli
from tests.conftest import GitRepo
from tests.servers.openai_server import FakeOpenAI, text

pytestmark = pytest.mark.slow  # every test here takes seconds: not in the fast lane

OLD = [f"v{i} = compute({i})" for i in range(1, 41)]


def _new_file() -> list[str]:
    new = list(OLD)
    new[4] = "v5 = compute(500)"
    new[11] = "v12 = compute(1200)"
    new[19] = "v20 = compute(2000)"
    del new[14:16]  # old lines 15-16
    at = new.index("v8 = compute(8)") + 1
    new[at:at] = ["extra_a = 1", "extra_b = 2", "extra_c = 3"]
    return new + ["tail_a = 1", "tail_b = 2"] + TWINS


# Added at the end: "if a:" three times (the last far from the others), and two lines the
# same cut-short quote starts.
TWINS = [
    "if a:",
    "    go(1)",
    "if a:",
    "    go(2)",
    "total = compute(a, b, c)",
    "total = compute(a, b, c).sum()",
    *[f"w{i} = {i}" for i in range(12)],
    "if a:",
    "    go(3)",
]
NEW = _new_file()
IF_A = [n for n, t in enumerate(NEW, 1) if t == "if a:"]
TOTAL = NEW.index("total = compute(a, b, c).sum()") + 1
ADDED = [
    "v5 = compute(500)",
    "extra_a = 1",
    "extra_b = 2",
    "extra_c = 3",
    "v12 = compute(1200)",
    "v20 = compute(2000)",
    "tail_a = 1",
    "tail_b = 2",
]
CONTEXT = [
    "v4 = compute(4)",
    "v6 = compute(6)",
    "v11 = compute(11)",
    "v13 = compute(13)",
    "v17 = compute(17)",
    "v19 = compute(19)",
    "v21 = compute(21)",
    "v40 = compute(40)",
]


def _claimed(variant: int, code: str) -> int | None:
    new_no = NEW.index(code) + 1
    old_no = OLD.index(code) + 1 if code in OLD else None
    return [new_no, old_no or new_no, new_no + 1, new_no - 1, None][variant % 5]


def test_quoted_comments_land_on_their_exact_line(repo: GitRepo, llm_env: FakeOpenAI) -> None:
    repo.write("src/values.py", "\n".join(OLD) + "\n")
    repo.commit("base")
    repo.write("src/values.py", "\n".join(NEW) + "\n")
    repo.commit("change values")
    targets = ADDED + CONTEXT
    comments = [
        {"path": "src/values.py", "line": _claimed(i, code), "code": code, "body": f"finding {i}"}
        for i, code in enumerate(targets)
    ]
    bad = [
        {"path": "src/values.py", "line": 15, "code": "v15 = compute(15)", "body": "deleted"},
        {"path": "src/values.py", "line": 3, "code": "not in the file", "body": "invented"},
        {"path": "src/other.py", "line": 3, "code": "v3 = compute(3)", "body": "wrong file"},
    ]
    offset = len(NEW) - len(OLD)  # the old-side number of an added line at the end
    twins = [
        {"path": "src/values.py", "line": n, "code": "    if a:", "body": f"same text {n}"}
        for n in IF_A
    ]
    twins += [{"path": "src/values.py", "line": IF_A[2] - 1, "code": "if a:", "body": "near"}]
    ambiguous = [
        {"path": "src/values.py", "line": 100_000 + IF_A[0], "code": "if a:", "body": "out"},
        {"path": "src/values.py", "line": IF_A[1] - offset, "code": "if a:", "body": "old"},
        {
            "path": "src/values.py",
            "line": TOTAL - 2,
            "code": "total = compute(a, b",
            "body": "cut short",
        },
    ]
    llm_env.enqueue(
        text(json.dumps({"summary": "s", "comments": comments + bad + twins + ambiguous}))
    )
    result = CliRunner().invoke(
        cli,
        ["review", "--repo", str(repo.path), "-q", "-o", "json", "--analyzers", "none"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)

    prompt = llm_env.requests[0]["messages"][1]["content"]
    for code in ADDED:  # the model was shown the true NEW numbers
        assert f"\n{NEW.index(code) + 1} + {code}\n" in prompt

    placed = {c["body"]: c["line"] for c in data["comments"]}
    exact = sum(placed.get(f"finding {i}") == NEW.index(code) + 1 for i, code in enumerate(targets))
    wrong = [
        b
        for b, line in placed.items()
        if b.startswith("finding") and line != NEW.index(targets[int(b.split()[1])]) + 1
    ]
    assert exact / len(targets) >= 0.95 and not wrong
    assert exact == len(targets)
    assert [placed[f"same text {n}"] for n in IF_A] == IF_A  # three comments, three lines
    assert placed["near"] == IF_A[2]  # one line off, the other twins far
    unplaced = {u["body"]: u["reason"] for u in data["unplaced"]}
    assert set(unplaced) == {"deleted", "invented", "wrong file", "out", "old", "cut short"}
    for body, lines in (("out", IF_A), ("old", IF_A), ("cut short", [TOTAL - 1, TOTAL])):
        assert "ambiguous" in unplaced[body]
        assert all(str(n) in unplaced[body] for n in lines), unplaced[body]
    assert "deleted line" in unplaced["deleted"]
    assert "not found" in unplaced["invented"]
    assert "not a file of this change" in unplaced["wrong file"]
    assert "Not placed" not in data["summary"]  # unplaced are listed in their own section
