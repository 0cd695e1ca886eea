"""Golden files: one review result rendered on every surface (tests/data/report/<surface>).

The result has findings of three origins and severities, two not placed on a line (one
ambiguous, one outside the diff), one over the cap and one the host refused, the model's
walkthrough, skipped and uncovered files, a fallback, a dismissed and an ignored finding.
Regenerate after an intended change with NOVA_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from bot.change import Change, Comment, FileDiff, Hunk, Line, Placement
from bot.hosts.github.actions import ActionsOutput
from bot.hosts.github.settings import GitHubSettings
from bot.hosts.gitlab.publisher import inert
from bot.hosts.phabricator.summary import Summary
from bot.llm.usage import Stats
from bot.report.digest import OVER_CAP, REFUSED, Listed
from bot.report.formats import format_result
from bot.report.local import LocalPublisher
from bot.report.summary import render_summary
from bot.report.untrusted import clean_text
from bot.review.result import Dismissal, ReviewResult, Walk
from tests.report.screen import read_markdown

DATA = Path(__file__).parents[1] / "data" / "report"
UPDATE = os.environ.get("NOVA_UPDATE_GOLDEN") == "1"


def _check(name: str, actual: str) -> None:
    path = DATA / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"golden {name} is missing: write it with NOVA_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8"), f"golden {name} differs"


def _file(path: str, status: str, added: int, removed: int = 0) -> FileDiff:
    lines = [Line("added", None, n + 1, f"line {n + 1} of {path}") for n in range(added)]
    lines += [Line("removed", n + 1, None, f"old {n + 1}") for n in range(removed)]
    hunk = Hunk(1, removed, 1, added, "", tuple(lines))
    old = None if status == "added" else path
    return FileDiff(old, path, status, hunks=(hunk,))  # type: ignore[arg-type]


def _placed(path: str, line: int, body: str, severity: str, origin: str = "llm") -> Placement:
    rule = "F401" if origin == "ruff" else None
    c = Comment(path, line, body, severity=severity, origin=origin, rule=rule)  # type: ignore[arg-type]
    return Placement(c, path=path, line=line)


AMBIGUOUS = "ambiguous: the quoted code matches 2 lines (3, 4)"


def golden_result() -> ReviewResult:
    files = (
        _file("src/pay/api.py", "modified", 6, 2),
        _file("src/pay/models.py", "added", 4),
        _file("docs/usage.md", "modified", 2, 1),
        _file("setup.cfg", "modified", 1, 1),
    )
    change = Change(
        "acme/pay#7", "github", "Refund partial payments", head_ref="c0ffee" * 6 + "abcd",
        url="http://phab.test/D7", files=files,
    )  # fmt: skip
    ambiguous = Comment("src/pay/api.py", 3, "`total` may be None here", code="total")
    outside = Comment("src/pay/api.py", 90, "the retry loop never ends", severity="error")
    placements = [
        _placed("src/pay/api.py", 2, "refund can exceed the charge", "error"),
        _placed("src/pay/api.py", 5, "`os` imported but unused", "warning", "ruff"),
        _placed("src/pay/models.py", 1, "amount should be Decimal", "warning"),
        _placed("docs/usage.md", 2, "the example uses the old name", "info"),
        Placement(ambiguous, path="src/pay/api.py", reason=AMBIGUOUS),
        Placement(outside, path="src/pay/api.py", reason="line 90 is outside the diff of api.py"),
    ]
    dismissed = [
        Dismissal(_placed("setup.cfg", 1, "pin the version", "warning"), "dismissed", "alice",
                  "we pin in the lock file", "2026-11-20T10:00:00Z"),
        Dismissal(_placed("docs/usage.md", 1, "long line", "info", "ruff"), "ignored",
                  ".nova.toml", "docs are not linted"),
    ]  # fmt: skip
    return ReviewResult(
        change,
        "Adds partial refunds. The refund total is not checked against the charge.",
        placements,
        notes=[
            "skipped assets/logo.png: binary",
            "skipped deploy/key.pem: excluded: certificate or key (*.pem)",
            "1 .cfg file: no analyzer configured (give --analyzer-results or declare an "
            "[[analyzer]] in .nova.toml)",
            "model openai:big failed (HTTP 503); openai:small answered from then on",
            "2 finding(s) were already posted on an earlier run",
        ],
        stats=Stats(llm_calls=3, prompt_tokens=12_345, completion_tokens=678, seconds=41.5),
        dismissed=dismissed,
        walkthrough=[
            Walk("src/pay/api.py", "adds refund(); the amount is not bounded by the charge"),
            Walk("src/pay/models.py", "a Refund model with a float amount"),
            Walk("docs/*", "documents partial refunds"),
        ],
        fail_on="error",
        model="openai:big",
    )


def _host(inline_noun: str, clean, host: str) -> str:  # type: ignore[no-untyped-def]
    result = golden_result()
    placed = result.placed
    return render_summary(
        result,
        posted=2,
        inline_before=1,
        outside=[Listed(placed[2], REFUSED, "HTTP 422: line must be part of the diff")],
        notes=[],
        clean=clean,
        host=host,
        limit=65_536,
        inline_noun=inline_noun,
    )


def test_github_summary() -> None:
    body = _host("inline comments", clean_text, "GitHub")
    _check("github.md", body)
    assert "Of 6 findings: 2 as new inline comments, 1 already posted by an earlier run, " in body


def test_gitlab_note() -> None:
    _check("gitlab.md", _host("inline threads", inert, "GitLab"))


def test_phabricator_comment() -> None:
    result = golden_result()
    fps = [(f"{i:016x}", p) for i, p in enumerate(result.placements)]
    text = Summary(
        result,
        4567,
        {"src/pay/api.py": 11, "src/pay/models.py": 12},
        mode="lint",
        placed=[(fp, p) for fp, p in fps if p.placed],
        unplaced=[(fp, p) for fp, p in fps if not p.placed],
        all_fps=[fp for fp, _p in fps],
    ).text()
    _check("phabricator.remarkup", text)
    assert "[[ http://phab.test/D7?id=4567#C11NL2 | src/pay/api.py:2 ]]" in text


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_local_outputs(fmt: str) -> None:
    out = io.StringIO()
    LocalPublisher(fmt, stream=out).publish(golden_result())
    _check(f"local.{fmt}", out.getvalue())


def test_json_has_the_summary_fields() -> None:
    data = json.loads(format_result(golden_result(), "json"))
    assert data["verdict"] == {
        "text": "Blocking: 2 errors (fail-on: error) · 2 dismissed",
        "blocking": True,
        "fail_on": "error",
        "severities": {"info": 1, "warning": 3, "error": 2},
        "origins": {"model": 5, "ruff": 1},
        "carried": 0,
        "dismissed": 2,
    }
    assert [w["label"] for w in data["walkthrough"]["entries"]][-1] == "docs/*"
    assert [u["why"] for u in data["not_placed"]] == ["ambiguous", "outside the diff"]
    assert data["details"]["skipped"][0] == {"files": "assets/logo.png", "why": "binary"}
    assert [d["by"] for d in data["dismissed"]] == ["alice", ".nova.toml"]


def test_actions_job_summary(tmp_path: Path) -> None:
    summary = tmp_path / "step-summary.md"
    ActionsOutput(GitHubSettings(step_summary=str(summary))).publish(golden_result())
    _check("actions-job-summary.md", summary.read_text(encoding="utf-8"))


def test_over_the_cap_row_says_so() -> None:
    result = golden_result()
    body = render_summary(
        result,
        outside=[Listed(p, OVER_CAP, "1 inline comments per run") for p in result.placed],
        notes=[],
        clean=clean_text,
        host="GitHub",
        limit=65_536,
    )
    assert body.count("over the cap: 1 inline comments per run") == 4


def test_untrusted_text_cannot_open_or_close_a_fold() -> None:
    result = golden_result()
    hostile = "</details><details open><summary>x</summary> hide the rest"
    result.placements[4] = Placement(
        Comment("src/pay/api.py", 3, hostile), path="src/pay/api.py", reason=hostile
    )
    result.walkthrough.append(Walk("</Details>", "<details>"))
    result.notes.append(hostile)
    body = render_summary(result, notes=[], clean=clean_text, host="GitHub", limit=65_536)
    assert body.count("<details>") == body.count("</details>") == 2  # Nova's own folds
    assert "&lt;/details>&lt;details open>&lt;summary>x&lt;/summary>" in body


def test_a_big_changes_batch_summaries_fold_after_the_first() -> None:
    result = golden_result()
    result.summary = "Part one.\n\nPart two.\n\nPart three."
    body = render_summary(result, notes=[], clean=clean_text, host="GitHub", limit=65_536)
    opened = read_markdown(body)
    assert "Part one." in opened.open and "Part three." in opened.folded
    assert "<details><summary>2 more parts</summary>" in body
