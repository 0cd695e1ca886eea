"""Bodies stay within each host's limit, the most important parts kept when cut."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.change import Change, Comment, FileDiff, Placement
from bot.report.digest import OVER_CAP, Listed
from bot.report.fit import Part, fit
from bot.report.summary import render_summary
from bot.report.untrusted import clean_text
from bot.review.result import ReviewResult, Walk


def _big(n: int, body: str = "x" * 300) -> ReviewResult:
    files = tuple(FileDiff(f"d{i}/f.py", f"d{i}/f.py", "modified") for i in range(50))
    change = Change("o/r#1", "github", head_ref="b" * 40, files=files)
    placements = [
        Placement(Comment(p, i + 1, f"{body} {i}", severity="error"), path=p, line=i + 1)
        for i in range(n)
        for p in [f"d{i % 50}/f.py"]
    ]
    notes = [f"skipped d{i}/k.pem: excluded: certificate or key (*.pem)" for i in range(40)]
    walk = [Walk(f"d{i}/f.py", "changes f") for i in range(50)]
    return ReviewResult(change, "s", placements, notes=notes, walkthrough=walk, fail_on="error")


@pytest.mark.parametrize("limit", [3_000, 8_000, 20_000, 65_536])
def test_a_cut_summary_keeps_verdict_walkthrough_and_markers(limit: int) -> None:
    result = _big(400)
    body = render_summary(
        result,
        outside=[Listed(p, OVER_CAP, "30 per run") for p in result.placements],
        notes=[],
        clean=clean_text,
        host="GitHub",
        limit=limit,
    )
    assert len(body) <= limit
    assert "**Blocking: 400 errors (fail-on: error)**" in body
    assert "400 findings: 400 errors, 0 warnings, 0 info" in body
    assert body.endswith("<!-- nova:verdict:error=400,warning=0,info=0,failed=0 -->")
    assert "(cut at GitHub's limit)" in body
    assert body.index("### Walkthrough") < body.index("### Not posted inline")
    assert "- `d0/f.py` — changes f" in body  # the walkthrough goes before the findings
    assert body.count("<details>") == body.count("</details>")  # a cut fold still closes


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.lists(st.text(max_size=300), max_size=30)), max_size=8
    ),
    st.integers(300, 5_000),
)
def test_fit_never_goes_over_and_keeps_the_first_rank_whole(
    parts: list[tuple[int, list[str]]], limit: int
) -> None:
    top = Part(0, ["## verdict", "counts"])
    body = fit(
        [top, *(Part(rank, ["#"], rows, name=f"p{rank}") for rank, rows in parts)], limit, where="H"
    )
    assert len(body) <= limit
    assert body.startswith("## verdict\ncounts")


def test_the_job_summary_stays_within_githubs_mebibyte() -> None:
    from bot.report.formats import format_result

    text = format_result(_big(3000, body="😀" * 400), "markdown")
    assert len(text.encode("utf-8")) <= 1_048_576
    assert "**Blocking: 3000 errors (fail-on: error)**" in text
    assert "(cut at the job summary's limit)" in text
