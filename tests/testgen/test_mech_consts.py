"""Inputs that carry the constants the changed code branches on (issue 35). The fix sits
in the branch for one type tag (``if kind == TYPE_PAIR:``) of a record decoder; the tag
is reached only through a field code that a table of the module maps to it, and the
project's tests only decode the other codes. One real ``nova testgen`` run catches the
fix with the code that carries the tag put in place of a test's code; a refactor of the
branch that keeps its behaviour gets no claim."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.consts import branch_constants, constant_inputs, swap_constants
from bot.testgen.inputs import Candidate
from tests.testgen.sample import caught, sample_testgen

FIELDS = """TYPE_TEXT = "text"
TYPE_INT = "int"
TYPE_PAIR = "pair"


class Field:
    def __init__(self, code, name, kind):
        self.code, self.name, self.kind = code, name, kind


FIELDS = [
    Field(1, "title", TYPE_TEXT),
    Field(2, "count", TYPE_INT),
    Field(2988, "tagged", TYPE_PAIR),
]


def decode(records):
    \"\"\"``[(code, raw bytes), ...]`` -> ``{field name (or code): value}``.\"\"\"
    table = {f.code: f for f in FIELDS}
    out = {}
    for code, raw in records:
        field = table.get(code)
        if field is None:
            out[code] = raw
        else:
            out[field.name] = _value(raw, field.kind)
    return out


def _value(raw, kind):
    if kind == TYPE_TEXT:
        return raw.decode("utf-8")
    if kind == TYPE_INT:
        return int.from_bytes(raw, "big")
    if kind == TYPE_PAIR:
        return (raw[:1], raw[1:].decode("utf-8"))
    return raw
"""
TESTS = """from records.fields import decode


def test_decode():
    assert decode([(1, b"hello"), (2, b"\\x00\\x05")]) == {"title": "hello", "count": 5}


def test_unknown_code_is_kept_raw():
    assert decode([(9, b"zz")]) == {9: b"zz"}
"""


def _base() -> dict[str, str]:
    return {
        "records/__init__.py": "",
        "records/fields.py": FIELDS,
        "tests/test_fields.py": TESTS,
    }


def test_the_code_that_carries_the_branch_constant_catches_the_fix(tmp_path: Path) -> None:
    fixed = FIELDS.replace(
        'return (raw[:1], raw[1:].decode("utf-8"))', 'return (raw[0], raw[1:].decode("utf-8"))'
    )
    assert fixed != FIELDS
    _repo, data = sample_testgen(
        tmp_path, _base(), {"records/fields.py": fixed}, "fields: a pair's tag is an int"
    )
    facts = caught(data, "decode(")
    assert facts, data["notes"]
    # the code 2988 (which the module maps to TYPE_PAIR) in place of a test's code
    assert any("(2988, b" in f["call"] for f in facts), facts
    assert any("tagged" in f["head"] for f in facts), facts


def test_a_refactor_of_the_branch_gets_no_claim(tmp_path: Path) -> None:
    refactor = FIELDS.replace(
        '        return (raw[:1], raw[1:].decode("utf-8"))\n',
        '        head, rest = raw[:1], raw[1:]\n        return (head, rest.decode("utf-8"))\n',
    )
    assert refactor != FIELDS
    _repo, data = sample_testgen(
        tmp_path,
        _base(),
        {"records/fields.py": refactor},
        "fields: name the parts",
        exits=(0, 1, 4),
    )
    assert caught(data, "decode(") == []
    assert not any(c["evidence"].get("catches_change") for c in data["kept"])


def test_the_constants_of_the_branches_holding_the_changed_lines() -> None:
    lines = [n for n, row in enumerate(FIELDS.split("\n"), 1) if "raw[:1]" in row]
    found = branch_constants(FIELDS, lines)
    # the enclosing condition's named constant, resolved; the code beside it elsewhere
    assert found.values == ["pair"]
    assert found.carriers[:1] == [2988]
    assert "text" in found.peers and "int" in found.peers
    # one literal of the same type at a time, at any depth; a peer's value first
    assert swap_constants("[(1, b'x'), (2, b'y')]", 2988) == [
        "[(2988, b'x'), (2, b'y')]",
        "[(1, b'x'), (2988, b'y')]",
    ]
    assert swap_constants("[F(1, 'a', 'text')]", "pair", frozenset({"text"}))[0] == (
        "[F(1, 'a', 'pair')]"
    )
    assert swap_constants("[(1, b'x')]", "has space") == []  # not a word: no role
    made = constant_inputs([Candidate(("[(1, b'hello')]",))], FIELDS, lines)
    assert [c.args for c in made] == [("[(2988, b'hello')]",)]


def test_match_cases_membership_and_lookups() -> None:
    source = """MODES = {"r": 1, "w": 2}
LIMIT = 7


def f(mode, n, opts):
    match mode:
        case "append":
            return 1
    if n in (3, LIMIT):
        if mode in MODES:
            return opts["depth"] + 1
    return 0
"""
    rows = source.split("\n")
    changed = [n for n, row in enumerate(rows, 1) if "return 1" in row or "depth" in row]
    found = branch_constants(source, changed)
    assert "append" in found.values
    assert {3, 7, "r", "w", "depth"} <= set(found.values)


SIG = """FLOOR = 1000000000


class Invalid(Exception):
    pass


def check(sig):
    \"\"\"Validate a signature's fields: ``b"t"`` (signed at) and ``b"x"`` (expires).\"\"\"
    if b"t" in sig:
        t_sign = int(sig[b"t"])
        if t_sign < FLOOR:
            raise Invalid("t= too early")
    if b"x" in sig:
        x_sign = int(sig[b"x"])
        if x_sign < FLOOR:
            raise Invalid("x= too early")
        if x_sign < t_sign:
            raise Invalid("x= before t=")
    return sorted(sig)
"""
SIG_TESTS = """import pytest

from seal.sig import Invalid, check


def test_check():
    sig = {b"v": b"1", b"d": b"example.com", b"t": b"1299525798"}
    check(sig)
    late = sig.copy()
    late[b"t"] = b"1400000000"
    late[b"x"] = b"1399525798"
    with pytest.raises(Invalid):
        check(late)
    late[b"x"] = b"1500000000"
    assert check(late) == [b"d", b"t", b"v", b"x"]
"""


def test_a_key_left_out_everywhere_the_test_gives_it_catches_the_fix(tmp_path: Path) -> None:
    fixed = SIG.replace(
        '            raise Invalid("t= too early")\n',
        '            raise Invalid("t= too early")\n    else:\n        t_sign = None\n',
    ).replace("if x_sign < t_sign:", "if t_sign and x_sign < t_sign:")
    assert fixed.count("t_sign = None") == 1
    base = {"seal/__init__.py": "", "seal/sig.py": SIG, "tests/test_sig.py": SIG_TESTS}
    _repo, data = sample_testgen(tmp_path, base, {"seal/sig.py": fixed}, "sig: x= without t=")
    kept = [c for c in data["kept"] if c["evidence"].get("catches_change")]
    assert kept, data["notes"]
    facts = [f for c in kept for f in c["evidence"].get("amplified", [])]
    # b"t" left out of the dict literal and of the copy's assignment, at once
    assert any("b't' left out" in f.get("amplifies", "") for f in facts), facts
    assert any("UnboundLocalError" in f["parent"] for f in facts), facts


def test_leaving_a_key_out_of_a_refactor_claims_nothing(tmp_path: Path) -> None:
    refactor = SIG.replace(
        "        if x_sign < t_sign:\n",
        "        signed = t_sign\n        if x_sign < signed:\n",
    )
    assert refactor != SIG
    base = {"seal/__init__.py": "", "seal/sig.py": SIG, "tests/test_sig.py": SIG_TESTS}
    _repo, data = sample_testgen(
        tmp_path, base, {"seal/sig.py": refactor}, "sig: name it", exits=(0, 1, 4)
    )
    assert not any(c["evidence"].get("catches_change") for c in data["kept"])


def test_amplification_puts_the_branch_constant_in_place_of_a_peer_literal() -> None:
    from bot.testgen.amplify_inputs import add_variants, steer_from_change

    fixed = FIELDS.replace("raw[:1], raw[1:]", "raw[0], raw[1:]")
    changed = {n for n, row in enumerate(fixed.split("\n"), 1) if "raw[0], raw[1:]" in row}
    steer = steer_from_change(fixed, FIELDS, changed)
    assert steer.consts[:2] == ("pair", 2988)
    assert "text" in steer.const_peers
    test = (
        "from records.fields import _value\n\n\n"
        'def test_kind():\n    assert _value(b"ab", "text") == "ab"\n'
    )
    _text, made = add_variants(test, "test_kind", steer, limit=4)
    # the literal that is another type tag's value gets the changed branch's tag first
    # (the literals take turns: the bytes one has its own first)
    told = [v.description for v in made if '"text"' in v.description]
    assert told[:1] == ["line 5: \"text\" -> 'pair'"], made
