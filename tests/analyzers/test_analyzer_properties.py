"""Hypothesis properties of analyzer findings on the diff: whatever the diff and wherever
a linter reports, a finding placed inline is on a commentable line of the diff, on the
very line the tool named, and in the filter mode's set; nothing kept is lost."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.analyzers.collect import FILTER_MODES, analyze
from bot.analyzers.merge import combine
from bot.change import Change
from bot.diff import anchor, parse_diff
from bot.review.settings import ReviewSettings
from tests.diff.test_diff_properties import make_diff, texts

PATH = "web/f.js"

findings = st.lists(
    st.tuples(
        st.sampled_from([PATH, "web/other.js", "/elsewhere/web/f.js"]),
        st.none() | st.integers(1, 40),
    ),
    max_size=12,
)


@pytest.mark.slow
@given(
    old=texts,
    new=texts,
    context=st.integers(0, 3),
    found=findings,
    mode=st.sampled_from(FILTER_MODES),
)
def test_placed_findings_are_on_commentable_lines_of_the_filter_mode(
    old, new, context, found, mode
) -> None:
    files = tuple(parse_diff(make_diff(PATH, old, new, context)))
    change = Change(id="prop", source="git", files=files)
    lines = {
        ln.new_no: ln.kind
        for f in files
        for h in f.hunks
        for ln in h.lines
        if ln.new_no is not None
    }
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "lint.rdjsonl"
        results.write_text(
            "\n".join(
                json.dumps(
                    {
                        "message": f"finding {i}",
                        "location": {
                            "path": path,
                            "range": ({"start": {"line": line}} if line else {}),
                        },
                        "source": {"name": "prop"},
                    }
                )
                for i, (path, line) in enumerate(found)
            )
        )
        notes: list[str] = []
        settings = ReviewSettings(
            analyzers="none", analyzer_results=(str(results),), filter_mode=mode
        )
        kept = analyze(settings, change, None, Path(tmp), notes).comments
    to_anchor, held = combine(kept, [], files)
    placements = anchor(to_anchor, files) + held
    assert len(placements) == len(kept)  # nothing kept is lost
    for p in placements:
        if p.placed:
            assert p.path == PATH and p.line == p.comment.line  # the tool's own line
            assert p.line in lines
            if mode == "added":
                assert lines[p.line] == "added"
        else:
            assert mode in ("file", "nofilter")  # the others keep only diff lines
    for path, line in found:
        if path == PATH and line in lines and (mode != "added" or lines[line] == "added"):
            assert any(p.placed and p.line == line for p in placements)


@given(
    raw=st.text(st.sampled_from("ab/.\\:%~ -_") | st.characters(), max_size=40),
    base=st.sampled_from(["", "web", "web/sub"]),
)
def test_a_mapped_path_is_always_inside_the_repository(raw: str, base: str) -> None:
    from bot.analyzers.paths import Roots, repo_relative

    rel = repo_relative(raw, Roots(Path("/repo/root")), base)
    if rel is not None:
        assert not rel.startswith("/") and ".." not in rel.split("/") and rel not in ("", ".")
