"""Binary operator methods get inputs (issue 35): the receiver built as the project's tests
build it (here by a module function they import, ``parse(text)``), the other operand taken
from what the tests compare it with, and, where the changed lines test the other operand's
type (``isinstance(other, Url)``), values of other types. A release that makes ``==`` with
a string return False (it raised) is caught; a refactor of ``__eq__`` that keeps its
behaviour is not claimed; a test whose instance cannot be built (the constructor raises
for the input) is written with the constructor inside ``pytest.raises``, so it passes on
head. One real sample project (git in tmp, its own virtualenv, real pytest), run once."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from bot.testgen.inputs import Candidate
from bot.testgen.operands import other_types, type_tested
from bot.testgen.render import Example, render_module
from bot.testgen.scenarios import MAKER, makers_of, scenarios_from_tests
from tests.testgen.sample import caught, sample_testgen

URL = """
class Url:
    def __init__(self, host, path):
        self.host = host
        self.path = path

    @property
    def normalized(self):
        return self.host.lower() + "/" + self.path.strip("/")

    def __eq__(self, other):
        return self.normalized == other.normalized

    def __hash__(self):
        return hash(self.normalized)


def parse(text):
    host, _, path = text.partition("/")
    return Url(host, path)
"""
# the release: comparing with anything that is not a Url is False (it raised)
URL_NEW = URL.replace(
    "        return self.normalized == other.normalized\n",
    "        if isinstance(other, Url):\n"
    "            return self.normalized == other.normalized\n"
    "        return False\n",
)

VERSION = """
class Version:
    def __init__(self, major, minor):
        self.major = major
        self.minor = minor

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return (self.major, self.minor) == (other.major, other.minor)

    __hash__ = None
"""
# a refactor: the same answers for every operand
VERSION_NEW = VERSION.replace(
    "        if not isinstance(other, Version):\n"
    "            return NotImplemented\n"
    "        return (self.major, self.minor) == (other.major, other.minor)\n",
    "        if isinstance(other, Version):\n"
    "            return self.major == other.major and self.minor == other.minor\n"
    "        return NotImplemented\n",
)

EXT = """
class Ext:
    def __init__(self, code, data):
        if not isinstance(code, int):
            raise TypeError("code is not an integer")
        if not -128 <= code <= 127:
            raise ValueError("code out of range")
        self.code = code
        self.data = data

    def __str__(self):
        return "Ext(%d, %s)" % (self.code, " ".join("%02d" % b for b in self.data))
"""
# the release: data bytes in hex (the same text for the bytes below 10 the tests use)
EXT_NEW = EXT.replace('"%02d" % b for b in self.data', '"%02x" % b for b in self.data')

TESTS = """
import pytest

from shapes.url import parse
from shapes.version import Version
from shapes.ext import Ext


@pytest.mark.parametrize(
    "left,right,same",
    [
        ("Example.org/a", "example.org/a/", True),
        ("example.org/a", "example.org/b", False),
    ],
)
def test_equality(left, right, same):
    left = parse(left)
    right = parse(right)
    if same:
        assert left == right
    else:
        assert left != right


def test_version():
    assert Version(1, 2) == Version(1, 2)
    assert Version(1, 2) != Version(1, 3)


def test_ext():
    assert str(Ext(5, b"\\x01\\x02")) == "Ext(5, 01 02)"
    with pytest.raises(ValueError):
        _ = Ext(200, b"x")
    with pytest.raises(TypeError):
        _ = Ext(5.0, b"")
"""


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("shapes"),
        {
            "shapes/__init__.py": "",
            "shapes/url.py": URL,
            "shapes/version.py": VERSION,
            "shapes/ext.py": EXT,
            "tests/test_shapes.py": TESTS,
        },
        {"shapes/url.py": URL_NEW, "shapes/version.py": VERSION_NEW, "shapes/ext.py": EXT_NEW},
        "a Url is not equal to other types; Version.__eq__ tidied; Ext shows hex",
    )
    return data


def test_equality_with_another_type_is_caught_on_an_instance_the_tests_parse(
    shapes: dict[str, Any],
) -> None:
    facts = caught(shapes, "parse(")
    assert facts, shapes["notes"]
    # the other operand is of another type; the parent raised, head says False
    assert any(f["head"] == "False" and "AttributeError" in f["parent"] for f in facts)
    assert all(" == " in f["call"] or " != " in f["call"] for f in facts)


def test_a_refactor_of_eq_that_keeps_behaviour_is_not_claimed(shapes: dict[str, Any]) -> None:
    assert not caught(shapes, "Version("), shapes["kept"]


def test_a_receiver_that_cannot_be_built_is_written_inside_pytest_raises(
    shapes: dict[str, Any],
) -> None:
    failing = [
        d
        for d in shapes["dropped"]
        if str(d["reason"]).startswith("fails on this change")
        and any("Ext(" in c["call"] for c in d.get("calls", []))
    ]
    assert not failing, failing


def test_operator_uses_give_the_other_operand_built_the_same_way() -> None:
    makers = makers_of({"shapes/url.py": URL, "shapes/ext.py": EXT}, "Url")
    assert makers == {"parse"}
    assert scenarios_from_tests({"tests/test_shapes.py": TESTS}, "Url", "__eq__") == []
    found = scenarios_from_tests({"tests/test_shapes.py": TESTS}, "Url", "__eq__", makers)
    assert found, "no receiver built by the imported parse"
    assert all(c.factory == f"{MAKER}parse" for c in found)
    rows = {(c.ctor, c.args) for c in found}
    # the receiver from the row's text, the other operand built as the test built it
    assert ((("'Example.org/a'",), ()), ("parse('example.org/a/')",)) in rows
    assert ((("'example.org/a'",), ()), ("parse('example.org/b')",)) in rows
    # ``!=`` and a reflected ``==`` count as uses of the same equality
    assert ((("'example.org/b'",), ()), ("parse('example.org/a')",)) in rows


def test_other_types_go_where_the_changed_lines_test_the_type() -> None:
    lines = [n for n, line in enumerate(URL_NEW.splitlines(), 1) if "isinstance" in line]
    assert type_tested(URL_NEW, "Url.__eq__", lines) == ["other"]
    assert type_tested(URL_NEW, "Url.__eq__", [lines[0] + 2]) == []  # not a type test
    try_lines = "def f(a, b):\n    try:\n        return a.x\n    except AttributeError:\n"
    assert type_tested(try_lines + "        return b\n", "f", [4]) == ["a"]
    built = Candidate(
        ("parse('b/c')",), (), ("from shapes.url import parse",), "t", ((("'a/b'",), ())), (), ""
    )
    made = other_types([built], URL_NEW, "Url.__eq__", lines)
    assert {c.args for c in made} == {("'text'",), ("None",), ("0",)}
    assert all(c.ctor == built.ctor for c in made)
    assert other_types([built], URL, "Url.__eq__", [lines[0]]) == []  # no type test there


def test_operators_are_written_in_parentheses_and_setup_that_raises_inside_the_block() -> None:
    raises = Example(
        [],
        {},
        [],
        {"kind": "raises", "type": "ValueError", "at": "setup"},
        kind="method",
        owner="Ext",
        ctor={"args": ["200", "b'x'"], "kwargs": {}},
    )
    text = render_module("shapes.ext", "shapes/ext.py", {"Ext.__str__": [raises]}, {})
    body = text[text.index("with pytest.raises") :]
    assert "ext = Ext(200, b'x')" in body and "str(ext)" in body
    eq = Example(
        ["0"],
        {},
        [],
        {"kind": "value", "value": "False"},
        kind="method",
        owner="Url",
        ctor={"args": ["'a/b'"], "kwargs": {}, "factory": f"{MAKER}parse"},
    )
    text = render_module("shapes.url", "shapes/url.py", {"Url.__eq__": [eq]}, {})
    assert "url = parse('a/b')" in text
    assert "assert (url == 0) is False" in text
    ast.parse(text)
