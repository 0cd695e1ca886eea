"""Test amplification where the project's test runs the changed line but cannot tell the
sides apart, end to end on small projects (each test drives the code through an
environment variable, read beside the process id so that no input of the differential
generator is compared, or an object fed through several calls: nothing the differential
generator replays):

- ORDER: a dump now keeps its mapping's insertion order; the test's keys happen to be in
  sorted order. A copy with the dict reversed tells "sorted" from "as given", and a
  function returning a dict whose order changed is asserted by its repr (the dicts
  compare equal). A change that sorts before and after gets no claim.
- A LONG MESSAGE: the exception's text is longer than a ``match=`` holds; the written
  test compares it in full after its ``pytest.raises`` block.
- A PREFIX: the items are built in ``setUp``; a copy of the test rebinds them with one
  item starting with the changed condition's literal (``"**"``).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from bot.testgen.amplify import _chosen
from bot.testgen.amplify_checks import raised_checks, value_check
from bot.testgen.amplify_inputs import Steer
from bot.testgen.amplify_order import Aims, concerns_order, container_variants
from bot.testgen.amplify_write import Difference, Written
from bot.testgen.matrix import Target
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

CONF = """
import os


def dump(data):
    sep = os.environ.get("CONF_SEP", "=") if os.getpid() else "="  # the machine: no
    # input of the differential generator is compared (with none set either)
    return "\\n".join(f"{k}{sep}{v}" for k, v in sorted(data.items()))


def normalized(data):
    return dict(sorted(data.items()))
"""

# the release keeps the mapping's insertion order
CONF_NEW = CONF.replace("sorted(data.items())", "data.items()")

CONF_TESTS = """
from conf.core import dump, normalized


def test_dump(monkeypatch):
    monkeypatch.setenv("CONF_SEP", ": ")
    assert dump({"a": 1, "b": 2}) == "a: 1\\nb: 2"


def test_normalized(monkeypatch):
    monkeypatch.setenv("CONF_SEP", ": ")
    got = normalized({"a": 1, "b": [1, 2]})
    assert got == {"a": 1, "b": [1, 2]}
"""


@pytest.fixture(scope="module")
def conf(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("conf"),
        {"conf/__init__.py": "", "conf/core.py": CONF, "tests/test_core.py": CONF_TESTS},
        {"conf/core.py": CONF_NEW},
        "dump keeps the insertion order",
    )
    return data


def test_a_copy_with_the_dict_reversed_catches_a_dump_that_keeps_the_insertion_order(
    conf: dict[str, Any],
) -> None:
    facts = amplified(conf, "dump")
    assert facts, "\n".join(conf["notes"])
    assert "order reversed" in str(facts[0]["amplifies"])
    assert "b: 2\\na: 1" in str(facts[0]["head"])


def test_a_dict_that_only_changed_its_order_is_asserted_by_its_repr(
    conf: dict[str, Any],
) -> None:
    facts = amplified(conf, "normalized")
    assert facts, "\n".join(conf["notes"])
    assert "assert repr(got) == \"{'b': [2, 1], 'a': 1}\"" in Path(conf["patch"]).read_text(
        encoding="utf-8"
    )


def test_a_change_that_sorts_before_and_after_gets_no_claim(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    same = CONF.replace("sorted(data.items())", "sorted(data.items(), key=lambda kv: kv[0])")
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("sorted"),
        {"conf/__init__.py": "", "conf/core.py": CONF, "tests/test_core.py": CONF_TESTS},
        {"conf/core.py": same},
        "sort by the key alone",
    )
    assert any("input variant(s)" in n for n in data["notes"]), data["notes"]
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")]


CHECK = """
import os


class Invalid(Exception):
    pass


def check(items):
    limit = int(os.environ.get("CHECK_LIMIT", "100")) if os.getpid() else 100
    errors = {}
    for i, item in enumerate(items):
        if not isinstance(item, int) or item > limit:
            kind = type(item).__name__
            errors[i] = f"item {item!r} is not a whole number up to {limit} (a {kind})"
    if errors:
        raise Invalid("the list holds items of the wrong kind:\\n", errors)
    return len(items)
"""

CHECK_NEW = CHECK.replace("(a {kind})", "(it is a {kind})")

CHECK_TESTS = """
import pytest

from checks.core import Invalid, check


def test_check_rejects_words(monkeypatch):
    monkeypatch.setenv("CHECK_LIMIT", "10")
    with pytest.raises(Invalid):
        check([1, "two", 3, "four", "five", "six", "seven", "eight", "nine", "ten"])
"""


def test_a_long_message_is_compared_in_full_after_the_raises_block(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("check"),
        {"checks/__init__.py": "", "checks/core.py": CHECK, "tests/test_core.py": CHECK_TESTS},
        {"checks/core.py": CHECK_NEW},
        "say what the item is",
    )
    facts = amplified(data, "check")
    assert facts, "\n".join(data["notes"])
    patch = Path(data["patch"]).read_text(encoding="utf-8")
    assert "as excinfo" in patch
    assert "assert str(excinfo.value) ==" in patch


DOC = """
import os


class Doc:
    def __init__(self):
        self.lines = []

    @classmethod
    def _marked(cls, item):
        return item.startswith("-") or item.startswith("*")

    def add_list(self, items):
        marker = os.environ.get("DOC_MARKER", "-") if os.getpid() else "-"
        for item in items:
            self.lines.append(item if self._marked(item) else f"{marker} {item}")

    def render(self):
        return "\\n".join(self.lines)
"""

# an item in bold ("**word**") is not a marked item: it gets its marker now
DOC_NEW = DOC.replace('item.startswith("*")', 'item.startswith("*") and not item.startswith("**")')

DOC_TESTS = """
import unittest

from doc.core import Doc


class TestDoc(unittest.TestCase):
    def setUp(self):
        self.items = ["one", "two", "three"]

    def test_list(self):
        doc = Doc()
        doc.add_list(self.items)
        self.assertEqual(doc.render(), "- one\\n- two\\n- three")
"""


def test_a_setup_item_given_the_changed_literal_as_prefix_catches_the_change(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("doc"),
        {"doc/__init__.py": "", "doc/core.py": DOC, "tests/test_core.py": DOC_TESTS},
        {"doc/core.py": DOC_NEW},
        "a bold item gets its marker",
    )
    facts = amplified(data, "render")
    assert facts, "\n".join(data["notes"])
    assert "self.items: 'one' -> '**one'" in str(facts[0]["amplifies"])


def test_equal_values_written_otherwise_are_asserted_by_repr_never_a_sets() -> None:
    dicts = value_check(
        "got", {"value": "{'b': 1, 'a': 2}"}, {"kind": "value", "value": "{'a': 2, 'b': 1}"}
    )
    assert dicts == "assert repr(got) == \"{'b': 1, 'a': 2}\""
    kinds = value_check("got", {"value": "1"}, {"kind": "value", "value": "1.0"})
    assert kinds == "assert repr(got) == '1'"
    sets = value_check("got", {"value": "{1, 2}"}, {"kind": "value", "value": "{2, 1}"})
    assert sets == "assert got == {1, 2}"
    other = value_check("got", {"value": "[1]"}, {"kind": "value", "value": "[2]"})
    assert other == "assert got == [1]"


def test_a_message_the_parents_holds_is_matched_whole() -> None:
    head = {"kind": "raises", "type": "ValueError", "message": "bad"}
    parent = {"kind": "raises", "type": "ValueError", "message": "bad value"}
    (block,) = raised_checks("f(x)", head, parent, set())
    assert "match='^bad$'" in ast.unparse(block)
    long = {"kind": "raises", "type": "E", "message": "", "text": "a\nb"}
    made = raised_checks("f(excinfo)", long, parent, {"f", "excinfo"})
    assert ast.unparse(made[-1]) == "assert str(excinfo2.value) == 'a\\nb'"


def test_order_is_what_the_changed_lines_concern() -> None:
    assert concerns_order(["    return yaml.dump(data, sort_keys=sort_keys)"])
    assert concerns_order(["rows = sorted(rows, key=len)"])
    assert not concerns_order(["key = 3", "return x"])


def test_a_copy_rebinds_a_setup_container_and_prefixes_a_body_list_where_a_prefix_is_tested() -> (
    None
):
    source = DOC_TESTS + (
        "\n    def test_inline(self):\n"
        "        doc = Doc()\n"
        '        doc.add_list(["one", "two"])\n'
        '        self.assertEqual(doc.render(), "- one\\n- two")\n'
    )
    steer = Steer(strings=("**", "*"))
    text, made = container_variants(source, "TestDoc.test_list", steer, Aims(), 4)
    assert [v.description for v in made][:2] == [
        "self.items: 'one' -> '**one'",
        "self.items: 'one' -> '*one'",
    ]
    assert "        self.items = ['**one', 'two', 'three']\n" in text
    assert "def test_list__o1(self):" in text
    _, inline = container_variants(source, "TestDoc.test_inline", steer, Aims(), 4)
    assert inline == []  # a body's list: only where the changed lines test a prefix
    text, inline = container_variants(source, "TestDoc.test_inline", steer, Aims(prefix=True), 4)
    assert inline[0].description.endswith(": 'one' -> '**one'")
    assert "doc.add_list(['**one', 'two'])" in text


def test_variants_written_with_the_same_body_are_written_once() -> None:
    targets = [Target("m.py", "f", "modified", [1])]
    same = Written([], ["def test_a__v1_changed():", "    assert f(1) == 2"])
    also = Written([], ["# another comment", "def test_a__v2_changed():", "    assert f(1) == 2"])
    other = Written([], ["def test_b_changed():", "    assert f(3) == 4"])
    found = [
        (Difference(f"t.py::{n}", 2, "f", 0, {"kind": "value", "value": v}, {}), w)
        for n, v, w in [
            ("test_a__v1", "2", same),
            ("test_a__v2", "2", also),
            ("test_b", "4", other),
        ]
    ]
    chosen = _chosen(found, targets, {"m.py": [1]})
    assert [d.node for d, _ in chosen] == ["t.py::test_a__v1", "t.py::test_b"]
