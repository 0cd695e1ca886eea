"""Inputs steered by the constants the changed lines NAME (``value.startswith(MARK)``, with
``MARK = "-"`` in a constants module), for a function the tests never call, end to end
on small projects:

- the changed line holds no literal: the constant's value is read where it is defined
  (this module, or the project module it is imported from) and steers inputs like a
  literal written in the line would (``placed``: ``"ada-"``);
- the tests never name the function (they call the package's entry point): a
  one-parameter function gets the literals of the tests that import its package.

python-toon 0.1.1 (set 15 C, after the blind run) is the development example: a hyphen
inside a string is no longer quoted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.testgen.consts import named_literals
from tests.testgen.sample import caught, sample_testgen

TEXT = """
from .constants import COLON, MARK


def plain(value, sep=","):
    if not value:
        return False
    return not any(c in value for c in (COLON, sep, MARK))
"""

# the release quotes a mark only at the start
TEXT_NEW = """
from .constants import COLON, MARK


def plain(value, sep=","):
    if not value:
        return False
    if value.startswith(MARK):
        return False
    return not any(c in value for c in (COLON, sep))
"""

# the same behaviour, written another way
TEXT_SAME = """
from .constants import COLON, MARK


def plain(value, sep=","):
    if not value:
        return False
    unsafe = (COLON, sep, MARK)
    return not any(c in value for c in unsafe)
"""

BASE = {
    "words/__init__.py": "from .api import encode\n",
    "words/constants.py": 'COLON = ":"\nMARK = "-"\n',
    "words/api.py": (
        "from .text import plain\n\n\n"
        "def encode(data):\n"
        '    return ", ".join(f"{k}: {v if plain(v) else repr(v)}" for k, v in data.items())\n'
    ),
    "words/text.py": TEXT,
    "tests/test_api.py": (
        "from words import encode\n\n\n"
        "def test_encode():\n"
        '    assert encode({"name": "ada"}) == "name: ada"\n'
    ),
}


def _words(tmp: Path, change: str, message: str) -> dict[str, Any]:
    return sample_testgen(tmp, BASE, {"words/text.py": change}, message, exits=(0, 1, 4))[1]


@pytest.fixture(scope="module")
def quoted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _words(tmp_path_factory.mktemp("quoted"), TEXT_NEW, "a mark inside is plain")


def test_a_named_constant_steers_the_tests_literals_into_a_function_they_never_call(
    quoted: dict[str, Any],
) -> None:
    facts = caught(quoted, "plain(")
    assert facts, quoted["notes"]
    # a test's literal with the constant's value put in (not only drawn text)
    assert any("ada" in f["call"] and "-" in f["call"] for f in facts), facts


@pytest.fixture(scope="module")
def same(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _words(tmp_path_factory.mktemp("same"), TEXT_SAME, "name the unsafe characters")


def test_a_change_that_keeps_the_quoting_claims_nothing(same: dict[str, Any]) -> None:
    assert not [c for c in same["kept"] if c["evidence"].get("catches_change")]


def test_the_constants_a_changed_line_names_are_read_where_they_are_defined() -> None:
    files = {"pkg/constants.py": 'MARK = "-"\nLIMIT = 3\n', "other/c.py": 'SEP = ";"\n'}
    source = (
        "from .constants import MARK, LIMIT as CAP\n"
        "from other.c import SEP\n"
        'LOCAL = "#"\n\n'
        "def f(v):\n"
        "    return v.startswith(MARK) or len(v) > CAP or SEP in v or LOCAL in v\n"
    )
    found = named_literals(source, "pkg/text.py", [6], files.get)
    assert found == ["#", "-", 3, ";"]
    assert named_literals(source, "pkg/text.py", [1], files.get) == []  # not a changed line
