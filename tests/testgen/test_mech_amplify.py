"""Test amplification: the project's own tests that run the changed lines are observed on
the head and on the parent; a value a call from the test's body got that differs becomes
a new test — the old test's body (its monkeypatch steps, its helper-built objects) cut
after that call, with head's value asserted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.testgen.amplify import (
    Difference,
    Observed,
    _differences,
    amplified_module,
    amplified_test,
    naming_files,
)
from tests.conftest import GitRepo
from tests.testgen.sample import PYPROJECT, sample_testgen
from tests.testgen.test_differential import project_venv
from tests.testgen.test_testgen import nova_testgen

GREET = """
import os


class Greeter:
    def __init__(self):
        self.said = []

    def feed(self, name):
        self.said.append(name)

    def shout(self):
        style = os.environ.get("GREET_STYLE", "plain")
        if style == "loud":
            return " ".join(self.said).upper() + "!"
        return "hello " + " ".join(self.said)
"""

GREET_NEW = GREET.replace('.upper() + "!"', '.upper() + "!!"')

TESTS = """
from greet.core import Greeter


def fed(*names):
    g = Greeter()
    for name in names:
        g.feed(name)
    return g


def test_loud(monkeypatch):
    monkeypatch.setenv("GREET_STYLE", "loud")
    g = fed("bob", "ann")
    text = g.shout()
    assert text.startswith("BOB ANN")


def test_plain():
    assert fed("bob").shout() == "hello bob"
"""


def amplified(data: dict[str, Any], call: str) -> list[dict[str, Any]]:
    """The facts of the kept amplified tests claimed as catching whose call contains
    ``call`` (``sample.caught`` for the tests the differential generator replays)."""
    return [
        fact
        for case in data["kept"]
        if case["evidence"].get("catches_change")
        for fact in case["evidence"].get("amplified", [])
        if call in fact["call"]
    ]


@pytest.fixture(scope="module")
def greet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("greet"),
        {"greet/__init__.py": "", "greet/core.py": GREET, "tests/test_core.py": TESTS},
        {"greet/core.py": GREET_NEW},
        "a loud greeting ends with two marks",
    )
    return data


def test_a_test_driven_through_an_environment_and_a_helper_is_amplified(
    greet: dict[str, Any],
) -> None:
    facts = amplified(greet, "g.shout()")
    assert facts, greet["notes"]
    assert facts[0]["amplifies"] == "tests/test_core.py::test_loud"
    assert "BOB ANN!!" in str(facts[0]["head"]) and "BOB ANN!" in str(facts[0]["parent"])
    assert any(n.startswith("amplify wrote tests/test_nova_amp_core.py") for n in greet["notes"])


REFACTOR = GREET.replace('" ".join(self.said)', '" ".join(list(self.said))')


def test_nothing_is_written_when_no_value_differs(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    base = {"greet/__init__.py": "", "greet/core.py": GREET, "tests/test_core.py": TESTS}
    for path, text in {"pyproject.toml": PYPROJECT, **base}.items():
        repo.write(path, text)
    repo.commit("base")
    repo.write("greet/core.py", REFACTOR)
    repo.commit("the same greeting, built another way")
    (repo.path / ".git" / "info" / "exclude").write_text(".venv/\n")
    project_venv(repo.path / ".venv")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("VIRTUAL_ENV", raising=False)
        result = nova_testgen(repo, tmp_path, "-o", "json")
    data = json.loads(result.stdout)  # exit 1: nothing kept
    assert "amplify: 0 test(s) got another value on the parent" in data["notes"]
    assert not any("test_nova_amp" in c["path"] for c in data["kept"] + data["dropped"])


UNITTEST = """
import unittest

from greet.core import Greeter
from tests.base import TestShared


class TestGreeter(unittest.TestCase):
    def setUp(self):
        self.g = Greeter()

    def test_feed(self):
        self.g.feed("x")
        self.g.feed("y")
        self.assertEqual(len(self.g.said), 2)

    def test_other(self):
        self.assertTrue(True)


def test_free():
    pass
"""


def test_a_unittest_method_keeps_its_class_and_set_up_and_nothing_else() -> None:
    d = Difference(
        "tests/test_core.py::TestGreeter::test_feed",
        line=14,
        name="Greeter.feed",
        index=0,
        head={"kind": "after", "facts": [["{r}.said", "['x', 'z']", []]]},
        parent={"kind": "after", "facts": [["{r}.said", "['x']", []]]},
    )
    written = amplified_test(UNITTEST, d)
    assert not isinstance(written, str), written
    collected = ("TestGreeter::test_feed", "TestGreeter::test_other", "TestGreeter::test_mixed")
    text = amplified_module(UNITTEST, [(["TestGreeter", "test_feed"], written)], collected)
    compile(text, "test_nova_amp_core.py", "exec")
    assert "def setUp(self):" in text and "def test_feed_changed(self):" in text
    assert "test_other" not in text and "test_free" not in text and "TestShared" not in text
    # cut after the second feed (line 14), which is asserted by what it left
    assert "self.g.feed('y')\n        assert self.g.said == ['x', 'z']" in text
    assert "assertEqual" not in text
    # a test the class inherits from a mixin elsewhere is not collected again
    assert "    test_mixed = None" in text


def test_a_call_inside_a_loop_is_not_written() -> None:
    source = "def test_loop():\n    for n in range(3):\n        f(n)\n"
    d = Difference("t.py::test_loop", 3, "f", 0, {"kind": "value", "value": "1"}, {})
    assert "inside a loop" in str(amplified_test(source, d))


PARAMETRIZED = """
import pytest

from greet.core import Greeter


@pytest.mark.parametrize("name,loud", [("bob", True), ("ann", False)])
def test_shout(monkeypatch, name, loud):
    if loud:
        monkeypatch.setenv("GREET_STYLE", "loud")
    g = Greeter()
    g.feed(name)
    assert g.shout()
"""


def test_a_parametrized_case_is_written_with_its_arguments_bound() -> None:
    d = Difference(
        "tests/test_core.py::test_shout[bob-True]",
        line=13,
        name="Greeter.shout",
        index=0,
        head={"kind": "value", "value": "'BOB!!'", "imports": []},
        parent={"kind": "value", "value": "'BOB!'", "imports": []},
        params={"name": ["'bob'", []], "loud": ["True", []]},
    )
    written = amplified_test(PARAMETRIZED, d)
    assert not isinstance(written, str), written
    text = amplified_module(PARAMETRIZED, [(["test_shout"], written)])
    assert "parametrize" not in text and "def test_shout_changed(monkeypatch):" in text
    assert "    name = 'bob'\n    loud = True\n" in text
    assert text.rstrip().endswith("assert g.shout() == 'BOB!!'")


def _run(*calls: dict[str, Any]) -> Observed:
    rows = [{"line": 5, "name": "f", "index": i, **c} for i, c in enumerate(calls)]
    return Observed(tests={"t.py::test_a": {"changed": True, "passed": True, "calls": rows}})


def test_only_a_steady_difference_without_an_address_or_a_temporary_path_counts() -> None:
    value = {"kind": "value", "imports": []}
    head = [
        _run({**value, "value": "1"}, {**value, "value": "'<X at 0x7f3a2b1c9d00>'"}),
        _run({**value, "value": "2"}, {**value, "value": "'<X at 0x7f3a2b1c9d00>'"}),
    ]
    parent = [_run({**value, "value": "3"}, {**value, "value": "'other'"})] * 2
    # the first call's value changes between the head's runs; the second names an address
    assert _differences("t.py::test_a", head[0], head[1], parent) == []
    head = [_run({**value, "value": "1"}, {**value, "value": "'/tmp/pytest-of-root/x'"})] * 2
    found = _differences("t.py::test_a", head[0], head[1], parent)
    assert [(d.index, d.head["value"], d.parent["value"]) for d in found] == [(0, "1", "3")]


def test_an_object_is_compared_by_the_facts_every_run_showed_alike() -> None:
    def obj(*facts: list[Any]) -> dict[str, Any]:
        return {"kind": "object", "repr": None, "facts": list(facts)}

    kinds = ["{r}.kind", "'a'", []]
    head = [_run(obj(kinds, ["{r}.n", "1", []])), _run(obj(kinds))]  # the walk stopped early
    parent = [_run(obj(["{r}.kind", "'b'", []], ["{r}.n", "2", []]))] * 2
    found = _differences("t.py::test_a", head[0], head[1], parent)
    assert [d.head["facts"] for d in found] == [[kinds]]


def test_an_object_whose_repr_is_the_same_on_both_sides_is_told_apart_by_a_fact() -> None:
    def obj(repr_: str, kind: str) -> dict[str, Any]:
        return {"kind": "object", "repr": repr_, "facts": [["{r}.kind", kind, []]]}

    head = [_run(obj("{'a': 1}", "'new'"))] * 2
    parent = [_run(obj("{'a': 1}", "'old'"))] * 2
    found = _differences("t.py::test_a", head[0], head[1], parent)
    assert [(d.head["kind"], d.head["facts"]) for d in found] == [
        ("object", [["{r}.kind", "'new'", []]])
    ]


def test_a_call_inside_a_block_that_expects_an_exception_is_not_written() -> None:
    source = "def test_bad():\n    with pytest.raises(ValueError):\n        f(1)\n        f(2)\n"
    d = Difference("t.py::test_bad", 3, "f", 0, {"kind": "raises", "type": "ValueError"}, {})
    assert "expects an exception" in str(amplified_test(source, d))


BASED = """
from tests.unittest import TestCase
from tests.base import TestShared

from greet.core import Greeter


class GreeterTest(TestCase):
    def test_feed(self):
        g = Greeter()
        g.feed("x")
"""


def test_an_imported_test_base_the_kept_class_derives_from_is_kept() -> None:
    d = Difference(
        "tests/test_core.py::GreeterTest::test_feed",
        line=11,
        name="Greeter.feed",
        index=0,
        head={"kind": "value", "value": "1", "imports": []},
        parent={"kind": "value", "value": "2", "imports": []},
    )
    written = amplified_test(BASED, d)
    assert not isinstance(written, str), written
    text = amplified_module(BASED, [(["GreeterTest", "test_feed"], written)])
    # the class needs its base; an imported Test* class nothing derives from stays out
    assert "from tests.unittest import TestCase" in text
    assert "TestShared" not in text


def test_test_files_naming_the_changed_module_come_before_those_naming_its_package() -> None:
    texts = {f"tests/test_{i:02}.py": "from oauthlib.common import Request\n" for i in range(40)}
    texts["tests/test_zz_params.py"] = "from oauthlib.oauth2.rfc6749 import parameters\n"
    texts["tests/test_other.py"] = "import json\n"
    chosen = naming_files(["oauthlib/oauth2/rfc6749/parameters.py"], texts)
    assert chosen[0] == "tests/test_zz_params.py"
    assert "tests/test_other.py" not in chosen and len(chosen) == 41
