"""``-o sarif`` / ``--sarif FILE``: valid SARIF 2.1.0 (the official schema, tests/data) that
GitHub code scanning takes: stable fingerprints, rule metadata, locations under %SRCROOT%."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft4Validator

from bot.change import Change, Comment, FileDiff, Hunk, Line, Placement
from bot.cli import cli
from bot.report.fingerprint import fingerprint, group_findings, line_ids
from bot.report.formats import format_result
from bot.report.sarif import FINGERPRINT_KEY, MAX_MESSAGE, SRCROOT, to_sarif
from bot.review.result import ReviewResult
from tests.conftest import GitRepo

SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())
VALIDATOR = Draft4Validator(SCHEMA)
SHA = "0123456789abcdef0123456789abcdef01234567"


def valid(doc: dict[str, Any]) -> dict[str, Any]:
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return doc


def _file(path: str, texts: list[str]) -> FileDiff:
    lines = tuple(Line("added", None, i + 1, t) for i, t in enumerate(texts))
    return FileDiff(
        old_path=None, new_path=path, status="added", hunks=(Hunk(0, 0, 1, len(texts), "", lines),)
    )


def _result(body: str = "Divides by zero.") -> ReviewResult:
    files = (
        _file("pkg/calc.py", ["import os", "if a:", "if a:", "return a / b"]),
        _file("docs/read me é.md", ["# Title"]),
    )
    change = Change(
        id="o/r#7",
        source="github",
        title="Add div",
        head_ref=SHA,
        url="https://github.com/o/r/pull/7",
        files=files,
    )
    ruff = Comment(
        path="pkg/calc.py",
        line=1,
        body="F401: `os` imported but unused",
        origin="ruff",
        rule="F401",
        severity="info",
        url="https://docs.astral.sh/ruff/rules/unused-import",
    )
    return ReviewResult(
        change=change,
        summary="ok",
        notes=["ruff: 1 finding"],
        placements=[
            Placement(ruff, path="pkg/calc.py", line=1),
            Placement(
                Comment(path="pkg/calc.py", line=4, body=body, severity="error"),
                path="pkg/calc.py",
                line=4,
            ),
            Placement(
                Comment(path="pkg/calc.py", line=2, body="Same test twice?"),
                path="pkg/calc.py",
                line=2,
            ),
            Placement(
                Comment(path="pkg/calc.py", line=3, body="Same test twice?"),
                path="pkg/calc.py",
                line=3,
            ),
            Placement(
                Comment(path="docs/read me é.md", line=40, body="Stale."),
                path="docs/read me é.md",
                reason="line 40 is not in the diff",
            ),
            Placement(Comment(path="", line=None, body="Overall: add tests."), reason="no path"),
            Placement(
                Comment(path="made/up.py", line=3, body="Ghost file."),
                reason="made/up.py is not in the change",
            ),
        ],
    )


def test_sarif_validates_and_carries_what_code_scanning_reads() -> None:
    doc = valid(to_sarif(_result()))
    (run,) = doc["runs"]
    assert run["originalUriBaseIds"][SRCROOT]
    assert run["versionControlProvenance"] == [
        {
            "repositoryUri": "https://github.com/o/r",
            "revisionId": SHA,
            "mappedTo": {"uriBaseId": SRCROOT},
        }
    ]
    results = run["results"]
    assert len(results) == 5  # no path, or not a file of the change: a notification
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any("Overall: add tests." in n for n in notes) and "ruff: 1 finding" in notes
    assert any("made/up.py:3" in n and "Ghost file." in n for n in notes) and "ok" in notes
    for r in results:
        (loc,) = r["locations"]
        assert loc["physicalLocation"]["artifactLocation"]["uriBaseId"] == SRCROOT
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert uris[-1] == "docs/read%20me%20%C3%A9.md"
    unplaced = results[-1]
    assert unplaced["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert "claimed line 40" in unplaced["message"]["text"]
    assert "line 40 is not in the diff" in unplaced["message"]["text"]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["ruff/F401"]["helpUri"] == "https://docs.astral.sh/ruff/rules/unused-import"
    assert "unused-import" in rules["ruff/F401"]["shortDescription"]["text"]
    assert rules["nova/llm"]["shortDescription"]["text"] and rules["nova/llm"]["help"]["text"]
    assert {r["ruleId"] for r in results} <= set(rules)


def test_fingerprints_are_the_publishers_and_survive_rewording_and_moves() -> None:
    result = _result()
    run = to_sarif(result)["runs"][0]
    fps = [r["partialFingerprints"][FINGERPRINT_KEY] for r in run["results"]]
    assert len(set(fps)) == len(fps)  # the two "if a:" lines stay two
    ids = line_ids(result.change)
    published = {fp for fp, _ in group_findings(result, ids)}  # what GitHub/GitLab post
    assert set(fps[:4]) == published
    assert fps[0] == fingerprint(result.placements[0], "import os", 0)
    reworded = to_sarif(_result(body="Possible ZeroDivisionError."))["runs"][0]
    assert [r["partialFingerprints"] for r in reworded["results"]] == [
        r["partialFingerprints"] for r in run["results"]
    ]


def test_code_scanning_limits_cut_with_a_note() -> None:
    result = _result(body="x" * (MAX_MESSAGE * 3))
    run = valid(to_sarif(result, max_results=2))["runs"][0]
    assert [r["level"] for r in run["results"]] == ["error", "warning"]  # most severe kept
    assert all(len(r["message"]["text"]) <= MAX_MESSAGE for r in run["results"])
    assert "cut" in run["results"][0]["message"]["text"]
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any("3 of 5 results left out" in n for n in notes)


def test_errors_mark_the_invocation_failed() -> None:
    result = ReviewResult(
        change=Change(id="HEAD", source="?"), summary="", errors=["the model answered 500"]
    )
    run = valid(to_sarif(result))["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert run["results"] == [] and "versionControlProvenance" not in run


_paths = st.one_of(
    st.sampled_from(
        [
            "a.py",
            "dir/b c.js",
            "ü/ñ.sh",
            "/abs/x",
            "../up",
            "a/../../b",
            "",
            "C:x",
            "weird%20name",
            "tab\there",
            "q?#frag",
        ]
    ),
    st.text(max_size=30),
)
_bodies = st.one_of(st.text(max_size=200), st.text(min_size=1, max_size=3).map(lambda s: s * 3000))


@st.composite
def reviews(draw: st.DrawFn) -> ReviewResult:
    paths = draw(st.lists(_paths, min_size=1, max_size=4, unique=True))
    texts = st.lists(st.sampled_from(["x = 1", "if a:", "", "é", "\t"]), min_size=1, max_size=5)
    files = tuple(_file(p, draw(texts)) for p in paths)
    placements = []
    for _ in range(draw(st.integers(0, 8))):
        f = draw(st.sampled_from(files))
        comment = Comment(
            path=draw(st.one_of(st.just(f.path), _paths)),
            line=draw(st.one_of(st.none(), st.integers(-5, 10))),
            body=draw(_bodies),
            severity=draw(st.sampled_from(["info", "warning", "error"])),
            origin=draw(st.sampled_from(["llm", "ruff", "secrets", "eslint"])),
            rule=draw(st.one_of(st.none(), st.text(min_size=1, max_size=10))),
            url=draw(st.one_of(st.none(), st.just("https://e.x/r/a-b"), st.text(max_size=10))),
        )
        if draw(st.booleans()):
            line = draw(st.integers(1, len(f.hunks[0].lines)))
            placements.append(
                Placement(
                    comment,
                    path=f.path,
                    line=line,
                    end_line=draw(st.one_of(st.none(), st.integers(0, 9))),
                )
            )
        else:
            placements.append(
                Placement(
                    comment,
                    path=draw(st.one_of(st.none(), _paths)),
                    reason=draw(st.text(max_size=40)),
                )
            )
    change = Change(
        id="x",
        source=draw(st.sampled_from(["git", "github"])),
        files=files,
        head_ref=draw(st.one_of(st.none(), st.just(SHA))),
        url=draw(
            st.one_of(
                st.none(), st.just("https://gitlab.x/g/p/-/merge_requests/3"), st.text(max_size=20)
            )
        ),
    )
    return ReviewResult(
        change=change,
        summary=draw(st.text(max_size=50)),
        placements=placements,
        notes=draw(st.lists(st.text(max_size=30), max_size=2)),
    )


@pytest.mark.slow
@given(reviews())
def test_any_review_gives_valid_sarif_with_unique_fingerprints(result: ReviewResult) -> None:
    doc = valid(json.loads(format_result(result, "sarif")))
    (run,) = doc["runs"]
    fps = [r["partialFingerprints"][FINGERPRINT_KEY] for r in run["results"]]
    assert len(fps) == len(set(fps))
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert len(run["results"]) + len(notes) >= len(result.placements)  # nothing lost
    for r in run["results"]:
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri and not uri.startswith("/") and ".." not in uri.split("/")
        region = r["locations"][0]["physicalLocation"]["region"]
        assert (
            region["startLine"] >= 1
            and region.get("endLine", region["startLine"]) >= region["startLine"]
        )
        assert len(r["message"]["text"]) <= MAX_MESSAGE


@pytest.fixture
def py_repo(repo: GitRepo) -> GitRepo:
    repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.write("pkg/calc.py", "import os\n\n\ndef add(a, b):\n    return a + b\n")
    repo.commit("Add an import")
    return repo


def test_review_writes_sarif_beside_the_log(py_repo: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out" / "nova.sarif"
    result = CliRunner().invoke(
        cli,
        ["review", "--repo", str(py_repo.path), "-q", "-o", "json", "--sarif-file", str(out)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["comments"]  # the normal output is still there
    run = valid(json.loads(out.read_text(encoding="utf-8")))["runs"][0]
    (f401,) = [r for r in run["results"] if r["ruleId"] == "ruff/F401"]
    assert f401["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/calc.py"
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "ruff/F401")
    assert rule["helpUri"].startswith("https://docs.astral.sh/ruff/rules/")  # ruff's own link
    again = tmp_path / "again.sarif"
    CliRunner().invoke(
        cli,
        ["review", "--repo", str(py_repo.path), "-q", "--sarif-file", str(again)],
        catch_exceptions=False,
    )
    rerun = json.loads(again.read_text())["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in rerun] == [
        r["partialFingerprints"] for r in run["results"]
    ]


def test_sarif_file_that_cannot_be_written_is_a_usage_error(
    py_repo: GitRepo, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(
        cli,
        ["review", "--repo", str(py_repo.path), "-q", "--sarif-file", str(blocker / "nova.sarif")],
    )
    assert result.exit_code == 2 and "--sarif-file" in result.stderr
