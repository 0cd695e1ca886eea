"""`nova testgen` with no model (issue 35) where the changed code is reached the way the
project's tests reach it, not by its own name:

- a method the tests call only through Python's syntax (``cache["a"] = 2`` runs
  ``__setitem__``, which calls the changed ``set``): the class's special methods that call
  it are entry points, and the tests' subscripts, ``in`` and calls on the instance are
  replayed as calls of them;
- a public helper the tests never call by name (``parse_line``, called by ``parse``): the
  public functions of its module that call it are entry points too, with the tests' inputs.

One real sample project (a git repository in tmp, its own virtualenv, real pytest and
coverage subprocesses), run once."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

from bot.testgen.reach import Entry, entries
from bot.testgen.scenarios import scenarios_from_tests
from tests.testgen.sample import caught, sample_testgen

LRU = """class LRU:
    def __init__(self, capacity=None):
        self.capacity = capacity
        self.items = {}

    def __setitem__(self, key, value):
        self.set(key, value)

    def __getitem__(self, key):
        return self.items[key]

    def __contains__(self, key):
        return key in self.items

    def __len__(self):
        return len(self.items)

    def set(self, key, value):
        if self.items.get(key):
            pass
        else:
            self.items[key] = value
"""
LRU_NEW = LRU.replace("            pass\n", "            self.items[key] = value\n")
LRU_TESTS = """from store.lru import LRU


def test_set_twice():
    cache = LRU(capacity=3)
    cache["a"] = 1
    cache["a"] = 2
    assert len(cache) == 1
    assert "a" in cache
"""

ENVFILE = """def parse(text):
    out = {}
    for line in text.splitlines():
        found = parse_line(line)
        if found:
            out[found[0]] = found[1]
    return out


def parse_line(line):
    if "=" not in line:
        return None
    key, value = line.split("=", 1)
    return key.strip(), value
"""
ENVFILE_NEW = ENVFILE.replace("return key.strip(), value", "return key.strip(), value.strip()")
ENVFILE_TESTS = """from store.envfile import parse


def test_parse():
    assert parse("A=1\\nB=2") == {"A": "1", "B": "2"}
    assert parse("A = 1")["A"].strip() == "1"
"""


def test_the_special_methods_that_call_a_method_are_its_entry_points() -> None:
    found = entries(LRU, "LRU.set")
    assert found[0] == Entry("LRU.set")
    assert Entry("LRU.__setitem__", "LRU.set") in found
    assert Entry("LRU.__getitem__", "LRU.set") not in found  # it does not call set


def test_subscripts_and_in_are_replayed_as_calls_of_special_methods() -> None:
    tests = {"tests/test_lru.py": LRU_TESTS}
    found = scenarios_from_tests(tests, "LRU", "__setitem__")
    assert [(c.args, c.steps) for c in found] == [
        (("'a'", "1"), ()),
        (("'a'", "2"), ("_nova_obj['a'] = 1",)),
    ]
    (contains,) = scenarios_from_tests(tests, "LRU", "__contains__")
    assert contains.args == ("'a'",) and len(contains.steps) == 2
    assert [ast.literal_eval(a or "") for a in contains.args] == ["a"]


def test_a_public_helper_is_also_reached_through_its_public_callers() -> None:
    assert entries(ENVFILE, "parse_line", callers=True) == [
        Entry("parse_line"),
        Entry("parse", "parse_line"),
    ]
    assert entries(ENVFILE, "parse_line") == [Entry("parse_line")]
    # a special method that calls the method is one of its public callers too: once
    both = entries(LRU, "LRU.set", callers=True)
    assert Entry("LRU.__setitem__", "LRU.set") in both
    assert len(both) == len(set(both))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("store"),
        {
            "store/__init__.py": "",
            "store/lru.py": LRU,
            "store/envfile.py": ENVFILE,
            "tests/test_lru.py": LRU_TESTS,
            "tests/test_envfile.py": ENVFILE_TESTS,
        },
        {"store/lru.py": LRU_NEW, "store/envfile.py": ENVFILE_NEW},
        "set replaces a stored value; values are stripped",
    )
    return data


def test_a_change_reached_only_through_a_subscript_is_caught(store: dict[str, Any]) -> None:
    facts = caught(store, "= LRU(")
    assert facts, json.dumps(store["notes"], indent=1)
    assert any("__setitem__" in f["call"] for f in facts)


def test_a_change_in_a_helper_the_tests_never_name_is_caught(store: dict[str, Any]) -> None:
    facts = caught(store, "parse(")
    assert all("parse_line" in f["reaches"] for f in facts if f["call"].startswith("parse("))
    assert facts, json.dumps(store["notes"], indent=1)
