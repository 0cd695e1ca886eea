"""Test amplification of calls made inside a loop over a table of cases (a
``with self.subTest`` in it too), as a list comprehension's element, and inside a
``pytest.raises`` block: the loop is kept and the call's values are collected and
asserted after it; a comprehension is asserted whole; a raises block asserts the
head's own exception (or head's value where head no longer raises)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.testgen.amplify import (
    Difference,
    Observed,
    Written,
    _chosen,
    _differences,
    _worth_confirming,
    amplified_module,
    amplified_test,
    unpinned,
)
from bot.testgen.matrix import Target
from tests.testgen.sample import caught, sample_testgen
from tests.testgen.test_mech_amplify import GREET as LOUD
from tests.testgen.test_mech_amplify import amplified

# the Greeter of test_mech_amplify, whose loud greeting of nobody raises
GREET = LOUD.replace(
    '        if style == "loud":\n',
    '        if style == "loud":\n'
    "            if not self.said:\n"
    '                raise ValueError("nothing to say")\n',
)
assert "nothing to say" in GREET
# and a plain function, whose change the differential generator pins by itself
GREET += """

def initials(name):
    return name[:1].upper()
"""

# the change: a loud greeting ends with two marks; an empty loud one says why otherwise
GREET_NEW = (
    GREET.replace('.upper() + "!"', '.upper() + "!!"')
    .replace('"nothing to say"', '"nothing said yet"')
    .replace("name[:1]", "name[:2]")
)

TESTS = """
import unittest

import pytest

from greet.core import Greeter, initials

CASES = [("bob", "BOB"), ("ann", "ANN")]


def fed(*names):
    g = Greeter()
    for name in names:
        g.feed(name)
    return g


def test_loud_table(monkeypatch):
    monkeypatch.setenv("GREET_STYLE", "loud")
    for name, expected in CASES:
        g = fed(name)
        assert g.shout().startswith(expected)


def test_initials():
    assert initials("bob").startswith("B")


def test_silent(monkeypatch):
    monkeypatch.setenv("GREET_STYLE", "loud")
    g = fed()
    with pytest.raises(ValueError):
        g.shout()


class TestLoud(unittest.TestCase):
    def setUp(self):
        patch = pytest.MonkeyPatch()
        patch.setenv("GREET_STYLE", "loud")
        self.addCleanup(patch.undo)

    def test_each(self):
        for name in ("eve", "joe"):
            with self.subTest(name=name):
                self.assertIn(name.upper(), fed(name).shout())
"""


@pytest.fixture(scope="module")
def greet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("greet"),
        {"greet/__init__.py": "", "greet/core.py": GREET, "tests/test_core.py": TESTS},
        {"greet/core.py": GREET_NEW},
        "a loud greeting ends with two marks",
    )
    return data


def test_a_call_in_a_loop_over_a_table_is_collected_and_asserted_after_it(
    greet: dict[str, Any],
) -> None:
    facts = [f for f in amplified(greet, "g.shout()") if "test_loud_table" in f["amplifies"]]
    assert facts, greet["notes"]
    assert facts[0]["head"] == "['BOB!!', 'ANN!!']"
    assert facts[0]["parent"] == "['BOB!', 'ANN!']"


def test_a_call_in_a_sub_test_loop_is_collected(greet: dict[str, Any]) -> None:
    facts = [f for f in amplified(greet, "shout()") if "TestLoud::test_each" in f["amplifies"]]
    assert facts, greet["notes"]
    assert facts[0]["head"] == "['EVE!!', 'JOE!!']"


def test_a_call_in_a_raises_block_asserts_the_heads_exception(greet: dict[str, Any]) -> None:
    facts = [f for f in amplified(greet, "g.shout()") if "test_silent" in f["amplifies"]]
    assert facts, greet["notes"]
    assert "nothing said yet" in facts[0]["head"] and "nothing to say" in facts[0]["parent"]


def test_a_target_the_differential_generator_pins_is_left_to_it_the_others_amplified(
    greet: dict[str, Any],
) -> None:
    assert caught(greet, "initials("), greet["notes"]
    assert any(
        n.startswith("amplify: the differential generator pins") and "1 changed target" in n
        for n in greet["notes"]
    ), greet["notes"]
    assert not amplified(greet, "initials(")


def _value(text: str) -> dict[str, Any]:
    return {"kind": "value", "value": text, "imports": []}


LOOP = """
def test_table():
    seen = 0
    for text, expected in [("a", 1), ("b", 2)]:
        n = size(text)
        assert n >= expected
        seen += 1
    assert seen == 2
"""


def test_a_bound_value_in_a_loop_is_collected_after_its_statement() -> None:
    head = [_value("1"), _value("3")]
    d = Difference("t.py::test_table", 5, "size", 1, head[1], _value("2"))
    d.series = (head, [_value("1"), _value("2")])
    written = amplified_test(LOOP, d)
    assert not isinstance(written, str), written
    text = amplified_module(LOOP, [(["test_table"], written)])
    compile(text, "t.py", "exec")
    assert "    got = []\n    for text, expected in" in text
    assert "        n = size(text)\n        got.append(n)\n        assert n >= expected" in text
    # the statements after the loop are cut: head's values are asserted there
    assert text.rstrip().endswith("        seen += 1\n    assert got == [1, 3]")


def test_a_loop_whose_values_have_no_source_form_is_not_written() -> None:
    obj = {"kind": "object", "repr": None, "facts": []}
    d = Difference("t.py::test_table", 5, "size", 0, obj, _value("2"))
    d.series = ([obj, _value("3")], [_value("1"), _value("2")])
    assert "source form" in str(amplified_test(LOOP, d))


COMPREHENSION = """
def test_sizes():
    sizes = [size(t) for t in ("a", "bb")]
    assert all(sizes)
"""


def test_a_list_comprehension_of_the_call_is_asserted_whole() -> None:
    d = Difference("t.py::test_sizes", 3, "size", 1, _value("3"), _value("2"))
    d.series = ([_value("1"), _value("3")], [_value("1"), _value("2")])
    written = amplified_test(COMPREHENSION, d)
    assert not isinstance(written, str), written
    assert written.lines[-1] == "    assert sizes == [1, 3]"


RAISES = """
import pytest


def test_bad():
    with pytest.raises(ValueError) as info:
        p = parse("x")
        p.check()
    assert "x" in str(info.value)
"""


def test_a_call_that_no_longer_raises_in_a_raises_block_asserts_heads_value() -> None:
    d = Difference(
        "t.py::test_bad",
        7,
        "parse",
        0,
        _value("'ok'"),
        {"kind": "raises", "type": "ValueError", "message": "bad x"},
    )
    written = amplified_test(RAISES, d)
    assert not isinstance(written, str), written
    assert written.lines[-2:] == ["    p = parse('x')", "    assert p == 'ok'"]


def _observed(**calls: list[dict[str, Any]]) -> Observed:
    """One run: test name -> the outcomes of its calls (all at line 5 of ``f``)."""
    return Observed(
        tests={
            f"t.py::{name}": {
                "changed": True,
                "passed": True,
                "calls": [{"line": 5, "name": "f", "index": i, **o} for i, o in enumerate(found)],
            }
            for name, found in calls.items()
        }
    )


def test_a_difference_in_a_runs_own_part_waits_and_a_real_one_is_kept() -> None:
    def runs(side: str, ident: str) -> Observed:
        return _observed(
            # an object's id as a plugin's name, a set of classes in the order of their ids
            test_ids=[_value(f"'{ident}'"), _value("{<class 'B'>, <class 'A'>}")],
            test_real=[_value(f"'{ident}'"), _value(f"'{side}'")],
            # a big number that is the same in every run of a side is a value like any
            test_big=[_value("123456789012345" if side == "new" else "123456789012346")],
        )

    head, head2 = runs("new", "139891082022160"), runs("new", "140413268114384")
    parent, parent2 = runs("old", "140137056325776"), runs("old", "139636707604944")
    ran = ["t.py::test_ids", "t.py::test_big", "t.py::test_real"]
    # all three differ in one run of each side; the one that differs beyond ids comes first
    assert _worth_confirming(ran, head, parent) == [
        "t.py::test_real",
        "t.py::test_ids",
        "t.py::test_big",
    ]
    # two runs of each side: the ids are no difference, the real ones are
    found = {n: _differences(n, head, head2, [parent, parent2]) for n in ran}
    assert found["t.py::test_ids"] == []
    assert [(d.index, d.head["value"]) for d in found["t.py::test_real"]] == [(1, "'new'")]
    assert [d.head["value"] for d in found["t.py::test_big"]] == ["123456789012345"]


def _one_module(tmp: Path, package: str, old: str, new: str, tests: str) -> list[dict[str, Any]]:
    """`nova testgen` on a package of one module changed from ``old`` to ``new`` with one
    test file: the facts of its amplified tests claimed as catching."""
    _repo, data = sample_testgen(
        tmp,
        {f"{package}/__init__.py": "", f"{package}/core.py": old, "tests/test_core.py": tests},
        {f"{package}/core.py": new},
        f"{package} changed",
    )
    facts = amplified(data, "")
    assert facts, data["notes"]
    return facts


DEADLINE = """
import asyncio


class Deadline:
    def __init__(self, delay):
        self.delay = delay
        self.expired = False

    async def __aenter__(self):
        self.task = asyncio.current_task()
        self.handle = asyncio.get_running_loop().call_later(self.delay, self._expire)
        return self

    def _expire(self):
        self.expired = True
        self.task.cancel()

    async def __aexit__(self, kind, exc, tb):
        self.handle.cancel()
        if kind is asyncio.CancelledError and self.expired:
            raise TimeoutError("expired") from exc
        return None
"""

# the change: an expired deadline takes back the cancellation it made of its task
DEADLINE_NEW = DEADLINE.replace(
    "            raise TimeoutError",
    "            self.task.uncancel()\n            raise TimeoutError",
)

DEADLINE_TESTS = """
import asyncio

import pytest

from late.core import Deadline


@pytest.mark.asyncio
async def test_expires():
    with pytest.raises(TimeoutError):
        async with Deadline(0):
            await asyncio.sleep(1)
"""


def test_what_an_async_with_leaves_in_the_tests_own_task_is_asserted(
    tmp_path: Path,
) -> None:
    facts = _one_module(tmp_path, "late", DEADLINE, DEADLINE_NEW, DEADLINE_TESTS)
    facts = [f for f in facts if f["call"] == "asyncio.current_task().cancelling()"]
    assert facts
    assert facts[0]["amplifies"] == "tests/test_core.py::test_expires"
    assert (facts[0]["head"], facts[0]["parent"]) == ("0", "1")


WORDS = """
import os


def collect(text, out):
    sep = os.environ.get("WORDS_SEP", " ")
    for word in text.split(sep):
        out.append(word.lower())
"""

# the change: the words collected are stripped of the spaces around them
WORDS_NEW = WORDS.replace("word.lower()", "word.strip().lower()")

WORDS_TESTS = """
from words.core import collect


def test_collect(monkeypatch):
    monkeypatch.setenv("WORDS_SEP", ",")
    out = []
    collect("A, B", out)
    assert len(out) == 2
"""


def test_what_a_call_left_in_a_list_the_test_passed_it_is_asserted(tmp_path: Path) -> None:
    facts = _one_module(tmp_path, "words", WORDS, WORDS_NEW, WORDS_TESTS)
    assert facts[0]["call"] == "out"
    assert (facts[0]["head"], facts[0]["parent"]) == ("['a', 'b']", "['a', ' b']")


def test_a_target_is_pinned_by_the_call_a_pinning_fact_makes_or_what_it_reaches() -> None:
    targets = [
        Target("m.py", "Box.__init__", "modified", [3]),
        Target("m.py", "Box.pack", "modified", [5]),
        Target("m.py", "_helper", "modified", [9]),
        Target("m.py", "other", "modified", [12]),
    ]
    facts = {
        "tests/test_nova_m.py": {
            "test_pack": [
                {"call": "box = Box(1); box.pack()", "changed": True, "reaches": ["_helper"]}
            ],
            # a fact of a new name, or one that does not differ, pins nothing
            "test_other": [
                {"call": "other(1)", "changed": True, "new_name": True, "reaches": []},
                {"call": "other(2)", "changed": False, "reaches": []},
            ],
        }
    }
    assert [t.qualname for t in unpinned(targets, facts)] == ["Box.__init__", "other"]


def test_one_difference_seen_by_many_tests_is_written_a_few_times_originals_first() -> None:
    targets = [Target("m.py", f"f{i}", "modified", [i]) for i in range(1, 6)]
    tests = [
        (f"t.py::test_{i}", "test_0, line 3: 1 -> 2" if i < 3 else "") for i in range(6)
    ]  # two variants first, then four of the project's own tests
    found = [
        (Difference(n, 3, "f1", 0, _value("0"), _value("1"), variant=v), Written([], []))
        for n, v in tests
    ]
    chosen = _chosen(found, targets, {"m.py": [1, 2, 3, 4, 5]})
    assert [d.node for d, _ in chosen] == ["t.py::test_3", "t.py::test_4", "t.py::test_5"]
