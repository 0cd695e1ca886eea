"""Steered values placed where the code needs them, in the types it needs (issue 35):

- a key added to a module table is read by a function only for the items of a list it
  is given, and only when a switch lets it (``paint('hi', styles=['strike'],
  force=True)``): the changed string goes in as an item, and the steered inputs are
  tried with the function's switches flipped;
- a changed ``isinstance(x, Hashable)`` / ``hash(x)`` asks for a value that is
  "Hashable" and still fails to hash (a tuple holding a list), put where the tests put
  values (a dict argument's values);
- a changed ``.lower()`` asks for text that lowering changes (the tests' inputs in
  upper case).

One sample project carries the three changes; each test reads the same run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.testgen.extremes import towards_transforms, transforms
from bot.testgen.inputs import Candidate, inputs_from_tests
from bot.testgen.placed import into_containers, switched, switches
from bot.testgen.retype import retype
from bot.testgen.typehints import type_hints
from tests.conftest import GitRepo
from tests.testgen.sample import caught, sample_testgen

STYLE = '''import os

STYLES = {
    "bold": 1,
    "dim": 2,
}


def _enabled(force):
    if force:
        return True
    return "PAINT" in os.environ


def paint(text, styles=None, *, force: bool | None = None):
    """Text wrapped in the escape codes of its styles, when painting is on."""
    if not _enabled(force):
        return text
    for style in styles or []:
        text = "\\x1b[%dm%s" % (STYLES[style], text)
    return text + "\\x1b[0m"
'''
STYLE_NEW = STYLE.replace('    "dim": 2,\n', '    "dim": 2,\n    "strike": 9,\n')

SAFE = '''from collections.abc import Hashable

BANNED = {eval, exec}


def _check(item):
    if isinstance(item, Hashable) and item in BANNED:
        raise ValueError("a banned function")
    if isinstance(item, (list, tuple)):
        for each in item:
            _check(each)


def lookup(name, names=None):
    """The value bound to ``name``, refused when it is (or holds) a banned function."""
    value = (names or {})[name]
    _check(value)
    return value
'''
SAFE_NEW = SAFE.replace(
    "from collections.abc import Hashable\n",
    "",
).replace(
    "def _check(item):\n    if isinstance(item, Hashable) and item in BANNED:\n",
    "def _hashable(value):\n"
    "    try:\n"
    "        hash(value)\n"
    "    except TypeError:\n"
    "        return False\n"
    "    return True\n\n\n"
    "def _check(item):\n    if _hashable(item) and item in BANNED:\n",
)

URLS = '''def canonical(url):
    """The URL with its scheme and its network location in lower case."""
    scheme, _, rest = url.partition("://")
    netloc, slash, path = rest.partition("/")
    return scheme.lower() + "://" + netloc.lower() + slash + path
'''
URLS_NEW = URLS.replace(
    '    return scheme.lower() + "://" + netloc.lower() + slash + path\n',
    '    user, at, host = netloc.rpartition("@")\n'
    '    return scheme.lower() + "://" + user + at + host.lower() + slash + path\n',
)

TESTS = """import pytest

from kit.safe import lookup
from kit.style import paint
from kit.urls import canonical


@pytest.mark.parametrize("style", ["bold", "dim"])
def test_paint_off(style):
    assert paint("hi", styles=[style]) == "hi"


def test_lookup():
    assert lookup("x", names={"x": 1}) == 1
    assert lookup("y", names={"y": {"z": 2}}) == {"z": 2}


def test_lookup_banned():
    with pytest.raises(ValueError):
        lookup("f", names={"f": exec})


def test_canonical():
    assert canonical("http://user@example.com/a") == "http://user@example.com/a"
    assert canonical("https://example.com/b") == "https://example.com/b"
"""


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("kit"),
        {
            "kit/__init__.py": "",
            "kit/style.py": STYLE,
            "kit/safe.py": SAFE,
            "kit/urls.py": URLS,
            "tests/test_kit.py": TESTS,
        },
        {"kit/style.py": STYLE_NEW, "kit/safe.py": SAFE_NEW, "kit/urls.py": URLS_NEW},
        "a strike style; values that cannot be hashed; the user part keeps its case",
    )


def _caught(kit: tuple[GitRepo, dict[str, Any]], call: str) -> list[dict[str, Any]]:
    """The facts of the run's catching tests of ``call``; there must be some."""
    data = kit[1]
    facts = caught(data, call)
    assert facts, json.dumps([data["notes"], data["kept"], data["dropped"]], indent=1)[:6000]
    return facts


def test_a_new_table_key_is_given_as_a_list_item_with_the_switch_on(
    kit: tuple[GitRepo, dict[str, Any]],
) -> None:
    facts = _caught(kit, "paint(")
    for fact in facts:
        assert "'strike'" in fact["call"] and "force=True" in fact["call"]
        assert fact["parent"] == "raised KeyError(\"'strike'\")"


def test_a_hashable_check_gets_a_tuple_holding_a_list_in_a_dict_value(
    kit: tuple[GitRepo, dict[str, Any]],
) -> None:
    facts = _caught(kit, "lookup(")
    assert any("[" in f["call"] and "unhashable" in f["parent"] for f in facts)


def test_a_changed_lower_gets_text_in_upper_case(kit: tuple[GitRepo, dict[str, Any]]) -> None:
    facts = _caught(kit, "canonical(")
    assert all(f["call"] != f["call"].lower() for f in facts)  # the case was changed


# the rules one at a time, read and never run


def test_switches_are_the_bool_defaults_flipped() -> None:
    source = (
        "def f(text, strict=False, lazy=True, *, force: bool | None = None, n=None):\n    pass\n"
    )
    assert switches(source, "f") == [("strict", True, 1), ("lazy", False, 2), ("force", True, -1)]
    assert switches(source, "f", changed=[1]) == []  # maybe new: the parent refuses them
    given = Candidate(("'a'", "False"))  # strict given by place: flipped there
    made = switched([given], source, "f")
    assert made == [
        Candidate(("'a'", "True")),
        Candidate(("'a'", "False"), (("lazy", "False"),)),
        Candidate(("'a'", "False"), (("force", "True"),)),
    ]


def test_a_changed_value_goes_into_containers_of_its_own_type_only() -> None:
    c = Candidate(("['a', 'b']", "('a',)", "{'b'}", "[1]", "{'k': 2}"))
    shown = [m.args for m in into_containers([c], ["new"])]
    assert ("['new']", "('a',)", "{'b'}", "[1]", "{'k': 2}") in shown
    assert ("['a', 'b', 'new']", "('a',)", "{'b'}", "[1]", "{'k': 2}") in shown
    assert ("['a', 'b']", "('new',)", "{'b'}", "[1]", "{'k': 2}") in shown
    assert ("['a', 'b']", "('a',)", "{'b', 'new'}", "[1]", "{'k': 2}") in shown
    assert ("['a', 'b']", "('a',)", "{'b'}", "[1]", "{'k': 2, 'new': 2}") in shown
    assert all(args[3] == "[1]" for args in shown)  # not a list of strings
    numbers = [m.args for m in into_containers([c], [9])]
    assert numbers == [
        ("['a', 'b']", "('a',)", "{'b'}", "[9]", "{'k': 2}"),
        ("['a', 'b']", "('a',)", "{'b'}", "[1, 9]", "{'k': 2}"),
    ]


def test_a_parametrize_value_inside_a_list_is_put_in_place() -> None:
    found = inputs_from_tests({"tests/test_k.py": TESTS}, {"paint"})["paint"]
    assert [c.kwargs for c in found] == [(("styles", "['bold']"),), (("styles", "['dim']"),)]


def test_hash_asks_for_a_hashable_that_does_not_hash_through_a_dict_value() -> None:
    hints = type_hints(SAFE_NEW, [5, 6, 7, 8, 9, 10, 14])
    assert "unhashable" in hints.kinds["value"]
    c = Candidate(("'x'",), (("names", "{'x': 1}"),))
    made = retype([c], SAFE_NEW, "lookup", hints)
    assert Candidate(("'x'",), (("names", "{'x': (1, [1])}"),)) in made


def test_case_and_space_transforms_of_the_changed_lines_steer_text() -> None:
    source = "def f(a, b):\n    a = a.strip()\n    b = b.strip(':')\n    return a.lower() + b\n"
    assert transforms(source, [2, 3, 4]) == ["strip", "lower"]
    assert transforms(source, [3]) == []  # strip(':') strips no space
    c = Candidate(("'Ab'", "['x']"))
    made = {m.args for m in towards_transforms([c], source, [2, 4], [])}
    assert ("'AB'", "['x']") in made
    assert ("' Ab '", "['x']") in made
    assert ("'Ab'", "['X']") in made
