"""The walkthrough: asked for in the review's own structured answer (no call of its own),
read tolerantly, shown first on every surface; without a model, the files by directory."""

from __future__ import annotations

import json

import pytest

from bot.change import FileDiff, Hunk, Line
from bot.report.digest import directory_walk
from bot.review.agent.answer import ANSWER_SCHEMA
from bot.review.agent.output import parse_answer
from bot.review.result import Walk
from tests.conftest import GitRepo, run
from tests.servers.openai_server import FakeOpenAI, text


def test_the_schema_asks_for_it_beside_the_findings() -> None:
    assert ANSWER_SCHEMA["required"] == ["summary", "walkthrough", "comments"]
    item = ANSWER_SCHEMA["properties"]["walkthrough"]["items"]
    assert item["required"] == ["path", "change"] and item["additionalProperties"] is False


def test_a_malformed_walkthrough_is_no_walkthrough_never_a_failed_answer() -> None:
    answer = {
        "summary": "s",
        "comments": [],
        "walkthrough": [
            {"path": "a.py", "change": "adds  a\nguard"},
            {"path": "", "change": "no path"},
            {"path": "b.py"},
            "just text",
            {"path": ["x"], "change": 3},
            {"files": "docs/*", "summary": "x" * 500},
        ],
    }
    parsed = parse_answer(json.dumps(answer))
    assert parsed.walkthrough[0] == Walk("a.py", "adds a guard")  # one line
    assert [w.label for w in parsed.walkthrough] == ["a.py", "docs/*"]
    assert len(parsed.walkthrough[1].text) == 300
    assert (
        parse_answer(json.dumps({"summary": "s", "comments": [], "walkthrough": 7})).walkthrough
        == []
    )
    assert parse_answer('{"summary": "s", "comments": []}').walkthrough == []


def _file(path: str, status: str, added: int, removed: int) -> FileDiff:
    lines = (Line("added", None, 1, "x"),) * added + (Line("removed", 1, None, "y"),) * removed
    return FileDiff(path, path, status, hunks=(Hunk(1, 1, 1, 1, "", lines),))  # type: ignore[arg-type]


def test_without_a_model_files_are_grouped_by_directory() -> None:
    files = [
        _file("src/a.py", "modified", 3, 1),
        _file("src/b.py", "added", 10, 0),
        _file("src/c.py", "modified", 1, 1),
        _file("README.md", "modified", 2, 2),
    ]
    assert directory_walk(files) == [
        Walk("README.md", "modified, +2 −2"),
        Walk("src/", "3 files: 2 modified, 1 added; +14 −2"),
    ]


@pytest.mark.slow
def test_the_models_walkthrough_comes_from_its_one_call(repo: GitRepo, llm_env: FakeOpenAI) -> None:
    repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.write(
        "pkg/calc.py", "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n"
    )
    repo.commit("Add div")
    walk = [{"path": "pkg/calc.py", "change": "adds div(); b == 0 is not handled"}]
    llm_env.enqueue(text(json.dumps({"summary": "Adds div.", "walkthrough": walk, "comments": []})))
    result = run("review", "HEAD", "--repo", str(repo.path), "-q", "--analyzers", "none")
    assert len(llm_env.requests) == 1  # the walkthrough cost no call of its own
    lines = result.stdout.splitlines()
    at = lines.index("Walkthrough (by the model):")
    assert at < 8 and lines[at + 1].split() == ["pkg/calc.py", *walk[0]["change"].split()]
    prompt = llm_env.requests[0]["messages"][0]["content"]
    assert '"walkthrough"' in prompt


def test_many_directories_merge_into_their_parents() -> None:
    files = [_file(f"tests/certs/c{i}/d/x.pem", "added", 2, 0) for i in range(20)]
    files.append(_file("src/a.py", "modified", 1, 1))
    walk = directory_walk(files)
    assert walk == [
        Walk("src/a.py", "modified, +1 −1"),
        Walk("tests/certs/", "20 files: 20 added; +40 −0"),
    ]
