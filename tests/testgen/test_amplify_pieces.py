"""Input variants inside strings and tables (``amplify_pieces``, ``amplify_refs``): a
number inside a test's string varied alone towards what the changed lines test, the
constants and tables a test reads from its module or class reached, a table given one
row more."""

from __future__ import annotations

import ast
import copy
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.testgen.amplify_inputs import Steer, add_variants, steer_from_change
from bot.testgen.amplify_pieces import kind_values, piece_values, pieces
from tests.testgen.test_amplify_inputs import (
    _changed,
    _function,
    _Inline,
    _one_row_more,
    check_variants,
)

# ---- the pieces of a text ----


def test_the_numbers_inside_texts_are_pieces_and_words_are_not() -> None:
    def texts(text: str) -> list[str]:
        return [p.text for p in pieces(text)]

    assert texts('{"expires_in": 3600, "scope": "a b"}') == ["3600"]
    assert texts("token=2YotnFZFEjr1zCs&expires_in=3600") == ["3600"]  # an id is no number
    assert texts("<p>&#147;Hi&#x2603; &#XF1;</p>") == ["147", "2603", "F1"]
    assert texts("v1.2.3 on 2020-01-02") == ["1", "2", "3", "2020", "01", "02"]
    assert texts("width: 10px; ratio 3.5") == ["10", "3.5"]
    assert texts("no numbers here") == []


def test_a_piece_is_steered_to_the_tested_kind_and_bounds_in_its_own_base() -> None:
    steered, generic = piece_values('{"expires_in": 3600}', ("float",), ())
    assert steered == ['{"expires_in": 3600.5}']
    assert '{"expires_in": 3601}' in generic and '{"expires_in": }' in generic
    steered, _ = piece_values('{"at": 200.42}', ("int",), ())
    assert steered == ['{"at": 200}']
    # a character reference keeps its base and case, is never made a fraction
    steered, _ = piece_values("pi&#xf1;ata &#Xf1;", ("float",), (0xD800,))
    assert steered == ["pi&#xd800;ata &#Xf1;", "pi&#xf1;ata &#Xd800;"]
    steered, _ = piece_values("&#147;", ("float",), (0xD800, 0))
    assert steered == ["&#55296;", "&#0;"]
    # the pieces start at different steered numbers: a few copies try several
    steered, _ = piece_values("&#1;&#2;", (), (7, 8))
    assert steered[:2] == ["&#7;&#2;", "&#1;&#8;"]
    # a two-digit date part stays two digits; a negative bound does not fit a piece
    dated = piece_values("2020-01-02", (), (-1, 5))[0]
    assert "2020-05-02" in dated and not any("-1" in d for d in dated)


def test_a_number_becomes_the_kind_the_change_tests() -> None:
    assert kind_values(3600, ("float",)) == [3600.5, 3600.0]
    assert kind_values(3600, ("str",)) == ["3600"]
    assert kind_values(200.42, ("int",)) == [200]
    assert kind_values("3600", ("float", "int")) == [3600.5, 3600]
    assert kind_values(True, ("float",)) == [] and kind_values("abc", ("float",)) == []


EXPIRES_OLD = """
def parse_expires(params):
    expires_in = None
    if isinstance(params.get("expires_in"), int):
        expires_in = params.get("expires_in")
    elif params.get("expires_in") is not None:
        raise ValueError("expires_in must be an int")
    return expires_in
"""

EXPIRES_NEW = EXPIRES_OLD.replace(
    '    elif params.get("expires_in") is not None:',
    '    elif isinstance(params.get("expires_in"), float):\n'
    '        expires_in = int(params.get("expires_in"))\n'
    '    elif params.get("expires_in") is not None:',
)


def test_the_steer_holds_the_kinds_the_changed_lines_test() -> None:
    steer = steer_from_change(EXPIRES_NEW, EXPIRES_OLD, {5, 6})
    assert steer.kinds[0] == "float"


# ---- realistic test modules ----

TOKEN_TESTS = """import json
import unittest

from oauth.parameters import parse_token_response

SAMPLE = 'access_token=abc&token_type=Bearer&expires_in=3600'


class TokenTests(unittest.TestCase):
    json_response = ('{ "access_token": "2YotnFZFEjr1zCsicMWpAA",'
                     '  "token_type": "example",'
                     '  "expires_in": 3600 }')
    json_dict = {"access_token": "2YotnFZFEjr1zCsicMWpAA", "expires_in": 3600}

    def setUp(self):
        self.body = b'{"expires_in": 60}'

    def test_json(self):
        self.assertEqual(parse_token_response(self.json_response), self.json_dict)
        token = parse_token_response('{"expires_in": 7200, "scope": "a b"}')
        self.assertEqual(token["expires_in"], 7200)
        self.assertEqual(parse_token_response(SAMPLE)["expires_in"], 3600)
        parse_token_response(self.body)
"""


def _one_piece(old: str | bytes, new: str | bytes) -> None:
    """When only digits differ, they differ in one place: one number of the text was
    changed, the rest kept byte for byte."""
    a, b = (x.decode("latin-1") if isinstance(x, bytes) else x for x in (old, new))
    if re.sub(r"[0-9.]", "", a) != re.sub(r"[0-9.]", "", b):
        return  # not a piece variant (a text put at an end, a character broken)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    assert re.fullmatch(r"[0-9.]*", a[start : len(a) - end]), (a, b)
    assert re.fullmatch(r"[0-9.]*", b[start : len(b) - end]), (a, b)


def test_a_json_body_in_the_class_gets_its_number_made_a_float() -> None:
    steer = steer_from_change(EXPIRES_NEW, EXPIRES_OLD, {5, 6})
    result, variants = add_variants(TOKEN_TESTS, "TokenTests.test_json", steer, limit=12)
    check_variants(TOKEN_TESTS, "TokenTests.test_json", result, variants)
    original = _function(TOKEN_TESTS, "TokenTests.test_json")
    inline = _Inline(TOKEN_TESTS, "TokenTests")
    news = []
    for v in variants:
        [(old, new)] = _changed(
            inline.visit(copy.deepcopy(original)), inline.visit(_function(result, v.qualname))
        )
        news.append(new)
        if isinstance(old, str | bytes) and isinstance(new, type(old)):
            _one_piece(old, new)
    # the class's JSON body, the body in the test, setUp's bytes, the module's query
    # string: each with its number made a float, the rest of the body kept
    assert (
        '{ "access_token": "2YotnFZFEjr1zCsicMWpAA",  "token_type": "example",'
        '  "expires_in": 3600.5 }' in news
    )
    assert '{"expires_in": 7200.5, "scope": "a b"}' in news
    assert b'{"expires_in": 60.5}' in news
    assert "access_token=abc&token_type=Bearer&expires_in=3600.5" in news
    json.loads(news[news.index('{"expires_in": 7200.5, "scope": "a b"}')])
    # the expected sides are never touched: json_dict, 7200 and 3600 stay
    copied = [ast.unparse(_function(result, v.qualname)) for v in variants]
    assert all("self.json_dict" in c for c in copied)
    assert all("['expires_in'], 7200)" in c and "['expires_in'], 3600)" in c for c in copied)


CASES_TESTS = """import pytest

from oauth.parameters import parse_expires

CASES = [
    ("expires_in only", {"expires_in": 3600}, 3600),
    ("expires_in str", {"expires_in": "3600"}, 3600),
]


@pytest.mark.parametrize("title, params, expected", CASES)
def test_parametrized(title, params, expected):
    assert parse_expires(params) == expected


def test_looped():
    for title, params, expected in CASES:
        assert parse_expires(params) == expected, title
"""


def test_a_modules_table_gets_one_row_more_with_its_input_steered() -> None:
    steer = steer_from_change(EXPIRES_NEW, EXPIRES_OLD, {5, 6})
    for qualname in ("test_parametrized", "test_looped"):
        result, variants = add_variants(CASES_TESTS, qualname, steer, limit=6)
        check_variants(CASES_TESTS, qualname, result, variants)
        assert variants, qualname
        first = ast.unparse(_function(result, variants[0].qualname))
        # a copy of the first row, its input a float, its title and expected kept
        assert "[*CASES, ('expires_in only', {'expires_in': 3600.5}, 3600)]" in first
        for v in variants:
            assert "[*CASES, " in v.description
            inline = _Inline(CASES_TESTS, "")
            inline.visit(_function(result, v.qualname))
            [(table, row)] = inline.added
            _one_row_more(table, row)
            row_values = ast.literal_eval(row)
            assert row_values[0] in ("expires_in only", "expires_in str")  # title kept
            assert row_values[2] == 3600  # the expected column kept


def test_a_table_in_the_class_with_a_name_from_the_module_is_left_alone() -> None:
    module = """from m import f

X = 1


class TestT:
    TABLE = [(X, 2)]

    def test_t(self):
        for a, b in self.TABLE:
            assert f(a) == b
"""
    assert add_variants(module, "TestT.test_t", Steer(numbers=(5,))) == (module, [])


def test_a_name_the_test_binds_itself_is_not_the_modules_constant() -> None:
    module = """from m import f

BODY = "a=1"


def test_t():
    BODY = "b=2"
    f(BODY)
"""
    _result, variants = add_variants(module, "test_t", Steer(numbers=(5,)))
    assert variants and all("BODY ->" not in v.description for v in variants)


# ---- the property: a prefix, one literal (or one row) differs ----

_BODIES = st.one_of(
    st.builds(
        lambda k, n: json.dumps({k: n, "b": "x"}),
        st.sampled_from(["a", "expires_in"]),
        st.integers(0, 99999) | st.floats(0, 1e6, allow_nan=False),
    ),
    st.builds(lambda a, b: f"a={a}&b={b}", st.integers(0, 999), st.integers(0, 999)),
    st.builds(lambda n: f"<p>&#{n};&#x{n:x};</p>", st.integers(0, 0x10FFFF)),
    st.builds(lambda y, m: f"{y}-{m:02d}-01", st.integers(1900, 2100), st.integers(1, 12)),
    st.text(max_size=12),
)


@st.composite
def _modules(draw: st.DrawFn) -> str:
    body, other = draw(_BODIES), draw(_BODIES)
    number = draw(st.integers(-5, 5000))
    kind = draw(st.sampled_from(["module", "class", "setup", "table", "inline"]))
    head = (
        f"from m import parse\n\nSAMPLE = {body!r}\nCASES = [({body!r}, 1), ({other!r}, 2)]\n\n\n"
    )
    if kind == "module":
        return head + f"def test_gen():\n    assert parse(SAMPLE, {number}) == {other!r}\n"
    if kind == "table":
        return head + (
            "def test_gen():\n    for text, expected in CASES:\n"
            "        assert parse(text) == expected\n"
        )
    if kind == "inline":
        return head + f"def test_gen():\n    got = parse({body!r}, n={number})\n    assert got\n"
    inside = f"    body = {body!r}\n\n" if kind == "class" else ""
    setup = f"    def setUp(self):\n        self.body = {body!r}\n\n" if kind == "setup" else ""
    return head + (
        f"class TestGen:\n{inside}{setup}    def test_gen(self):\n"
        f"        self.assertEqual(parse(self.body), {other!r})\n"
    )


_STEERS = st.builds(
    Steer,
    strings=st.lists(st.text(max_size=3), max_size=2).map(tuple),
    numbers=st.lists(st.integers(-2000, 0x10FFFF), max_size=3).map(tuple),
    kinds=st.lists(st.sampled_from(["float", "int", "str", "numeric"]), max_size=2).map(tuple),
    none=st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(module=_modules(), steer=_STEERS, limit=st.integers(1, 12))
def test_every_variant_keeps_the_module_and_changes_one_literal_or_adds_one_row(
    module: str, steer: Steer, limit: int
) -> None:
    qualname = "TestGen.test_gen" if "class TestGen" in module else "test_gen"
    result, variants = add_variants(module, qualname, steer, limit=limit)
    assert result.startswith(module)
    assert len(variants) <= limit
    check_variants(module, qualname, result, variants)


def test_markup_gets_its_reference_steered_first_a_bare_number_its_whole_text() -> None:
    # the change tests code point bounds and names a string: in markup the number
    # inside is the input and goes first; a text that is one number keeps the whole
    # text's values first (the changed line's literal at its end)
    steer = Steer(strings=("k",), numbers=(-1, 0, 55296))
    module = 'def test_t():\n    parse("<p>&#247; and &#xf7;</p>")\n    size("512")\n'
    _result, variants = add_variants(module, "test_t", steer, limit=2)
    assert [v.description for v in variants] == [
        "line 2: \"<p>&#247; and &#xf7;</p>\" -> '<p>&#0; and &#xf7;</p>'",
        "line 3: \"512\" -> '512k'",
    ]


def test_a_methods_local_of_the_same_name_does_not_hide_the_class_constant() -> None:
    module = """from m import parse


class TestT:
    response_uri = 'https://a.b/cb#token=x&expires_in=3600'

    def test_evil(self):
        response_uri = self.response_uri + "&code=EVIL"
        parse(response_uri)

    def test_parse(self):
        parse(self.response_uri)
"""
    _result, variants = add_variants(module, "TestT.test_parse", Steer(tested=("float",)), 1)
    assert [v.description for v in variants] == [
        "line 12: self.response_uri -> 'https://a.b/cb#token=x&expires_in=3600.5'"
    ]


def test_a_held_terminator_is_broken_first_and_a_conversion_makes_no_fraction() -> None:
    # the change checks a chunk's terminator and converts its size with int(): the
    # chunk is broken where the terminator stands first; an int() conversion asks for
    # no fraction inside a text (only a type check does)
    steer = Steer(byteses=(b"\r\n",), numbers=(-1, 0, 1, 2), kinds=("int", "float"))
    module = 'def test_t():\n    feed(b"5\\r\\n01234\\r\\n")\n'
    _result, variants = add_variants(module, "test_t", steer, limit=3)
    assert [v.description.split(" -> ")[1] for v in variants] == [
        "b'5\\r\\n01234XX'",
        "b'0\\r\\n01234\\r\\n'",
        "b'5XX01234\\r\\n'",
    ]
