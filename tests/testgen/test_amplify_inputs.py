"""Input variants of the project's own tests (``amplify_inputs``): copies of one test with
one literal input changed towards what the changed lines test."""

from __future__ import annotations

import ast
import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.testgen.amplify_inputs import Steer, Variant, add_variants, steer_from_change

# ---- what a variant is: one literal of the test changed, nothing else ----


class _Fold(ast.NodeTransformer):
    """A negated number as one literal (``-5``), as the variants write it."""

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            value = node.operand.value
            if type(value) in (int, float):
                return ast.copy_location(ast.Constant(-value), node)
        return node


def _function(source: str, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    body: list[ast.stmt] = ast.parse(source).body
    *classes, name = qualname.split(".")
    for part in classes:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == part).body
    return next(
        n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
    )


def _constants(func: ast.AST) -> tuple[str, list[object]]:
    """The function's shape with its literals blanked, and its literals in order."""
    tree = _Fold().visit(copy.deepcopy(func))
    values: list[object] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            values.append(node.value)
            node.value = "<literal>"
    tree.name = "<name>"
    return ast.dump(tree), values


def _changed(original: ast.AST, variant: ast.AST) -> list[tuple[object, object]]:
    """The (old, new) literals that differ; the rest of the two functions is identical."""
    shape_a, values_a = _constants(original)
    shape_b, values_b = _constants(variant)
    assert shape_a == shape_b, "a variant changes only literals"
    return [
        (a, b)
        for a, b in zip(values_a, values_b, strict=True)
        if (type(a), a) != (type(b), b) and not (a != a and b != b)  # nan is nan
    ]


def _expected_sides(func: ast.AST) -> list[str]:
    """The dumps of the expected sides of a test: assert comparators, assert*'s second
    argument, pytest.raises' arguments."""
    out = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            out += [ast.dump(c) for c in node.test.comparators]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr.startswith("assertEqual"):
                out += [ast.dump(a) for a in node.args[1:]]
            if node.func.attr == "raises":
                out += [ast.dump(node)]
    return out


class _Inline(ast.NodeTransformer):
    """A test with the constants it reads by name written in place (``CHUNK``,
    ``self.body`` from the class or its ``setUp``), and a table with one row more
    (``[*CASES, row]``) as the table itself; the rows added are kept in ``added``."""

    def __init__(self, module: str, owner: str) -> None:
        self.bound: dict[str, ast.expr] = {}
        tree = ast.parse(module)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                name = target.attr if isinstance(target, ast.Attribute) else ""
                name = target.id if isinstance(target, ast.Name) else name
                self.bound.setdefault(name, node.value)
        self.added: list[tuple[ast.expr, ast.expr]] = []  # (table, row)

    def _constant(self, name: str) -> ast.AST | None:
        value = self.bound.get(name)
        if isinstance(value, ast.Constant) and type(value.value) in (str, bytes, int, float):
            return ast.Constant(value.value)
        return None

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self._constant(node.id) or node if isinstance(node.ctx, ast.Load) else node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return self._constant(node.attr) or node
        return node

    def visit_List(self, node: ast.List) -> ast.AST:
        if len(node.elts) == 2 and isinstance(node.elts[0], ast.Starred):
            table = node.elts[0].value
            self.added.append(
                (self.bound.get(getattr(table, "id", getattr(table, "attr", ""))), node.elts[1])
            )
            return table
        self.generic_visit(node)
        return node


def _one_row_more(table: ast.expr | None, row: ast.expr) -> None:
    """``row`` is a row of ``table`` with exactly one literal changed."""
    assert isinstance(table, ast.List | ast.Tuple)
    shape, values = _constants(row)
    differ = []
    for other in table.elts:
        other_shape, other_values = _constants(other)
        if other_shape == shape:
            differ.append(
                sum((type(a), a) != (type(b), b) for a, b in zip(values, other_values, strict=True))
            )
    assert 1 in differ, ast.unparse(row)


def check_variants(module: str, qualname: str, result: str, variants: list[Variant]) -> None:
    compile(result, "<result>", "exec")
    original = _function(module, qualname)
    owner = qualname.rpartition(".")[0]
    for v in variants:
        assert v.qualname == (f"{owner}.{v.name}" if owner else v.name)
        assert v.name.startswith("test") and v.name != original.name
        copied = _function(result, v.qualname)
        inline = _Inline(module, owner)
        seen = _changed(inline.visit(copy.deepcopy(original)), inline.visit(copy.deepcopy(copied)))
        for table, row in inline.added:  # a table's row more: one literal of a row changed
            _one_row_more(table, row)
        assert len(seen) + len(inline.added) == 1, v
        assert _expected_sides(copied) == _expected_sides(original), v
        assert [ast.dump(d) for d in copied.decorator_list if "parametrize" not in ast.dump(d)] == [
            ast.dump(d) for d in original.decorator_list if "parametrize" not in ast.dump(d)
        ]
    assert len({v.name for v in variants}) == len(variants)
    # the original module's text, byte for byte, around the copies
    assert _without(result, variants, owner) == module


def _without(result: str, variants: list[Variant], owner: str) -> str:
    """``result`` with the copies' text taken out again."""
    rows = result.split("\n")
    spans = []
    for v in variants:
        node = _function(result, v.qualname)
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        gap = 1 if owner else 2
        spans.append((first - 1 - gap, node.end_lineno or node.lineno))
    keep = [row for i, row in enumerate(rows) if not any(a <= i < b for a, b in spans)]
    return "\n".join(keep)


# ---- the steer ----

PARSER_OLD = """
def parse_size(text):
    number = int(text)
    if number > 1000:
        raise ValueError("too big")
    return number
"""

PARSER_NEW = """
def parse_size(text):
    if text is None:
        return 0
    number = int(text.strip().rstrip("k"))
    if number >= 1024:
        raise OverflowError("too big")
    if len(text) > 3 and text[0] in "+-":
        return -1
    return number
"""


def _changed_lines(old: str, new: str) -> set[int]:
    import difflib

    out: set[int] = set()
    matcher = difflib.SequenceMatcher(None, old.split("\n"), new.split("\n"), autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            out |= set(range(j1 + 1, j2 + 1))
    return out


def test_the_steer_holds_the_changed_lines_literals_bounds_and_exceptions() -> None:
    steer = steer_from_change(PARSER_NEW, PARSER_OLD, _changed_lines(PARSER_OLD, PARSER_NEW))
    assert {1023, 1024, 1025} <= set(steer.numbers)
    assert 1000 in steer.numbers  # the removed line's bound too
    assert {3, 4} <= set(steer.lengths)  # len(text) > 3
    assert {"+", "-"} <= set(steer.chars)  # text[0] in "+-"
    assert "k" in steer.strings
    assert steer.none  # text is None
    assert "OverflowError" in steer.exceptions and "ValueError" in steer.exceptions
    assert steer.exceptions.index("OverflowError") < steer.exceptions.index("ValueError")
    assert steer.transforms == ("strip",)  # rstrip("k") strips no space


def test_the_steer_of_a_new_module_and_of_nothing_changed() -> None:
    new = 'def f(data):\n    return data.startswith(b"\\r\\n")\n'
    steer = steer_from_change(new, None, {2})
    assert steer.byteses == (b"\r\n",)
    assert steer_from_change(new, new, set()) == Steer()
    assert steer_from_change("def (:", "also broken(", {1}).numbers == ()


# ---- realistic test modules ----

UNITTEST_MODULE = '''import unittest

from pkg.units import parse_size


class TestParseSize(unittest.TestCase):
    """Sizes."""

    def setUp(self):
        self.default = "12"

    def test_plain(self):
        """A plain number."""
        size = parse_size("512")
        self.assertEqual(size, 512)
        self.assertEqual(parse_size("7"), 7, msg="seven")
        self.assertRaises(ValueError, parse_size, "x1")

    def test_other(self):
        self.assertTrue(parse_size(self.default))


if __name__ == "__main__":
    unittest.main()
'''


def test_a_unittest_method_gets_copies_inside_its_class() -> None:
    steer = steer_from_change(PARSER_NEW, PARSER_OLD, _changed_lines(PARSER_OLD, PARSER_NEW))
    result, variants = add_variants(UNITTEST_MODULE, "TestParseSize.test_plain", steer)
    assert len(variants) == 12
    check_variants(UNITTEST_MODULE, "TestParseSize.test_plain", result, variants)
    tree = ast.parse(result)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert {v.name for v in variants} <= {
        n.name for n in cls.body if isinstance(n, ast.FunctionDef)
    }
    assert result.endswith('if __name__ == "__main__":\n    unittest.main()\n')
    changed = {
        c
        for v in variants
        for c in _changed(
            _function(UNITTEST_MODULE, "TestParseSize.test_plain"), _function(result, v.qualname)
        )
    }
    olds = {old for old, _new in changed}
    # the inputs: "512", "7", and the argument after assertRaises' callable; never 512, 7,
    # "seven", the docstring
    assert olds <= {"512", "7", "x1"} and {"512", "7", "x1"} <= olds
    # the steered values first: the changed lines' literal "k" at the end of each input
    assert [v.description for v in variants[:3]] == [
        "line 14: \"512\" -> '512k'",
        "line 16: \"7\" -> '7k'",
        "line 17: \"x1\" -> 'x1k'",
    ]


PARAMETRIZE_MODULE = """import pytest

from pkg.units import parse_size


@pytest.mark.slow
@pytest.mark.parametrize(
    "text, expected",
    [
        ("12", 12),
        pytest.param("999", 999, id="big"),
    ],
)
def test_sizes(text, expected):
    assert parse_size(text) == expected


def test_errors():
    with pytest.raises(ValueError, match="too big"):
        parse_size("5000")
"""


def test_a_parametrize_row_changes_its_input_and_keeps_its_expected() -> None:
    steer = steer_from_change(PARSER_NEW, PARSER_OLD, _changed_lines(PARSER_OLD, PARSER_NEW))
    result, variants = add_variants(PARAMETRIZE_MODULE, "test_sizes", steer, limit=8)
    assert len(variants) == 8
    assert result.startswith(PARAMETRIZE_MODULE)
    check_variants(PARAMETRIZE_MODULE, "test_sizes", result, variants)
    original = _function(PARAMETRIZE_MODULE, "test_sizes")
    for v in variants:
        copied = _function(result, v.qualname)
        assert [ast.dump(d) for d in copied.decorator_list][0] == ast.dump(
            original.decorator_list[0]
        )  # @pytest.mark.slow kept
        [(old, _new)] = _changed(original, copied)
        assert old in ("12", "999")  # never 12, 999 (expected) nor "big" (the id)
    result, variants = add_variants(PARAMETRIZE_MODULE, "test_errors", steer, limit=4)
    [(old, new)] = _changed(
        _function(PARAMETRIZE_MODULE, "test_errors"), _function(result, variants[0].qualname)
    )
    assert (old, new) == ("5000", "5000k")  # not "too big" of match=


ENV_MODULE = """import os

from pkg.conf import load


def test_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("APP_HOME", "/srv/app")
    monkeypatch.setattr(os, "sep", "/")
    config = load(root=str(tmp_path), mode="strict")
    assert config["home"] == "/srv/app"
"""


def test_a_setenv_value_is_an_input_its_name_is_not() -> None:
    conf_old = 'def home(v):\n    return v.rstrip("/")\n'
    conf_new = 'def home(v):\n    return v.rstrip("/").replace("//", "/")\n'
    steer = steer_from_change(conf_new, conf_old, {2})
    assert set(steer.strings[:2]) == {"//", "/"}
    result, variants = add_variants(ENV_MODULE, "test_from_env", steer)
    check_variants(ENV_MODULE, "test_from_env", result, variants)
    original = _function(ENV_MODULE, "test_from_env")
    olds = {_changed(original, _function(result, v.qualname))[0][0] for v in variants}
    assert "/srv/app" in olds and "strict" in olds
    assert not olds & {"APP_HOME", "sep", "home"}
    # "//" (not in the value) at its end; "/" (in it) broken at its last place
    assert variants[0].description == "line 7: \"/srv/app\" -> '/srvXapp'"
    assert "line 7: \"/srv/app\" -> '/srv/app//'" in {v.description for v in variants[:6]}


MACHINE_MODULE = """from pkg.wire import Reader

CHUNK = b"5\\r\\nhello\\r\\n0\\r\\n\\r\\n"


def feed(reader, data):
    return list(reader.feed(data))


class TestReader:
    def test_chunks(self):
        reader = Reader()
        events = []
        for piece in [b"5\\r\\nhel", b"lo\\r\\n", b"0\\r\\n\\r\\n"]:
            events += feed(reader, piece)
        assert events == [b"hello"]
        expected = [b"hello"]
        assert feed(Reader(), CHUNK) == expected
"""

WIRE_OLD = """
def body(self, data):
    size, _, rest = data.partition(b"\\r\\n")
    return rest[: int(size, 16)]
"""

WIRE_NEW = """
def body(self, data):
    size, _, rest = data.partition(b"\\r\\n")
    n = int(size, 16)
    if rest[n : n + 2] != b"\\r\\n":
        raise ValueError("missing CRLF after chunk")
    return rest[:n]
"""


def test_a_state_machine_fed_bytes_gets_the_changed_bytes_first() -> None:
    steer = steer_from_change(WIRE_NEW, WIRE_OLD, _changed_lines(WIRE_OLD, WIRE_NEW))
    assert b"\r\n" in steer.byteses and "ValueError" in steer.exceptions
    result, variants = add_variants(MACHINE_MODULE, "TestReader.test_chunks", steer)
    check_variants(MACHINE_MODULE, "TestReader.test_chunks", result, variants)
    assert result.startswith(MACHINE_MODULE)  # the class is the module's last statement
    original = _function(MACHINE_MODULE, "TestReader.test_chunks")
    inline = _Inline(MACHINE_MODULE, "TestReader")
    changes = [
        _changed(
            inline.visit(copy.deepcopy(original)), inline.visit(_function(result, v.qualname))
        )[0]
        for v in variants
    ]
    # each piece fed gets a value before any piece gets a second; all are bytes; the
    # module's CHUNK the test passes on is an input too
    assert {old for old, _new in changes[:4]} == {
        b"5\r\nhel",
        b"lo\r\n",
        b"0\r\n\r\n",
        b"5\r\nhello\r\n0\r\n\r\n",
    }
    assert all(isinstance(new, bytes) for _old, new in changes[:3])
    assert b"hello" not in {old for old, _new in changes}  # expected sides


def test_odd_input_gives_the_module_back_unchanged() -> None:
    steer = Steer(strings=("#",), numbers=(3,))
    for module, qualname in [
        ("def test_x(:\n", "test_x"),
        (UNITTEST_MODULE, "TestParseSize.test_missing"),
        (UNITTEST_MODULE, "Missing.test_plain"),
        # no literal input: the value setUp gives is made, not written
        (UNITTEST_MODULE.replace('"12"', "str(12)"), "TestParseSize.test_other"),
        ("def test_nothing():\n    assert f() == 'x'\n", "test_nothing"),
    ]:
        assert add_variants(module, qualname, steer) == (module, [])
    assert add_variants(UNITTEST_MODULE, "TestParseSize.test_plain", steer, limit=0)[1] == []


def test_a_non_ascii_line_splices_at_the_right_column() -> None:
    module = 'def test_u():\n    assert f("é€", "ab") == 1\n'
    result, variants = add_variants(module, "test_u", Steer(strings=("#",)), limit=2)
    check_variants(module, "test_u", result, variants)
    assert "    assert f(\"é€\", 'ab#') == 1" in result


def test_names_are_unique_in_the_module() -> None:
    module = "def test_a():\n    f(1)\n\n\ndef test_a__v1():\n    pass\n"
    result, variants = add_variants(module, "test_a", Steer(numbers=(5,)), limit=3)
    assert [v.name for v in variants] == ["test_a__v2", "test_a__v3", "test_a__v4"]
    check_variants(module, "test_a", result, variants)


# ---- the property: every variant compiles and changes one literal ----

_LITERALS = st.one_of(
    st.text(max_size=8),
    st.binary(max_size=8),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
).map(repr)


@st.composite
def _test_modules(draw: st.DrawFn) -> str:
    lines = []
    for i in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["call", "assign", "assert", "env", "loop", "raises"]))
        a, b = draw(_LITERALS), draw(_LITERALS)
        lines.append(
            {
                "call": f"    f({a}, key={b})",
                "assign": f"    x{i} = {a}\n    g(x{i})",
                "assert": f"    assert f({a}) == {b}",
                "env": f"    monkeypatch.setenv({a!r}, {b!r})",
                "loop": f"    for p, expected in [({a}, {b})]:\n        assert f(p) == expected",
                "raises": f"    with pytest.raises(ValueError, match={b!r}):\n        f({a})",
            }[kind]
        )
    header = draw(st.sampled_from(["import pytest\n\n\n", "", "# comment\nX = 1\n"]))
    return header + "def test_gen(monkeypatch):\n" + "\n".join(lines) + "\n"


_STEERS = st.builds(
    Steer,
    strings=st.lists(st.text(max_size=4), max_size=3).map(tuple),
    chars=st.lists(st.characters(), max_size=3).map(tuple),
    byteses=st.lists(st.binary(max_size=3), max_size=2).map(tuple),
    numbers=st.lists(st.integers(-2000, 2000), max_size=3).map(tuple),
    lengths=st.lists(st.integers(0, 10), max_size=2).map(tuple),
    exceptions=st.lists(
        st.sampled_from(["ValueError", "OverflowError", "UnicodeError", "TypeError", "KeyError"]),
        max_size=2,
    ).map(tuple),
    none=st.booleans(),
    containment=st.booleans(),
)


@settings(max_examples=120, deadline=None)
@given(module=_test_modules(), steer=_STEERS, limit=st.integers(1, 12))
def test_every_variant_compiles_and_changes_one_literal(
    module: str, steer: Steer, limit: int
) -> None:
    result, variants = add_variants(module, "test_gen", steer, limit=limit)
    assert result.startswith(module)
    assert len(variants) <= limit
    check_variants(module, "test_gen", result, variants)
