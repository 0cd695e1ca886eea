"""For any review result, on every surface: the counts in the verdict equal the findings,
and each finding appears exactly once across the inline comments and the summary."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.change import SEVERITIES, Change, Comment, FileDiff, Placement
from bot.hosts.phabricator.summary import Summary
from bot.report.digest import OVER_CAP, REFUSED, Listed
from bot.report.formats import format_result
from bot.report.summary import render_summary
from bot.report.untrusted import clean_text
from bot.review.result import Dismissal, ReviewResult
from tests.report.screen import read_markdown, read_remarkup, read_text

_WORDS = st.text(st.characters(exclude_characters="⟦⟧\x00", codec="utf-8"), max_size=40).filter(
    lambda t: "skipped" not in t.lower()  # the screen check looks for the word
)


@st.composite
def results(draw: st.DrawFn) -> tuple[ReviewResult, list[int]]:
    """A result with findings whose bodies carry a unique tag ``⟦n⟧``, and for each placed
    finding where a host put it: 0 inline, 1 over the cap, 2 refused, 3 inline earlier."""
    n = draw(st.integers(0, 25))
    placements = []
    for i in range(n):
        path = draw(st.sampled_from(["a.py", "src/b.py", "src/c/d.py", "e f.md"]))
        body = f"⟦{i}⟧ {draw(_WORDS)}"
        comment = Comment(
            path,
            draw(st.integers(1, 500)),
            body,
            severity=draw(st.sampled_from(SEVERITIES)),
            origin=draw(st.sampled_from(["llm", "ruff", "semgrep"])),
        )
        if draw(st.booleans()):
            placements.append(Placement(comment, path=path, line=comment.line))
        else:
            why = draw(st.sampled_from(["ambiguous: matches 2 lines", "line 9 is outside"]))
            placements.append(Placement(comment, path=path, reason=why))
    where = [draw(st.integers(0, 3)) for _ in placements]
    files = tuple(FileDiff(p, p, "modified") for p in ["a.py", "src/b.py", "src/c/d.py", "e f.md"])
    change = Change("o/r#1", "github", head_ref="a" * 40, url="http://x/D1", files=files)
    fail_on = draw(st.sampled_from(["error", "warning", "info", "never"]))
    dismissed = [
        Dismissal(
            Placement(Comment("a.py", 3, f"⟦d{i}⟧ {draw(_WORDS)}"), path="a.py", line=3),
            draw(st.sampled_from(["dismissed", "ignored"])),
            draw(_WORDS),
            draw(_WORDS),
        )
        for i in range(draw(st.integers(0, 3)))
    ]
    result = ReviewResult(change, draw(_WORDS), placements, fail_on=fail_on, dismissed=dismissed)
    return result, where


def _tags(text: str) -> list[int]:
    return [int(t) for t in re.findall(r"⟦(\d+)⟧", text)]


def _dismissed_once(result: ReviewResult, text: str) -> None:
    """Each dismissed finding listed once, counted beside the verdict, never in it."""
    assert sorted(re.findall(r"⟦d(\d+)⟧", text)) == [str(i) for i in range(len(result.dismissed))]
    assert (f"· {len(result.dismissed)} dismissed" in text) == bool(result.dismissed)


def _counts_agree(result: ReviewResult, text: str) -> None:
    m = re.search(r"(\d+) findings?: (\d+) errors?, (\d+) warnings?, (\d+) info", text)
    assert m, text[:400]
    severities = [p.comment.severity for p in result.placements]
    assert int(m[1]) == len(result.placements)
    assert [int(m[2]), int(m[3]), int(m[4])] == [
        severities.count("error"),
        severities.count("warning"),
        severities.count("info"),
    ]
    blocking = result.fail_on != "never" and any(
        SEVERITIES.index(s) >= SEVERITIES.index(result.fail_on) for s in severities
    )
    assert ("**Blocking" in text or "\nBlocking" in text) == blocking


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(results())
def test_host_summary_lists_each_finding_not_inline_once(case) -> None:  # type: ignore[no-untyped-def]
    result, where = case
    placed = [(p, w) for p, w in zip(result.placements, where, strict=True) if p.placed]
    why = {1: OVER_CAP, 2: REFUSED}
    outside = [Listed(p, why[w], "x") for p, w in placed if w in why]
    body = render_summary(
        result,
        posted=sum(w == 0 for _p, w in placed),
        inline_before=sum(w == 3 for _p, w in placed),
        outside=outside,
        notes=[],
        clean=clean_text,
        host="GitHub",
        limit=65_536,
    )
    _counts_agree(result, body)
    _dismissed_once(result, body)
    listed = {int(_tags(p.comment.body)[0]) for p in [*(x.placement for x in outside)]}
    listed |= {_tags(p.comment.body)[0] for p in result.unplaced}
    assert sorted(_tags(body)) == sorted(listed)  # once each; none of the inline ones
    assert read_markdown(body).problems(len(result.placements)) == []


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(results(), st.sampled_from(["inline", "lint", "summary"]))
def test_phabricator_comment_lists_each_finding_once(case, mode: str) -> None:  # type: ignore[no-untyped-def]
    result, _where = case
    fps = [(f"{i:016x}", p) for i, p in enumerate(result.placements)]
    summary = Summary(
        result,
        4567,
        {},
        mode=mode,
        placed=[(fp, p) for fp, p in fps if p.placed],
        unplaced=[(fp, p) for fp, p in fps if not p.placed],
        all_fps=[fp for fp, _p in fps],
    )
    body = summary.text()
    _counts_agree(result, body)
    _dismissed_once(result, body)
    shown = [p for p in result.placements if mode != "inline" or not p.placed]
    assert sorted(_tags(body)) == sorted(_tags(p.comment.body)[0] for p in shown)
    assert read_remarkup(body).problems(len(result.placements)) == []


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(results())
def test_terminal_and_json_list_every_finding_once(case) -> None:  # type: ignore[no-untyped-def]
    result, _where = case
    text = format_result(result, "text")
    _counts_agree(result, text)
    _dismissed_once(result, text)
    assert sorted(_tags(text)) == list(range(len(result.placements)))
    assert read_text(text).problems(len(result.placements)) == []
    data = json.loads(format_result(result, "json"))
    listed = [c["body"] for c in data["comments"]] + [u["body"] for u in data["unplaced"]]
    assert sorted(t for b in listed for t in _tags(b)) == list(range(len(result.placements)))
    assert sum(data["verdict"]["severities"].values()) == len(result.placements)
    assert len(data["not_placed"]) == len(result.unplaced)
