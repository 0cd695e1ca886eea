"""Hypothesis properties (150 examples each, see conftest) of the diff model and events."""

from __future__ import annotations

import difflib
import json
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from bot.change import Comment
from bot.diff import anchor, parse_diff, render_files
from bot.diff.anchor import build_index, normalize_code
from bot.events import (
    DoneEvent,
    ErrorEvent,
    FileOperationEvent,
    StepEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    event_from_dict,
)

# Lines that look like diff syntax and numbered output, to stress both.
line_text = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "x = 1",
            "+ plus",
            "- minus",
            "12 + fake",
            "@@ -1 +1 @@",
            "NEW_LINE_3: x",
            "return x",
            "\\ no",
        ]
    ),
    st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=12),
)
texts = st.lists(line_text, max_size=25)


def make_diff(path: str, old: list[str], new: list[str], context: int) -> str:
    body = list(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=context, lineterm=""))
    if not body:
        return ""
    return f"diff --git a/{path} b/{path}\n" + "\n".join(body) + "\n"


@pytest.mark.slow
@given(old=texts, new=texts, context=st.integers(0, 4))
def test_parsed_numbers_are_the_true_file_lines(old, new, context) -> None:
    files = parse_diff(make_diff("f.txt", old, new, context))
    for f in files:
        for h in f.hunks:
            for ln in h.lines:
                if ln.new_no is not None:
                    assert new[ln.new_no - 1] == ln.text
                if ln.old_no is not None:
                    assert old[ln.old_no - 1] == ln.text


@pytest.mark.slow
@given(old=texts, new=texts)
def test_full_context_diff_reconstructs_the_new_file(old, new) -> None:
    assume(old != new)
    (f,) = parse_diff(make_diff("f.txt", old, new, 10_000))
    new_side = [ln.text for h in f.hunks for ln in h.lines if ln.kind != "removed"]
    assert new_side == new


_COMPACT = re.compile(r"^(\d+)(?: ([+ ]) (.*)| (\+))?$")
_LABELED = re.compile(r"^NEW_LINE_(\d+): ([+ ]) (.*)$")
_MORE = re.compile(r"^~ (\d+) more deleted lines$")


def _compact_rows(rendered: str) -> tuple[dict[int, tuple[str, str]], int]:
    """{new number: (mark, text)} of the numbered rows, and the deleted lines accounted for
    (shown, or counted in a "~ N more deleted lines" row). Fails on any other row."""
    numbered: dict[int, tuple[str, str]] = {}
    deleted = 0
    last = 0
    for row in rendered.split("\n"):
        if not row or row.startswith(("File:", "@@")):
            last = 0 if row.startswith("File:") else last
            continue
        if row == "-" or row.startswith("- "):
            deleted += 1
        elif more := _MORE.match(row):
            deleted += int(more.group(1))
        else:
            m = _COMPACT.match(row)
            assert m, f"unreadable row {row!r}"
            number = int(m.group(1))
            assert number > last  # in order, each once
            last = number
            numbered[number] = ("+", "") if m.group(4) else (m.group(2) or " ", m.group(3) or "")
    return numbered, deleted


@pytest.mark.slow
@given(old=texts, new=texts, context=st.integers(0, 3), shown=st.integers(0, 4))
def test_rendered_new_numbers_equal_new_file_lines(old, new, context, shown) -> None:
    files = parse_diff(make_diff("f.txt", old, new, context))
    lines = [ln for f in files for h in f.hunks for ln in h.lines]
    added = {ln.new_no for ln in lines if ln.kind == "added"}
    commentable = {ln.new_no for ln in lines if ln.new_no is not None}
    numbered, deleted = _compact_rows(render_files(files, "compact", context=shown))
    for number, (mark, text) in numbered.items():
        assert new[number - 1] == text
        assert (mark == "+") == (number in added)
    # compaction hides unchanged lines only: every added line is shown, every deleted one
    # is shown or counted, every shown number is commentable
    assert added <= numbered.keys() <= commentable
    assert deleted == sum(1 for ln in lines if ln.kind == "removed")
    full, _ = _compact_rows(render_files(files, "compact", context=10_000))
    assert full.keys() == commentable
    for row in render_files(files, "labeled", context=shown).split("\n"):
        m = _LABELED.match(row)
        if m:
            assert new[int(m.group(1)) - 1] == m.group(3)


@pytest.mark.slow
@given(old=texts, new=texts, shown=st.integers(0, 4))
def test_unchanged_lines_near_a_change_are_shown(old, new, shown) -> None:
    files = parse_diff(make_diff("f.txt", old, new, 6))
    numbered, _ = _compact_rows(render_files(files, "compact", context=shown))
    for f in files:
        for h in f.hunks:
            changes = [i for i, ln in enumerate(h.lines) if ln.kind != "context"]
            for i, ln in enumerate(h.lines):
                near = any(abs(i - c) <= shown for c in changes)
                if ln.kind == "context" and near:
                    assert ln.new_no in numbered


comments = st.builds(
    Comment,
    path=st.sampled_from(["f.txt", "b/f.txt", "./f.txt", "g.txt", "", "x/f.txt"]),
    line=st.one_of(st.none(), st.integers(-2, 40)),
    body=st.just("finding"),
    end_line=st.one_of(st.none(), st.integers(0, 45)),
    code=st.one_of(st.none(), line_text),
    suggestion=st.one_of(st.none(), st.just("fixed")),
)


@pytest.mark.slow
@given(old=texts, new=texts, context=st.integers(0, 3), proposed=st.lists(comments, max_size=8))
def test_anchoring_never_loses_a_comment_nor_places_it_off_the_diff(
    old, new, context, proposed
) -> None:
    files = parse_diff(make_diff("f.txt", old, new, context))
    index = build_index(files)
    placements = anchor(proposed, files)
    assert [p.comment for p in placements] == proposed
    for p in placements:
        if p.placed:
            fi = index[p.path]
            assert p.line in fi.commentable
            if p.end_line is not None:
                assert all(n in fi.commentable for n in range(p.line, p.end_line + 1))
            if p.how in ("code", "exact", "translated") and p.comment.code:
                quoted = normalize_code(
                    p.comment.code.strip("\n").split("\n")[0] if p.comment.code.strip() else ""
                )
                assert (
                    not quoted
                    or quoted in normalize_code(fi.commentable[p.line])
                    or normalize_code(
                        re.sub(r"^\s*(?:NEW_LINE_\d+:|\d+\s)?\s*\+?\s*", "", p.comment.code)
                    )
                    in normalize_code(fi.commentable[p.line])
                )
        else:
            assert p.reason


@pytest.mark.slow
@given(old=texts, new=texts, context=st.integers(0, 3), data=st.data())
def test_quoting_a_unique_line_places_it_there_whatever_the_number(old, new, context, data) -> None:
    files = parse_diff(make_diff("f.txt", old, new, context))
    index = build_index(files)
    assume(files)
    fi = index["f.txt"]
    unique = [
        n
        for n, t in fi.commentable.items()
        if normalize_code(t)
        and len(fi.by_text[normalize_code(t)]) == 1
        and not any(
            normalize_code(t) in normalize_code(o) and m != n for m, o in fi.commentable.items()
        )
    ]
    assume(unique)
    target = data.draw(st.sampled_from(unique))
    claimed = data.draw(st.integers(1, 60))
    (p,) = anchor([Comment("f.txt", claimed, "b", code=fi.commentable[target])], files)
    assert p.placed and p.line == target


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
timestamps = st.floats(0, 4e9, allow_nan=False)
events = st.one_of(
    st.builds(TextEvent, content=st.text(), is_final=st.booleans(), timestamp=timestamps),
    st.builds(
        ToolCallEvent,
        tool_name=st.text(),
        tool_call_id=st.text(),
        tool_args=st.dictionaries(st.text(max_size=5), json_values, max_size=3),
        timestamp=timestamps,
    ),
    st.builds(
        ToolResultEvent,
        tool_call_id=st.text(),
        result=json_values,
        status=st.sampled_from(["success", "error"]),
        timestamp=timestamps,
    ),
    st.builds(
        FileOperationEvent,
        operation=st.sampled_from(["read", "write", "edit"]),
        file_path=st.text(),
        metrics=st.dictionaries(st.text(max_size=5), st.integers()),
        diff=st.none() | st.text(),
        timestamp=timestamps,
    ),
    st.builds(
        StepEvent,
        step_name=st.text(),
        message=st.text(),
        timestamp=timestamps,
        status=st.sampled_from(["running", "completed", "failed", "skipped"]),
    ),
    st.builds(ErrorEvent, error=st.text(), recoverable=st.booleans(), timestamp=timestamps),
    st.builds(
        DoneEvent,
        token_usage=st.none() | st.dictionaries(st.text(max_size=5), st.integers()),
        cancelled=st.booleans(),
        timestamp=timestamps,
    ),
)


@given(event=events)
def test_events_round_trip_through_to_dict_and_json(event) -> None:
    data = event.to_dict()
    assert data["event_type"] == event.event_type and "timestamp" in data
    again = event_from_dict(json.loads(json.dumps(data)))
    assert again == event


# Few distinct texts, so lines repeat, prefix one another and differ only in indentation.
twin_text = st.sampled_from(
    [
        "if a:",
        "    if a:",
        "return x",
        "return x + 1",
        "pass",
        "}",
        "x = compute(a, b)",
        "x = compute(a, b, c)",
        "",
    ]
)


def _singles_out(claimed: int | None, line: int, matches: list[int], fi) -> bool:
    if claimed is None:
        return False
    if line in (claimed, fi.old_to_new.get(claimed)):
        return True
    d = abs(line - claimed)
    return d <= 2 and all(abs(m - claimed) >= d + 10 for m in matches if m != line)


@pytest.mark.slow
@given(
    old=st.lists(twin_text, max_size=40),
    new=st.lists(twin_text, max_size=40),
    context=st.integers(0, 3),
    data=st.data(),
)
def test_a_quote_of_several_lines_is_placed_only_where_the_claim_singles_one_out(
    old, new, context, data
) -> None:
    files = parse_diff(make_diff("f.txt", old, new, context))
    assume(files)
    fi = build_index(files)["f.txt"]
    assume(fi.commentable)
    target = data.draw(st.sampled_from(sorted(fi.commentable)))
    text = fi.commentable[target]
    quote = data.draw(
        st.sampled_from(
            [text, "  " + text.strip(), text.strip() + " ", text[: max(1, len(text) * 2 // 3)]]
        )
    )
    old_no = {n: o for o, n in fi.old_to_new.items()}.get(target, target)
    claimed = data.draw(
        st.sampled_from([target, old_no, target + 1, target - 2, None, 100_000 + target])
        | st.integers(-5, 90)
    )
    (p,) = anchor([Comment("f.txt", claimed, "b", code=quote)], files)
    key = normalize_code(quote)
    matches = sorted(n for n, t in fi.commentable.items() if normalize_code(t).startswith(key))
    if p.placed:
        assert p.line in fi.commentable
    if key and len(matches) > 1:
        assert not p.placed or _singles_out(claimed, p.line, matches, fi), (matches, p)
        if p.placed and fi.normalized[p.line] != key:  # the quote is only its start
            assert not [
                m
                for m in matches
                if abs(m - p.line) <= 2 and fi.normalized[m] != fi.normalized[p.line]
            ], (matches, p)
        if not p.placed:
            assert "ambiguous" in p.reason
    if key and len(matches) == 1:
        assert p.line == matches[0]
