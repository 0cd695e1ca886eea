"""Calls added to the project's own tests, end to end: a change is reached only after a
sequence of calls no test makes. An image's blocks are loaded from text as ``bytes``;
overwriting a part of a loaded block fails on the parent (``bytes`` cannot be assigned
to) and works on the head (each block now holds a ``bytearray``). One test loads, another
overwrites a block it made itself: neither reaches the change. A copy of the loading test
with the overwriting call added (its arguments taken from the other test) does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.testgen.amplify_calls import add_calls, call_plan, reaching
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

CORE = """
class _Block:
    def __init__(self, start, data):
        self.start = start
        self.data = data

    def end(self):
        return self.start + len(self.data)


class Image:
    def __init__(self):
        self._blocks = []

    def load(self, text):
        \"\"\"Blocks from words ``start:hex``.\"\"\"
        for word in text.split():
            start, digits = word.split(":")
            self._blocks.append(_Block(int(start), bytes.fromhex(digits)))

    def put(self, start, data, overwrite=False):
        for block in self._blocks:
            if block.start <= start < block.end():
                if not overwrite:
                    raise ValueError(f"{start} is taken")
                at = start - block.start
                block.data[at : at + len(data)] = data
                return
        self._blocks.append(_Block(start, bytearray(data)))

    def dump(self):
        return b"".join(bytes(b.data) for b in sorted(self._blocks, key=lambda b: b.start))
"""

# the change: a block holds a bytearray whatever it was given
CORE_NEW = CORE.replace("self.data = data\n", "self.data = bytearray(data)\n")
# a change that keeps behaviour: the same two attributes, bound at once
CORE_SAME = CORE.replace(
    "        self.start = start\n        self.data = data\n",
    "        self.start, self.data = start, data\n",
)

TESTS = """
import pytest

from imgpack.core import Image


def test_load():
    img = Image()
    img.load("0:0102 8:0304")
    assert img.dump() == b"\\x01\\x02\\x03\\x04"


def test_put_overwrites():
    img = Image()
    img.put(0, b"ab")
    img.put(1, b"c", overwrite=True)
    assert img.dump() == b"ac"


def test_put_taken():
    img = Image()
    img.put(0, b"ab")
    with pytest.raises(ValueError):
        img.put(1, b"c")
"""

BASE = {"imgpack/__init__.py": "", "imgpack/core.py": CORE, "tests/test_core.py": TESTS}


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("image"),
        BASE,
        {"imgpack/core.py": CORE_NEW},
        "a loaded block can be overwritten",
    )
    return data


def test_a_copy_with_a_call_added_after_the_tests_own_catches_the_sequence(
    image: dict[str, Any],
) -> None:
    facts = amplified(image, "put")
    assert facts, image["notes"]
    fact = facts[0]
    # the copy names the project's test it came from and the call added to it
    assert str(fact["amplifies"]).startswith("tests/test_core.py::test_load__c"), fact
    assert "added call" in str(fact["amplifies"]) and "img.put(" in str(fact["amplifies"])
    assert "TypeError" in str(fact["parent"]) and "TypeError" not in str(fact["head"])
    assert any("with one call added" in n for n in image["notes"]), image["notes"]


def test_the_written_test_reads_as_the_body_then_the_added_call_then_the_assert(
    image: dict[str, Any],
) -> None:
    patch = Path(image["patch"]).read_text(encoding="utf-8")
    body = patch[patch.index("def test_load__c") :]
    rows = [r.lstrip("+").strip() for r in body.splitlines()]
    load = rows.index("img.load('0:0102 8:0304')")
    comment = rows.index("# the call Nova added after the test's own code")
    # the test's own statements, the comment, then the added call with head's outcome
    # asserted (on the call itself, or after it)
    assert load < comment, body[:600]
    assert "img.put(1, b'c', overwrite=True)" in rows[comment + 1], body[:600]
    assert any(r.startswith("assert ") for r in rows[comment + 1 : comment + 4]), body[:600]
    files = {case["path"] for case in image["kept"]}
    assert not any("test_nova_vary_" in f for f in files), files


def test_a_change_that_keeps_behaviour_gets_no_claim(tmp_path: Path) -> None:
    _repo, data = sample_testgen(
        tmp_path, BASE, {"imgpack/core.py": CORE_SAME}, "bind both at once", exits=(0, 1, 4)
    )
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]
    assert any("with one call added" in n for n in data["notes"]), data["notes"]


def test_the_methods_that_reach_a_changed_constructor_and_the_calls_made_of_them() -> None:
    assert reaching(CORE_NEW, "_Block.__init__") == {"Image": ["load", "put"]}
    plan = call_plan([(CORE_NEW, "_Block.__init__", [5])], [TESTS])
    # the calls that give most arguments first; none with a name the test cannot see
    assert plan.arguments["put"][0] == "1, b'c', overwrite=True"
    text, made = add_calls(TESTS, "test_load", plan, 2)
    assert [v.name for v in made] == ["test_load__c1", "test_load__c2"]
    assert "img.put(1, b'c', overwrite=True)" in made[0].description
    compile(text, "<copies>", "exec")
    assert text.startswith(TESTS)  # the module's own text stays byte for byte
    # a test that builds no object of a reaching class gets no copy
    assert add_calls("def test_x():\n    assert 1\n", "test_x", plan, 2) == (
        "def test_x():\n    assert 1\n",
        [],
    )
