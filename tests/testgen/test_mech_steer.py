"""Inputs steered by what the changed lines hold (issue 35): a changed module-level regular
expression gives the strings its old and new versions match differently, and those reach
the public function that reads it, in one real ``nova testgen`` run on a sample project
whose own tests hold no such string; a character a changed condition tests is put
where a separator goes in the tests' text inputs (also in text a call wraps, a parser's
``io.StringIO(...)``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.testgen.inputs import Candidate
from bot.testgen.steer import contrasts, placed
from tests.testgen.sample import caught, sample_testgen

NAMES = """import re

POSSESSIVE = re.compile(r"^(.*)'s?$")
PLAIN = re.compile(r"^[a-z]+$")


def _owner(word):
    mo = POSSESSIVE.search(word)
    return mo.group(1) if mo else word


def owner(word):
    \"\"\"The owner named by a possessive: ``owner("cat's")`` is ``cat``.\"\"\"
    return _owner(word.strip()).upper()


def is_plain(word):
    return bool(PLAIN.match(word))
"""
NAMES_TESTS = """from tags.names import is_plain, owner


def test_owner():
    assert owner("cat's") == "CAT"
    assert owner("dogs'") == "DOGS"
    assert owner("bird") == "BIRD"


def test_is_plain():
    assert is_plain("bird")
"""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (r"^(.*)'s?$", r"^(.+)'s?$"),  # a repeat that now needs one
        (r"^\d{2}-[a-z]+$", r"^\d{2,3}-[a-z]+$"),  # a longer count allowed
        (r"[^\s]+", r"[^\s#]+"),  # a character a negated class now excludes
        (r"^[a-y]$", r"^[a-z]$"),  # a range one longer
        (r"(foo|bar)\b", r"(foo|bar|baz)\b"),  # a new branch
        (r"(?i)^key=", r"^key="),  # a flag dropped
    ],
)
def test_contrasts_are_strings_the_two_versions_split(old: str, new: str) -> None:
    found = contrasts([f"RX = re.compile({new!r})"], [f"RX = re.compile({old!r})"])
    assert found
    for text in found:
        a, b = re.search(old, text), re.search(new, text)
        assert (a is None) != (b is None) or (a and b and a.groups() != b.groups()), text


def test_contrasts_of_a_regex_added_or_removed_whole() -> None:
    assert any(re.search(r"baz\d+", s) for s in contrasts(['    r"baz\\d+",'], []))
    assert any(re.search(r"^v\d", s) for s in contrasts([], ['    r"^v\\d",']))
    assert contrasts(['    r"^v\\d",'], ['    r"^v\\d",']) == []  # moved, not changed
    assert contrasts(['NAME = "plain words"'], ['NAME = "other words"']) == []


def test_a_changed_regex_gives_the_input_that_catches_it(tmp_path: Path) -> None:
    base = {
        "tags/__init__.py": "",
        "tags/names.py": NAMES,
        "tests/test_names.py": NAMES_TESTS,
    }
    new = NAMES.replace("^(.*)'s?$", "^(.+)'s?$")
    assert new != NAMES
    change = {"tags/names.py": new}
    _repo, data = sample_testgen(tmp_path, base, change, "names: a bare ' is a word")
    facts = caught(data, "owner(")
    assert facts, data["notes"]
    # the old pattern read "'" as the possessive of nothing; the new one keeps it
    assert any('"\'"' in f["call"] and f["head"] == '"\'"' for f in facts), facts


ENV = """import re
from collections import namedtuple

Binding = namedtuple("Binding", "key value")


def _binding(line):
    key, _, rest = line.partition("=")
    value = rest.strip()
    return Binding(key.strip(), re.sub(r"\\s+#.*", "", value))


def parse(stream):
    \"\"\"``KEY=value`` lines; a ``#`` after a space starts a comment.\"\"\"
    lines = stream.read().splitlines()
    return [_binding(line) for line in lines if "=" in line]
"""
ENV_NEW = ENV.replace(
    "    value = rest.strip()\n",
    "    value = rest.strip()\n"
    '    if len(rest) > len(rest.lstrip()) and value.startswith("#"):\n'
    '        return Binding(key.strip(), "")\n',
)
ENV_TESTS = """import io

import pytest

from envfile.parse import parse


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a=b", [("a", "b")]), ("a=b\\nc=d # note", [("a", "b"), ("c", "d")])],
)
def test_parse(text, expected):
    assert parse(io.StringIO(text)) == expected
"""


def test_placed_puts_a_tested_separator_after_a_token() -> None:
    made = placed([Candidate(("'a=b'",)), Candidate(("io.StringIO('x:y')",))], ["#", "word"])
    texts = {c.args[0] for c in made}
    assert {"'a= #b'", "'a=#b'", "'#a=b'", "'a=b #'"} <= texts
    assert "io.StringIO('x: #y')" in texts  # the text a call wraps
    assert all("word" not in t for t in texts)  # a word is steered elsewhere


def test_a_changed_condition_on_a_character_reaches_the_parser(tmp_path: Path) -> None:
    base = {
        "envfile/__init__.py": "",
        "envfile/parse.py": ENV,
        "tests/test_parse.py": ENV_TESTS,
    }
    assert ENV_NEW != ENV
    change = {"envfile/parse.py": ENV_NEW}
    _repo, data = sample_testgen(tmp_path, base, change, "parse: KEY= # comment is empty")
    facts = caught(data, "parse(")
    assert facts, (data["notes"], data["dropped"])
    assert any("= #" in f["call"] for f in facts), facts
    # the expected values are the module's own namedtuples: their class is imported
    assert any("Binding(key='a', value='')" in f["head"] for f in facts), facts
