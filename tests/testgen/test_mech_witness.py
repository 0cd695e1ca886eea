"""Witnesses of a changed mini-language literal (issue 35): the parent's and the head's
literal at the same place (a regex, a format spec) are compared alone, and the values
they treat differently are put into the tests' inputs: a regex a tokenizer applies to one
word of a larger string gets its witness in place of a word (the witness alone is no
valid input), a format spec applied to each byte gets bytes holding a value it prints
differently; in one real ``nova testgen`` run on a sample project whose own tests hold
no such value. A regex rewritten in the same language (``[0-9]`` -> ``\\d`` with
``re.ASCII``) has no witness and nothing is claimed for it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path

from bot.testgen.amplify_inputs import add_variants, steer_from_change
from bot.testgen.witness import (
    Witnesses,
    format_witnesses,
    literal_pairs,
    placed,
    plain_witnesses,
    regex_witnesses,
    strftime_witnesses,
    witnesses,
)
from tests.testgen.sample import caught, sample_testgen

ASSIGN = '''import re


def _kind(token):
    if re.match(r"^[_\\d]+([eE]\\d+)?$", token):
        return "number"
    if re.match(r"^[A-Za-z_]\\w*$", token):
        return "name"
    return "other"


def parse_assignment(text):
    """``"x = 42"`` gives ``("x", "number", "42")``."""
    parts = text.split()
    if len(parts) != 3 or parts[1] != "=":
        raise ValueError(f"not an assignment: {text!r}")
    return parts[0], _kind(parts[2]), parts[2]
'''
DUMP = '''def hexdump(data):
    """``b"\\\\x01\\\\x02"`` gives ``"01 02"``."""
    return " ".join("{:02}".format(b) for b in data)
'''
CODES = """import re


def is_code(text):
    return re.fullmatch(r"[A-Z]{2}[0-9]{3}", text) is not None
"""
TESTS = """from lex.assign import parse_assignment
from lex.codes import is_code
from lex.dump import hexdump


def test_parse_assignment():
    assert parse_assignment("x = 42") == ("x", "number", "42")
    assert parse_assignment("y = z") == ("y", "name", "z")


def test_hexdump():
    assert hexdump(b"\\x01\\x02") == "01 02"


def test_is_code():
    assert is_code("AB123")
    assert not is_code("A1")
"""


def test_a_changed_regex_and_format_spec_are_caught_through_their_witnesses(
    tmp_path: Path,
) -> None:
    base = {
        "lex/__init__.py": "",
        "lex/assign.py": ASSIGN,
        "lex/dump.py": DUMP,
        "lex/codes.py": CODES,
        "tests/test_lex.py": TESTS,
    }
    change = {
        # "_" is no number any more: a number starts with a digit
        "lex/assign.py": ASSIGN.replace("^[_\\d]+([eE]", "^\\d+[_\\d]*([eE]"),
        # each byte in hexadecimal (10 printed "10", now "0a")
        "lex/dump.py": DUMP.replace('"{:02}"', '"{:02x}"'),
        # the same language written otherwise: nothing to catch
        "lex/codes.py": CODES.replace(
            'r"[A-Z]{2}[0-9]{3}", text)', r'r"[A-Z]{2}\d{3}", text, re.ASCII)'
        ),
    }
    assert all(change[p] != base[p] for p in change)
    _repo, data = sample_testgen(tmp_path, base, change, "number tokens, hex dump, codes")
    # the witness "_" in place of the value word: the whole "_" is no assignment
    assigned = caught(data, "parse_assignment(")
    assert any("_" in fact["call"] for fact in assigned), data["notes"]
    dumped = caught(data, "hexdump(")
    assert dumped, data["notes"]
    assert not caught(data, "is_code(")
    assert any("treat differently" in n for n in data["notes"]), data["notes"]


def test_literals_pair_by_place_and_an_f_string_is_its_template() -> None:
    pairs = literal_pairs(
        ['    s += " ".join(["0x{:02x}".format(ord(self.data[i:i + 1]))'],
        ['    s += " ".join(["0x{:02}".format(ord(self.data[i:i + 1]))'],
    )
    assert pairs == [("0x{:02}", "0x{:02x}")]  # a row continued below is read too
    assert literal_pairs(['x = f"{a:>4}-{b!r}"'], ['x = f"{a:<4}-{b!r}"']) == [
        ("{:<4}-{!r}", "{:>4}-{!r}")
    ]
    assert literal_pairs(['x = "same"'], ['x = "same"']) == []


def test_regex_witnesses_are_matched_differently() -> None:
    old, new = r"^[_\d]+([jJ]|[eE]\d*)?$", r"^\d+[_\d]*([jJ]|[eE]\d*)?$"
    found = regex_witnesses(old, new)
    assert "_" in found
    for text in found:
        assert (re.search(old, text) is None) != (re.search(new, text) is None), text
    # the tests' own strings, one character changed
    assert regex_witnesses(r"^key=\w+$", r"^key=[\w.]+$", ["key=abc"])
    # the same language written otherwise: no witness
    assert regex_witnesses(r"^[0-9]{3}$", r"^\d{3}$") == []


def test_format_witnesses_print_differently() -> None:
    found = format_witnesses("0x{:02}", "0x{:02x}")
    assert found[:2] == [10, 11] and 255 in found
    assert all(f"0x{n:02}" != f"0x{n:02x}" for n in found)
    assert format_witnesses("%5.2f", "%5.3f")
    assert 10 in format_witnesses("%d items", "%x items")  # not a date pattern
    assert format_witnesses("%Y-%m", "%Y/%m") == []  # a date pattern
    assert format_witnesses("{name:>4}", "{name:<4}")
    assert format_witnesses("{:d}", "{:d}") == []
    assert format_witnesses("{0.real}", "{0.imag}") == []  # an attribute: not a spec


def test_strftime_and_plain_witnesses() -> None:
    texts = strftime_witnesses("%Y-%m-%d", "%Y/%m/%d")
    assert dt.datetime(2021, 12, 9).strftime("%Y/%m/%d") in texts
    assert plain_witnesses("#", "# ") == ["#", "# "]  # the one without the other first


def test_witnesses_are_placed_where_the_changed_statement_looks() -> None:
    w = Witnesses(texts=("_",), numbers=(10, 1.5), context=(".",))
    # right after the statement's other literal, in place of the word there
    assert placed("a.b\n", w)[0] == "a._\n"
    assert placed(["a", ".", "b"], w)[0] == ["a", ".", "_"]
    assert b"\n\x02" in placed(b"\x01\x02", w)
    assert placed(3, w) == [10, 1.5]


def test_witnesses_of_a_change_read_the_rows_it_replaced() -> None:
    parent = 'import re\n\ndef f(t):\n    return re.match(r"^[_\\d]+$", t)\n'
    head = parent.replace("^[_\\d]+$", "^\\d+[_\\d]*$")
    assert head != parent
    found = witnesses(head, parent, [4])
    assert "_" in found.texts
    assert not witnesses(head, None, [4])


def test_amplified_copies_hold_the_witness_first() -> None:
    parent = 'import re\n\ndef f(t):\n    return t == "." and re.match(r"^[_\\d]+$", t)\n'
    head = parent.replace("^[_\\d]+$", "^\\d+[_\\d]*$")
    steer = steer_from_change(head, parent, {4})
    assert "_" in steer.witness_texts and "." in steer.witness_context
    module = 'from p import parse\n\n\ndef test_parse():\n    assert parse("a.b") == 1\n'
    text, made = add_variants(module, "test_parse", steer, limit=2)
    assert made and "parse('a._')" in text, text


def test_steer_fields_merge_as_tuples() -> None:
    """Amplification merges the steers of several changed modules field by field, as
    tuples (or booleans): the witnesses are kept in tuple fields too."""
    parent = 'def f(b):\n    return "{:02}".format(b)\n'
    steer = steer_from_change(parent.replace("{:02}", "{:02x}"), parent, {2})
    assert steer.witness_numbers[:2] == (10, 11)
    for f in dataclasses.fields(steer):
        assert isinstance(getattr(steer, f.name), tuple | bool), f.name
