"""Structural edits of the tests' text inputs (issue 35): a bracketed group emptied
(``{ x: 1 }`` -> ``{}``), a separated list cut to one item, grown by a duplicate, given an
empty item or a trailing separator, one edit at a time. A parser's changed branch for an
empty group, which no test text reaches and whose changed line has no literal to steer
with, is caught in a real ``nova testgen`` run; a separator-splitting helper rewritten
with the same behaviour gets its lists edited and nothing is claimed for it."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.amplify_inputs import add_variants, steer_from_change
from bot.testgen.inputs import Candidate
from bot.testgen.text_edits import edited, edits, marks, row_marks
from tests.testgen.sample import caught, sample_testgen

BLOCKS = '''def parse_block(text):
    """``"point { x: 1, y: 2 }"`` gives ``("point", {"x": "1", "y": "2"})``."""
    name, _, rest = text.partition("{")
    if not name.strip() or not rest.rstrip().endswith("}"):
        raise ValueError("a block is a name and fields in braces")
    body = rest.rsplit("}", 1)[0].strip()
    if not body:
        return name.strip(), None
    fields = {}
    for item in body.split(","):
        key, _, value = item.partition(":")
        fields[key.strip()] = value.strip()
    return name.strip(), fields
'''
TAGS = '''def split_tags(text):
    """``"a, b"`` gives ``["a", "b"]``."""
    return [t.strip() for t in text.split(",") if t.strip()]
'''
TESTS = """from blocks.blocks import parse_block
from blocks.tags import split_tags


def test_parse_block():
    assert parse_block("point { x: 1, y: 2 }") == ("point", {"x": "1", "y": "2"})


def test_split_tags():
    assert split_tags("red, green") == ["red", "green"]
"""


def test_an_empty_group_reaches_a_changed_branch_and_a_kept_behaviour_claims_nothing(
    tmp_path: Path,
) -> None:
    base = {
        "blocks/__init__.py": "",
        "blocks/blocks.py": BLOCKS,
        "blocks/tags.py": TAGS,
        "tests/test_blocks.py": TESTS,
    }
    change = {
        # an empty block has fields now: none of them (the test's block has two)
        "blocks/blocks.py": BLOCKS.replace("return name.strip(), None", "return name.strip(), {}"),
        # the same tags, written otherwise (empty items were dropped before too)
        "blocks/tags.py": TAGS.replace(
            'return [t.strip() for t in text.split(",") if t.strip()]',
            'return list(filter(None, (t.strip() for t in text.split(","))))',
        ),
    }
    assert all(change[p] != base[p] for p in change)
    _repo, data = sample_testgen(tmp_path, base, change, "empty blocks, tags")
    emptied = caught(data, "parse_block(")
    assert any("point {}" in fact["call"] for fact in emptied), data["notes"]
    assert not caught(data, "split_tags("), data["kept"]


def test_one_edit_at_a_time_the_named_separators_first() -> None:
    assert edits("[1, 2]") == ["[]", "[1]", "[1, 2, 1]", "[1,, 2]", "[1, 2,]"]
    assert "f() <a>" in edits("f(x) <a>") and "f(x) <>" in edits("f(x) <a>")
    assert edits("f(a < b) [x]") == ["f(a < b) []", "f() [x]"]  # a ``<`` compares
    # a separator the change names: lists first, and put into a text that has none
    assert edits("a; b", (";",))[:2] == ["a", "a; b; a"]
    assert edits("upgrade", (",",)) == ["upgrade, upgrade", "upgrade,", ",upgrade"]
    assert edits("upgrade") == []  # nothing to edit, nothing named
    proto = "m { option (x) = { a: 1 }; }"
    assert edits(proto)[0] == "m { option (x) = {}; }"  # innermost braces first
    assert marks([",", "}", "a-b"]) == (",", "{")
    assert row_marks(['    parts = value.split(b";")', "    x = 1"]) == (";",)
    assert row_marks(['    re.split(r"[|,]\\s*", text)']) == ("|", ",")  # a class: its members


def test_the_differential_edits_text_arguments_and_wrapped_bytes() -> None:
    plain = Candidate(("'a, b'",), origin="tests")
    wrapped = Candidate(("io.BytesIO(b'[1, 2]')",), origin="tests")
    number = Candidate(("3",), origin="tests")
    out = edited([number, plain, wrapped], [","])
    args = [c.args[0] for c in out]
    assert "'a'" in args and "io.BytesIO(b'[]')" in args
    assert all(c.origin.endswith("(edited)") for c in out)
    assert not edited([number], [","])


def test_amplification_copies_a_test_with_its_list_edited_first() -> None:
    module = "from m import f\n\n\ndef test_f():\n    assert f('a, b') == 2\n"
    head = 'def f(s):\n    return len([x for x in s.split(",") if x])\n'
    parent = 'def f(s):\n    return len(s.split(","))\n'
    steer = steer_from_change(head, parent, {2})
    assert steer.marks == (",",)
    _text, variants = add_variants(module, "test_f", steer, limit=3)
    assert variants and "'a'" in variants[0].description, variants
