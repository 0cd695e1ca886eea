"""Inputs steered to values a changed lookup does not find (issue 35): the changed lines
look each character of a string up in a table the module loads from a JSON data file and
now skip a character the table lacks; the project's own tests only spell characters the
table holds. One real ``nova testgen`` run catches the fix with a character the table
lacks (found at run time, in the sandbox); a refactor of the lookup that keeps the
behaviour gets no claim."""

from __future__ import annotations

import json
from pathlib import Path

from bot.testgen.absent import Answer, Lookup, absent_candidates, lookups
from bot.testgen.inputs import Candidate
from tests.testgen.sample import caught, sample_testgen

NAMES = {"a": "alpha", "b": "beta", "c": "gamma", "d": "delta", "e": "epsilon"}
SPELL = """import json
import os

with open(os.path.join(os.path.dirname(__file__), "names.json"), encoding="utf-8") as handle:
    NAMES = json.load(handle)


def spell(word, sep="-"):
    \"\"\"The names of a word's letters: ``spell("ab")`` is ``"ALPHA-BETA"``.\"\"\"
    out = []
    for char in word:
        name = NAMES.get(char)
        out.append(name.upper())
    return sep.join(out)
"""
SPELL_TESTS = """from glyphs.spell import spell


def test_spell():
    assert spell("ab") == "ALPHA-BETA"
    assert spell("cab", sep=" ") == "GAMMA ALPHA BETA"
    assert spell("") == ""
"""


def _base() -> dict[str, str]:
    return {
        "glyphs/__init__.py": "",
        "glyphs/names.json": json.dumps(NAMES),
        "glyphs/spell.py": SPELL,
        "tests/test_spell.py": SPELL_TESTS,
    }


def test_a_character_the_table_lacks_catches_the_fix(tmp_path: Path) -> None:
    fixed = SPELL.replace(
        "        name = NAMES.get(char)\n",
        "        name = NAMES.get(char)\n        if name is None:\n            continue\n",
    )
    assert fixed != SPELL
    _repo, data = sample_testgen(
        tmp_path, _base(), {"glyphs/spell.py": fixed}, "spell: skip unknown characters"
    )
    assert any("absent from" in n and "NAMES" in n for n in data["notes"]), data["notes"]
    facts = caught(data, "spell(")
    assert facts, data["notes"]
    # the parent raised on a character the table lacks (None.upper()); head skips it
    assert any("AttributeError" in f["parent"] for f in facts), facts


def test_a_refactor_of_the_lookup_gets_no_claim(tmp_path: Path) -> None:
    refactor = SPELL.replace(
        "    out = []\n    for char in word:\n        name = NAMES.get(char)\n"
        "        out.append(name.upper())\n    return sep.join(out)\n",
        "    names = [NAMES.get(char) for char in word]\n"
        "    return sep.join(name.upper() for name in names)\n",
    )
    assert refactor != SPELL
    _repo, data = sample_testgen(
        tmp_path, _base(), {"glyphs/spell.py": refactor}, "spell: one comprehension"
    )
    # the absent characters were tried: both sides raise the same on them
    assert any("absent from" in n for n in data["notes"]), data["notes"]
    assert caught(data, "spell(") == []
    assert not any(c["evidence"].get("catches_change") for c in data["kept"])


LOOKUPS = """import json

TABLE = json.loads('{"x": 1}')
WORDS = {"one", "two"}


class Escapes:
    ESCAPES = {"n": "\\\\n"}

    def escape(self, text):
        out = []
        for ch in text:
            if ch not in self.ESCAPES:
                out.append(ch)
                continue
            out.append(self.ESCAPES[ch])
        return "".join(out)


def _one(key):
    try:
        return TABLE[key]
    except KeyError:
        return None


def value(name):
    return _one(name.lower())


def count(text):
    return sum(1 for word in text.split() if word in WORDS)


def total(weights):
    return sum(TABLE.get(k, 0) for k, _w in weights.items())


def local(text):
    table = {"a": 1}
    return table.get(text)


class Code:
    def __init__(self, code, strict=False):
        self.code = code.upper()

    def name(self):
        found = TABLE.get(self.code)
        return found
"""


def _rows(name: str, *needles: str) -> list[int]:
    rows = LOOKUPS.split("\n")
    return [i + 1 for i, r in enumerate(rows) if any(n in r for n in needles)]


def test_lookups_find_the_container_and_the_parameter() -> None:
    found = lookups(LOOKUPS, "Escapes.escape", _rows("escape", "out.append(ch)"))
    assert [(f.chain, f.owner, f.param, f.each) for f in found] == [
        (("ESCAPES",), "Escapes", "text", "item")
    ]  # the condition of an ``if`` whose body changed
    found = lookups(LOOKUPS, "value", _rows("_one", "return None"))
    assert [(f.chain, f.param, f.each) for f in found] == [(("TABLE",), "name", "")]
    found = lookups(LOOKUPS, "count", _rows("count", "word in WORDS"))
    assert [(f.chain, f.param, f.each) for f in found] == [(("WORDS",), "text", "word")]
    found = lookups(LOOKUPS, "total", _rows("total", "TABLE.get"))
    assert [(f.chain, f.param, f.each) for f in found] == [(("TABLE",), "weights", "key")]
    assert lookups(LOOKUPS, "local", _rows("local", "table.get")) == []  # a local value
    assert lookups(LOOKUPS, "count", []) == []
    found = lookups(LOOKUPS, "Code.name", _rows("name", "return found"))
    assert [(f.chain, f.param, f.each, f.ctor) for f in found] == [
        (("TABLE",), "ctor:code", "", ("code", "strict"))
    ]  # the constructor's argument, through ``self.code``


def test_absent_candidates_use_what_the_container_lacks() -> None:
    lookup = Lookup(("NAMES",), "", "word", "item", 3)
    bases = [Candidate(("'ab'",)), Candidate(("'cab'",), (("sep", "' '"),))]
    answer = Answer("mapping", absent={"q", "\u4e2d", "\x00"}, keys=["a"], chars=["a", "e"])
    made = absent_candidates(bases, ["word", "sep"], lookup, answer)
    args = [c.args[0] for c in made]
    assert "'abq'" in args and "'qab'" in args and "'ab\u4e2d'" in args
    assert "'abe'" in args  # a character the table holds and no test spells
    assert all(c.kwargs == () for c in made if c.args[0].startswith("'ab"))
    assert absent_candidates(bases, ["word"], lookup, Answer()) == []  # not read at run time
    key = Lookup(("TABLE",), "", "name", "", 3)
    answer = Answer("mapping", absent={"AB", "ax"}, keys=["zeta", "ab"])
    made = absent_candidates([Candidate(("'ab'",))], ["name"], key, answer)
    assert [c.args[0] for c in made] == ["'ax'", "'AB'", "'zeta'"]
    built = Candidate((), ctor=(("'ab'",), (("strict", "True"),)), receiver="Code")
    made = absent_candidates(
        [built], [], Lookup(("TABLE",), "", "ctor:code", "", 3, ("code",)), answer
    )
    assert [c.ctor for c in made][:1] == [(("'ax'",), (("strict", "True"),))]
