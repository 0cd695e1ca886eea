"""Regular expressions built at import get witnesses too (issue 35): a parser's block
pattern is a template ``.format()``-ed with module constants, and a fix makes the block's
index line optional. No changed literal is a regex by itself (``{idx}`` in a template),
so the strings the two BUILT patterns match differently are searched (a whole line of the
tests' own input dropped) and the parser's public function is probed with them: a block
without an index line parses on the head and raised on the parent. modstate compares a
compiled pattern's whole text and flags (the repr cuts a long one). A pattern rebuilt to
match the same language claims nothing, in one real ``nova testgen`` run."""

from __future__ import annotations

import re
from pathlib import Path

from bot.testgen.amplify_inputs import steer_from_change
from bot.testgen.modregex import changed_patterns, module_patterns, pattern_witnesses
from bot.testgen.modstate import _compare
from bot.testgen.probe_state import observe
from bot.testgen.witness import Witnesses, placed, witnesses
from tests.testgen.sample import caught, sample_testgen

BLOCKS = '''import re

RGX_INDEX = r"[0-9]+"
RGX_KEY = r"[a-z]+"
RGX_VALUE = r"[^\\n]*"
RGX_EOL = r"\\r?\\n"
BLOCK_REGEX = re.compile(
    r"({idx}){eol}({key})=({value}){eol}".format(
        idx=RGX_INDEX, key=RGX_KEY, value=RGX_VALUE, eol=RGX_EOL
    )
)


class ParseError(ValueError):
    pass


def parse(text):
    """Blocks of an index line and a ``key=value`` line: ``(index, key, value)``."""
    out, at = [], 0
    for m in BLOCK_REGEX.finditer(text):
        if m.start() != at:
            raise ParseError(f"not a block at {at}")
        index = int(m.group(1)) if m.group(1) is not None else None
        out.append((index, m.group(2), m.group(3)))
        at = m.end()
    if at != len(text):
        raise ParseError(f"not a block at {at}")
    return out
'''
# a block without an index line is read (index None)
FIXED = BLOCKS.replace('r"({idx}){eol}({key})', 'r"(?:({idx}){eol})?({key})')
SHEET = """import re

RGX_CELL = r"[A-Z]+[0-9]+"
CELL_REGEX = re.compile(f"^({RGX_CELL})$")


def is_cell(text):
    return CELL_REGEX.search(text) is not None
"""
# the same language written otherwise: nothing to catch
REBUILT = SHEET.replace('RGX_CELL = r"[A-Z]+[0-9]+"', 'RGX_CELL = r"(?:[A-Z])+[0-9]" + "+"')
TESTS = """from blocks.parser import parse
from blocks.sheet import is_cell


def test_parse():
    assert parse("1\\nalpha=10\\n2\\nbeta=x y\\n") == [(1, "alpha", "10"), (2, "beta", "x y")]


def test_is_cell():
    assert is_cell("AB12")
    assert not is_cell("12AB")
"""


def test_a_pattern_built_at_import_is_caught_through_the_public_parser(tmp_path: Path) -> None:
    base = {
        "blocks/__init__.py": "",
        "blocks/parser.py": BLOCKS,
        "blocks/sheet.py": SHEET,
        "tests/test_blocks.py": TESTS,
    }
    change = {"blocks/parser.py": FIXED, "blocks/sheet.py": REBUILT}
    assert all(change[p] != base[p] for p in change)
    _repo, data = sample_testgen(tmp_path, base, change, "a block's index line is optional")
    parsed = caught(data, "parse(")
    assert parsed, data["notes"]
    # the witness: the tests' own text with its index line dropped
    assert any("alpha=10" in f["call"] and "1\\nalpha" not in f["call"] for f in parsed), parsed
    assert not caught(data, "is_cell("), data["notes"]


def test_patterns_are_folded_from_the_module_source() -> None:
    patterns = module_patterns(BLOCKS)
    assert patterns["BLOCK_REGEX"] == (r"([0-9]+)\r?\n([a-z]+)=([^\n]*)\r?\n", 0)
    source = (
        "import re as regex\n"
        'A = "x" + "y" * 2\n'
        'B = regex.compile(f"^{A}$", regex.I | regex.M)\n'
        'C = "|".join([A, regex.escape("a.b")])\n'
        "def f(s):\n    return regex.match(C, s)\n"
        "D = make()\n"
        'E = regex.compile(D + "x")\n'
    )
    found = module_patterns(source)
    assert found["B"] == ("^xyy$", int(re.I | re.M))
    assert found["C"] == (r"xyy|a\.b", 0)  # a string handed to an re function
    assert "A" not in found  # a string no re function takes
    assert "E" not in found  # built from what does not fold: not guessed
    assert [n for n, _o, _n in changed_patterns(FIXED, BLOCKS)] == ["BLOCK_REGEX"]
    assert changed_patterns(BLOCKS, BLOCKS) == []


def test_witnesses_drop_a_whole_line_of_a_seed_and_none_for_the_same_language() -> None:
    (_n, old, new), *_ = changed_patterns(FIXED, BLOCKS)
    seed = "1\nalpha=10\n2\nbeta=20\n"
    found = pattern_witnesses([(old, new)], [seed])
    assert (seed, "alpha=10\n2\nbeta=20\n") in found, found
    for _seed, text in found:
        a, b = re.compile(old[0], old[1]), re.compile(new[0], new[1])
        ma, mb = a.search(text), b.search(text)
        assert (ma and (ma.span(), ma.groups())) != (mb and (mb.span(), mb.groups())), text
    (_n, old2, new2), *_ = changed_patterns(REBUILT, SHEET)
    assert old2 != new2
    assert pattern_witnesses([(old2, new2)], ["AB12", "12AB"]) == []
    # a class that now lets a tab in: the characters at its ranges' ends are tried
    tab = pattern_witnesses([((r"[^'\000-\037]*", 0), (r"[^'\000-\010\012-\037]*", 0))])
    assert tab and all("\t" in t for _s, t in tab), tab
    # a pattern that backtracks for ever on the seed: the child is stopped, Nova goes on
    assert pattern_witnesses([(("(a+)+$", 0), ("(a+)+b$", 0))], ["a" * 40 + "!"]) == []


def test_the_witness_replaces_the_seed_whole_in_both_generators() -> None:
    lines = [n for n, row in enumerate(FIXED.splitlines(), 1) if "{idx}" in row]
    w = witnesses(FIXED, BLOCKS, lines, ["1\nalpha=10\n"])
    assert ("1\nalpha=10\n", "alpha=10\n") in w.rewrites
    assert placed("1\nalpha=10\n", w)[0] == "alpha=10\n"
    assert placed("x", Witnesses(rewrites=(("y", "z"),))) == []
    # amplification's steer (no seeds): strings walked from the patterns
    steer = steer_from_change(FIXED, BLOCKS, set(lines))
    assert steer.witness_texts
    new = re.compile(module_patterns(FIXED)["BLOCK_REGEX"][0])
    old = re.compile(module_patterns(BLOCKS)["BLOCK_REGEX"][0])
    assert any((new.search(t) is None) != (old.search(t) is None) for t in steer.witness_texts)


def test_modstate_compares_a_long_pattern_whole_and_pins_its_behaviour() -> None:
    tail = "x" * 300  # past the 200 characters the repr of a pattern shows
    old = observe(re.compile(r"([0-9]+)\n([a-z]+)\n" + tail))
    new = observe(re.compile(r"(?:([0-9]+)\n)?([a-z]+)\n" + tail))
    checks, said = _compare(new, old)
    assert checks and "differs in its pattern" in said, said
    rebuilt = observe(re.compile(r"(?:[0-9])+\n([a-z]+)\n" + tail))
    checks, said = _compare(rebuilt, observe(re.compile(r"[0-9]+\n([a-z]+)\n" + tail)))
    assert checks == [] and "no string was found" in said, said
    assert _compare(old, old)[1] == "is the same on both sides (its whole pattern and flags)"
    flagged = observe(re.compile(r"([0-9]+)\n([a-z]+)\n" + tail, re.I))
    assert "flags" in _compare(flagged, old)[1]
