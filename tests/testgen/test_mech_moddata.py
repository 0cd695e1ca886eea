"""A change in module-level data is tested through the functions that read it (issue 35):
a real sample project (a git repository in tmp, its own virtualenv, real pytest and
coverage subprocesses) whose release changes only table entries — a range of code points
in a table module read by a private helper of another module, and a regular expression
of a keyword table read as ``keywords.PATTERNS`` — and one real ``nova testgen`` run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.testgen.moddata import covered_lines, data_change
from tests.conftest import GitRepo
from tests.testgen.sample import sample_testgen

TABLE = """\"\"\"Zero-width ranges of code points.\"\"\"
ZERO = (
    (0x00300, 0x0036f,),  # Combining Grave Accent ..Combining Latin Small Letter X
    (0x0200b, 0x0200f,),  # Zero Width Space       ..Right-to-left Mark
)
"""
TABLE_NEW = TABLE.replace(
    "    (0x0200b",
    "    (0x01160, 0x011ff,),  # Hangul Jungseong Filler ..Hangul Jongseong Ssangnieun\n"
    "    (0x0200b",
)
WIDTH = """from .table_zero import ZERO as _ZERO


def _zero(point):
    return any(lo <= point <= hi for lo, hi in _ZERO)


def _cell(char):
    return 0 if _zero(ord(char)) else 1


def text_width(text):
    return sum(_cell(c) for c in text)
"""
WIDTH_TESTS = """from glyphs.width import text_width


def test_text_width():
    assert text_width("abc") == 3
    assert text_width("e\\u0301") == 1
"""
KEYWORDS = """PATTERNS = [
    (r"(NOT\\s+)?(IN)\\b", "comparison"),
    (r"(SELECT|FROM|WHERE)\\b", "keyword"),
    (r"\\w+", "name"),
]
"""
KEYWORDS_NEW = KEYWORDS.replace(
    '    (r"(NOT\\s+)?(IN)\\b", "comparison"),\n    (r"(SELECT|FROM|WHERE)\\b", "keyword"),\n',
    '    (r"(SELECT|FROM|WHERE|IN)\\b", "keyword"),\n',
)
LEXER = """import re

from glyphs import keywords


def kinds(sql):
    out = []
    for word in sql.split():
        for pattern, kind in keywords.PATTERNS:
            if re.match(pattern, word, re.IGNORECASE):
                out.append(kind)
                break
    return out
"""
LEXER_TESTS = """from glyphs.lexer import kinds


def test_kinds():
    assert kinds("SELECT a FROM t") == ["keyword", "name", "keyword", "name"]
"""
ESCAPE = """class Escaper:
    TABLE = {
        "<": "&lt;",
        ">": "&gt;",
    }

    def escape(self, text):
        return "".join(self.TABLE.get(c, c) for c in text)
"""
ESCAPE_NEW = ESCAPE.replace(
    '        ">": "&gt;",\n',
    '        ">": "&gt;",\n        "&": "&amp;",\n',
)
ESCAPE_TESTS = """from glyphs.escape import Escaper


def test_escape():
    assert Escaper().escape("a<b") == "a&lt;b"
"""


@pytest.fixture(scope="module")
def glyphs(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("glyphs")
    repo, data = sample_testgen(
        tmp,
        {
            "glyphs/__init__.py": "",
            "glyphs/table_zero.py": TABLE,
            "glyphs/width.py": WIDTH,
            "glyphs/keywords.py": KEYWORDS,
            "glyphs/lexer.py": LEXER,
            "tests/test_width.py": WIDTH_TESTS,
            "tests/test_lexer.py": LEXER_TESTS,
            "glyphs/escape.py": ESCAPE,
            "tests/test_escape.py": ESCAPE_TESTS,
        },
        {
            "glyphs/table_zero.py": TABLE_NEW,
            "glyphs/keywords.py": KEYWORDS_NEW,
            "glyphs/escape.py": ESCAPE_NEW,
        },
        "Hangul medial vowels are zero width; IN is a keyword",
    )
    return repo, data


def _catching(data: dict[str, Any], target: str) -> list[dict[str, Any]]:
    """The kept tests claimed to catch the change that run a changed line of ``target``
    (``path::<module>`` unless it names the class)."""
    target = target if "::" in target else f"{target}::<module>"
    return [
        c
        for c in data["kept"]
        if f"glyphs/{target}" in c["targets"] and c["evidence"].get("catches_change")
    ]


def test_a_changed_table_entry_is_caught_through_a_reader_in_another_module(
    glyphs: tuple[GitRepo, dict[str, Any]],
) -> None:
    repo, data = glyphs
    matrix = {m["target"]: m for m in data["matrix"]}
    assert matrix["glyphs/table_zero.py::<module>"]["read_by"] == ["glyphs/width.py::_zero"]
    caught = _catching(data, "table_zero.py")
    assert caught, json.dumps(data, indent=1)[:4000]
    calls = [f["call"] for c in caught for f in c["evidence"]["calls"]]
    # the input was steered to a character of the new range, through the public caller
    assert any(call.startswith("text_width(") for call in calls), calls
    assert any(ch in call for call in calls for ch in ("\\u1160", "\\u11ff", "ᅠ", "ᇿ")), calls
    # the claim holds: the kept test fails on the parent's table
    kept = repo.git("show", f"{data['branch']}:{caught[0]['path']}")
    assert "text_width" in kept


def test_a_changed_regex_table_read_as_module_attribute_is_caught(
    glyphs: tuple[GitRepo, dict[str, Any]],
) -> None:
    _repo, data = glyphs
    caught = _catching(data, "keywords.py")
    assert caught, json.dumps(data["dropped"], indent=1) + "\n".join(data["notes"])
    calls = [f["call"] for c in caught for f in c["evidence"]["calls"]]
    assert any("IN" in call for call in calls), calls  # a word of the changed regex


def test_a_table_in_a_class_body_is_read_through_the_methods_using_it(
    glyphs: tuple[GitRepo, dict[str, Any]],
) -> None:
    _repo, data = glyphs
    matrix = {m["target"]: m for m in data["matrix"]}
    assert matrix["glyphs/escape.py::Escaper"]["read_by"] == ["glyphs/escape.py::Escaper.escape"]
    caught = _catching(data, "escape.py::Escaper")
    assert caught, json.dumps(data["dropped"], indent=1) + "\n".join(data["notes"])
    calls = [f["call"] for c in caught for f in c["evidence"]["calls"]]
    assert any("&" in call and "escape(" in call for call in calls), calls


def test_importing_the_table_alone_runs_no_changed_line() -> None:
    files = {"glyphs/width.py": WIDTH}
    lines = [4]  # the new entry of TABLE_NEW
    change = data_change("glyphs/table_zero.py", TABLE_NEW, lines, lambda: files)
    assert change is not None
    assert change.bindings == {"ZERO": [4]}
    # at import the whole statement ran, and the def lines of the reader module
    imported = {"glyphs/table_zero.py": {1, 2}, "glyphs/width.py": {1, 4, 8, 12}}
    assert covered_lines(change, imported) == []
    # a test that ran the reader's body (``_zero``) ran the changed entry
    assert covered_lines(change, {**imported, "glyphs/width.py": {5}}) == [4]
    # a function of the reader module that does not read the table proves nothing
    assert covered_lines(change, {**imported, "glyphs/width.py": {13}}) == []


def test_steering_literals_of_changed_entries() -> None:
    change = data_change(
        "glyphs/keywords.py",
        KEYWORDS_NEW,
        [2],
        lambda: {"glyphs/lexer.py": LEXER},
        [({2}, KEYWORDS.split("\n")[1:3])],
    )
    assert change is not None
    # the words of the changed regular expressions: the values the change brought
    # first, then those it took away, then the others
    assert change.strings == ["SELECT", "FROM", "WHERE", "IN", "NOT", "comparison", "keyword"]
    assert [(p, e.qualname) for p, e in change.entries] == [("glyphs/lexer.py", "kinds")]
    zero = data_change("glyphs/table_zero.py", TABLE_NEW, [4], lambda: {})
    assert zero is not None
    assert zero.chars == ["\u1160", "\u11ff", "\u115f", "\u1200"]


def test_a_name_derived_from_the_table_in_the_importing_module_is_read_too() -> None:
    use = (
        "from pkg import table\n"
        "_ZERO = frozenset(table.ZERO)\n\n\n"
        "def is_zero(point):\n"
        "    return point in _ZERO\n\n\n"
        "def unrelated(point):\n"
        "    return point\n"
    )
    table = "ZERO = [\n    1,\n    2,\n]\n"
    change = data_change("pkg/table.py", table, [3], lambda: {"pkg/use.py": use})
    assert change is not None
    assert change.read_by() == ["pkg/use.py::is_zero"]
    assert [(p, e.qualname, e.via) for p, e in change.entries] == [
        ("pkg/use.py", "is_zero", "pkg.table.ZERO")
    ]
    assert covered_lines(change, {"pkg/use.py": {6}}) == [3]
    assert covered_lines(change, {"pkg/use.py": {1, 2, 5, 9, 10}}) == []


def test_a_table_re_exported_by_the_package_is_read_where_the_package_is_imported() -> None:
    files = {
        "pkg/codes/__init__.py": "from pkg.codes.data import *\n",
        "pkg/core.py": (
            "from pkg import codes\n\n\n"
            "def name_of(char, language='en'):\n"
            "    return codes.NAMES[char].get(language)\n"
        ),
    }
    table = (
        "LANGUAGES = ['en', 'es']\n"
        "NAMES = {\n"
        "    'x': {\n"
        "        'en': 'ex',\n"
        "        'ru': 'iks',\n"
        "    },\n"
        "}\n"
    )
    change = data_change(
        "pkg/codes/data.py", table, [5], lambda: files, [({5}, ["        'en': 'ex',"])]
    )
    assert change is not None
    assert change.read_by() == ["pkg/core.py::name_of"]
    assert [(p, e.qualname) for p, e in change.entries] == [("pkg/core.py", "name_of")]
    # the value the change brought comes before those it kept
    assert change.strings[:2] == ["ru", "iks"]
