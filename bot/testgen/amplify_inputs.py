"""Input variants of the project's own tests: copies of one test, each with ONE literal
input changed towards what the changed lines test (DSpot-style input amplification).

The tests that run the changed lines often never reach the changed branch: the changed
condition tests a character, a prefix, a number range that no test input holds. The
amplifier (``amplify``) runs the copies exactly like the original tests and compares what
their calls return on the head and on the parent.

- **Steer** (``steer_from_change``): the literals of the changed lines and of the removed
  lines they replace (``steer.literals``: the values the change brought first), strings a
  changed regex matches differently (``steer.contrasts``), the characters a changed ``in``
  tests for, comparison bounds (``n >= 1024`` gives 1023, 1024, 1025; ``len(x) > 3`` asks
  for texts 3 and 4 long), bytes literals, the exceptions a changed ``except`` / ``raise``
  names (``extremes``), ``None`` for a changed ``is None``, containment (``nearby``) and
  case / space transforms.
- **Which literals are inputs**: arguments of calls (not of ``pytest.raises``, an
  ``assert*`` method, ``print``), values of assignments whose name is not an expected
  value, the last argument of ``setenv`` / ``setattr`` / ``setitem``, the input columns of
  ``pytest.mark.parametrize`` rows and of tables a ``for`` loops over (a column named like
  ``expected`` is kept), never the expected side of an ``assert``, a docstring, a dict key
  or a subscript; and the constants and tables the test reads from its module, its class
  or its ``setUp`` (``amplify_refs``).
- **Other entries of the test's own data** (``amplify_keys``): a literal the test queries
  a document of its own with (a key, a path: ``"person.age"``) is first replaced by the
  path of an entry no query reaches, one of a kind of value none reaches first.
- **Variants**: per literal, the values steered by the change first, then generic ones
  (one element longer / shorter, +-1, 0, negated); a number inside a text is varied
  alone (``amplify_pieces``); the literals take turns. A copy is the
  test's own text with the literal's span replaced and the name made unique
  (``test_x__v1``), appended to the module (to its class for a method); the module's other
  text stays byte for byte, and a copy that does not compile is dropped.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.testgen.amplify_adds import Part, read_parts
from bot.testgen.amplify_adds import add_variants as added_variants
from bot.testgen.amplify_drops import drop_variants, read_keys
from bot.testgen.amplify_keys import key_plan, value_kinds
from bot.testgen.amplify_pieces import kind_values, piece_values
from bot.testgen.amplify_refs import Input, references
from bot.testgen.consts import branch_constants, same_role
from bot.testgen.extremes import _MAKERS, _cased, _made, _spaced, _values, caught_types, transforms
from bot.testgen.inputs import literal_strings
from bot.testgen.nearby import _nearby, containment_names
from bot.testgen.raisers import checked_types, expanded, raiser_variants, with_helpers
from bot.testgen.steer import _placings, contrasts, literals
from bot.testgen.text_edits import row_marks, sources
from bot.testgen.typehints import type_hints
from bot.testgen.witness import Witnesses, placed, witnesses

__all__ = ["Steer", "Variant", "add_variants", "steer_from_change"]

MAX_VALUE = 300  # characters of a new literal's source
_EXPECTED = re.compile(r"expect|want|result|output|answer|golden|correct|^(exp|out|res|ref)$", re.I)
_NAME_ARGS = {"setenv", "setattr", "setitem", "delenv", "delattr", "delitem", "patch"}
_NOT_INPUT_CALLS = {"raises", "warns", "skip", "fail", "xfail", "approx", "print", "subTest"}
_CASE = frozenset({"lower", "upper", "casefold", "title", "capitalize", "swapcase"})
_NOT_INPUT_CALLS |= {
    "debug",
    "info",
    "warning",
    "error",
    "exception",
    "skipTest",
    "deprecated_call",
}


@dataclass(frozen=True)
class Variant:
    name: str  # the new test function's name
    qualname: str  # with its class if any
    description: str  # what changed: "line 14: 'a=b' -> 'a= #b'"


@dataclass(frozen=True)
class Steer:
    """What the changed lines test, to change the tests' literals towards."""

    strings: tuple[str, ...] = ()  # literals of the changed (then removed) lines
    chars: tuple[str, ...] = ()  # single characters tested (an ``in``, a code point)
    contrasts: tuple[str, ...] = ()  # strings a changed regex matches differently
    byteses: tuple[bytes, ...] = ()
    numbers: tuple[int, ...] = ()  # literals and comparison bounds (n - 1, n, n + 1)
    floats: tuple[float, ...] = ()
    lengths: tuple[int, ...] = ()  # lengths a changed ``len(x) > n`` sits between
    exceptions: tuple[str, ...] = ()  # named in a changed ``except`` / ``raise``
    none: bool = False  # a changed ``is None``
    containment: bool = False  # a changed line (or a neighbour) tests containment
    transforms: tuple[str, ...] = ()  # case / whitespace methods the changed lines call
    kinds: tuple[str, ...] = ()  # kinds of value they test for (``int(x)``, ``isinstance``)
    tested: tuple[str, ...] = ()  # those an ``isinstance`` / ``type(x) is`` names
    # the words of each collection of words on the changed lines (choices, modes, keys)
    choices: tuple[tuple[str, ...], ...] = ()
    # values a changed literal (regex, format spec) treats differently (``witness``),
    # and the changed statements' other literals (where a text witness goes)
    witness_texts: tuple[str, ...] = ()
    witness_numbers: tuple[int | float, ...] = ()
    witness_context: tuple[str, ...] = ()
    # kinds of value the changed lines test for (``amplify_keys``: bool, none, empty, ...)
    value_kinds: tuple[str, ...] = ()
    raisers: tuple[str, ...] = ()  # raised by a stand-in for a callable (``raisers``)
    marks: tuple[str, ...] = ()  # brackets and separators in their literals (``text_edits``)
    # keys the changed functions read, parameters their conditions test (``amplify_drops``)
    drop_keys: tuple[str | bytes, ...] = ()
    drop_params: tuple[str, ...] = ()
    drop_first: tuple[str | bytes, ...] = ()  # those the changed conditions steer to
    adds: tuple[Part, ...] = ()  # parts they read that a test may lack (``amplify_adds``)
    # the constants the branches holding the changed lines test for, and the literals
    # that carry them (``consts``); the values of the module's constants named alike
    consts: tuple[str | int | bytes, ...] = ()
    const_peers: tuple[str | int | bytes, ...] = ()


def _removed_lines(parent: list[str], head: list[str], changed: set[int]) -> list[int]:
    """The parent's line numbers that the changed head lines replace (or that were
    deleted next to them)."""
    out: list[int] = []
    matcher = difflib.SequenceMatcher(None, parent, head, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        span = set(range(j1 + 1, j2 + 1)) if j2 > j1 else {j1, j1 + 1}
        if span & changed:
            out += range(i1 + 1, i2 + 1)
    return out


def _rows(rows: list[str], lines: list[int]) -> list[str]:
    return [rows[n - 1] for n in lines if 0 < n <= len(rows)]


def _byte_literals(rows: list[str]) -> list[bytes]:
    return [v for v in literal_strings(rows) if isinstance(v, bytes) and 0 < len(v) <= 20]


@dataclass
class _Conditions:
    numbers: list[int]
    floats: list[float]
    lengths: list[int]
    chars: list[str]
    none: bool = False


def _conditions(source: str, lines: list[int], into: _Conditions) -> None:
    """Comparison bounds, ``len`` bounds, the characters of a string an ``in`` tests
    against and ``is None`` on ``lines`` of ``source``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return
    wanted = set(lines)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or node.lineno not in wanted:
            continue
        operands = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
            pair = [(left, right), (right, left)]
            if isinstance(op, ast.Is | ast.IsNot) and any(_const(o) is None for o in (left, right)):
                into.none = True
            if isinstance(op, ast.In | ast.NotIn):
                text = _const(right)
                if isinstance(text, str) and len(text) <= 12:
                    into.chars += list(text)
                char = _const(left)
                if isinstance(char, str) and len(char) == 1:
                    into.chars.append(char)
                continue
            for side, other in pair:
                value = _const(side)
                if type(value) is int and abs(value) < 10**9:
                    bounds = [value - 1, value, value + 1]
                    if _is_len(other):
                        into.lengths += [b for b in bounds if 0 <= b <= 200]
                    into.numbers += bounds
                elif type(value) is float:
                    into.floats += [value, value - 1, value + 1]


def _const(node: ast.expr) -> object:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _const(node.operand)
        if type(inner) in (int, float):
            return -inner  # type: ignore[operator]
    return ...


def _is_len(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"


def steer_from_change(
    head_source: str, parent_source: str | None, changed_lines: set[int]
) -> Steer:
    """What the changed lines of a module (and the parent's lines they replace) test."""
    head = head_source.split("\n")
    changed = sorted(changed_lines)
    parent = parent_source.split("\n") if parent_source is not None else []
    removed = _removed_lines(parent, head, set(changed)) if parent_source is not None else []
    added_rows, removed_rows = _rows(head, changed), _rows(parent, removed)
    strings, numbers, chars = literals(added_rows, removed_rows)
    found = _Conditions([], [], [], [])
    _conditions(head_source, changed, found)
    exceptions = caught_types(head_source, changed)[::-1]  # an added type goes last
    checked = checked_types(head_source, changed) + checked_types(parent_source or "", removed)
    methods = transforms(head_source, changed)
    contains = bool(containment_names(head_source, changed))
    kinds, tested = _kinds(head_source, changed), _tested(head_source, changed)
    choices = _word_groups(head_source, changed)
    found_w = witnesses(head_source, parent_source, changed)
    valued = value_kinds(head_source, changed)
    keys, params, aimed = read_keys(head_source, parent_source, changed, removed)
    branch = branch_constants(head_source, changed)
    if parent_source is not None:
        valued += value_kinds(parent_source, removed)
        kinds += _kinds(parent_source, removed)
        tested += _tested(parent_source, removed)
        choices += _word_groups(parent_source, removed)
        _conditions(parent_source, removed, found)
        exceptions += caught_types(parent_source, removed)[::-1]
        methods += transforms(parent_source, removed)
        contains = contains or bool(containment_names(parent_source, removed))
    return Steer(
        strings=tuple(strings),
        chars=tuple(dict.fromkeys([*found.chars, *chars]))[:12],
        contrasts=tuple(contrasts(added_rows, removed_rows)),
        byteses=tuple(dict.fromkeys(_byte_literals(added_rows) + _byte_literals(removed_rows)))[:8],
        numbers=tuple(dict.fromkeys([*found.numbers, *numbers]))[:12],
        floats=tuple(dict.fromkeys(found.floats))[:6],
        lengths=tuple(dict.fromkeys(found.lengths))[:6],
        exceptions=tuple(dict.fromkeys(e for e in exceptions if e in _MAKERS)),
        none=found.none,
        containment=contains,
        transforms=tuple(dict.fromkeys(methods)),
        kinds=tuple(dict.fromkeys(kinds)),
        tested=tuple(dict.fromkeys(tested)),
        choices=tuple(dict.fromkeys(choices))[:8],
        witness_texts=found_w.texts,
        witness_numbers=found_w.numbers,
        witness_context=found_w.context,
        value_kinds=tuple(dict.fromkeys(valued)),
        raisers=tuple(expanded([*exceptions, *checked])),
        marks=row_marks(added_rows + removed_rows),
        drop_keys=keys,
        drop_params=params,
        drop_first=aimed,
        adds=read_parts(head_source, parent_source, changed, removed),
        consts=tuple(branch.ordered()[:8]),
        const_peers=tuple(sorted(branch.peers, key=repr)),
    )


_KINDS = ("float", "int", "str", "numeric")


def _tested(source: str, lines: list[int]) -> list[str]:
    """The kinds an ``isinstance(x, float)`` or ``type(x) is int`` on ``lines`` names."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    wanted, out = set(lines), []
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) not in wanted:
            continue
        types: ast.expr | None = None
        if isinstance(node, ast.Call) and _callee(node) == "isinstance" and len(node.args) == 2:
            types = node.args[1]
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            if _callee(node.left) == "type" and isinstance(node.ops[0], ast.Is | ast.Eq):
                types = node.comparators[0]
        names = types.elts if isinstance(types, ast.Tuple) else [types] if types else []
        out += [n.id for n in names if isinstance(n, ast.Name) and n.id in _KINDS]
    return out


def _kinds(source: str, lines: list[int]) -> list[str]:
    """The kinds of number or text the changed lines test a value for (an
    ``isinstance``, an ``int()`` / ``float()`` conversion), in the order written."""
    if not lines:
        return []
    found = type_hints(source, lines).kinds.values()
    return [k for ks in found for k in ks if k in _KINDS]


# ---- the values a literal is changed to (as Python source) ----


def _placed_text(value: str, pieces: list[str]) -> tuple[list[str], list[str]]:
    """``value`` with each piece it lacks at its end, and each piece it holds broken
    (first); then the pieces at its start, inside it, in its place, the other breaks."""
    first: list[str] = []
    later: list[str] = []
    fresh = [p for p in dict.fromkeys(pieces) if p and p not in value]
    for piece in dict.fromkeys(pieces):
        if piece and piece in value:
            broken = _broken(value, piece)
            first += broken[:1]
            later += broken[1:]
        elif piece:
            first.append(value + piece)
    middle = len(value) // 2
    rest = [p + value for p in fresh] + [value[:middle] + p + value[middle:] for p in fresh]
    return first, rest + later + fresh


def _broken(value: str, piece: str) -> list[str]:
    """``value`` with one occurrence of ``piece`` made other characters of its length,
    the last occurrence first, then the first, then the others: a change that now
    requires the piece (a terminator checked, not skipped) shows where it is missing."""
    at = [m.start() for m in re.finditer(re.escape(piece), value)][:8]
    other = "".join("Y" if c == "X" else "X" for c in piece)
    order = list(dict.fromkeys([at[-1], at[0], *at[1:-1]]))[:4]
    return [value[:i] + other + value[i + len(piece) :] for i in order]


def _at_an_end(source: str, value: str) -> bool:
    placed = ast.literal_eval(source)
    return isinstance(placed, str) and (placed.endswith(value) or placed.startswith(value))


def _resized(value: str, lengths: tuple[int, ...]) -> list[str]:
    pad = value[-1:] or "a"
    return [value[:n] if n <= len(value) else value + pad * (n - len(value)) for n in lengths]


_TOKEN = re.compile(r"[\w.+-]{1,40}")


def _word_groups(source: str, lines: list[int]) -> list[tuple[str, ...]]:
    """The words of each list, tuple, set or dict's keys on ``lines`` made of two or
    more short string literals only (``Choice(["csv", "tsv", "json"])``, ``{"a": 1}``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    wanted = set(lines)
    out: list[tuple[str, ...]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items: list[ast.expr | None] = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = list(node.keys)
        else:
            continue
        span = set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        words = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
        if span & wanted and len(words) == len(items) >= 2 and all(map(_TOKEN.fullmatch, words)):
            out.append(tuple(words))
    return out


def _siblings(value: str, steer: Steer) -> list[str]:
    """A word the changed lines name in a collection of words (a choice, a mode, a key)
    that the test gives: the other words of that collection, the head's first (``"tsv"``
    -> ``"json"`` when ``Choice(["csv", "tsv"])`` became ``Choice(["csv", "tsv",
    "json"])``)."""
    out = [w for group in steer.choices if value in group for w in group if w != value]
    # a word only one side names (a new choice) before those both name
    return sorted(dict.fromkeys(out), key=lambda w: sum(w in g for g in steer.choices))


def _text_values(value: str, steer: Steer) -> list[str]:
    pieces = [*steer.strings, *steer.chars]
    marks = [p for p in pieces if 0 < len(p) <= 2 and not any(c.isalnum() for c in p)]
    first, rest = _placed_text(value, pieces)
    out = [repr(v) for v in _siblings(value, steer)] + [repr(v) for v in first]
    placed = _placings(repr(value), marks)  # after a separator first (``a=b`` -> ``a= #b``)
    out += sorted(placed, key=lambda p: _at_an_end(p, value))
    out += [repr(v) for v in rest]
    out += [repr(c) for c in steer.contrasts] + [repr(value + c) for c in steer.contrasts]
    out += [repr(v) for v in _resized(value, steer.lengths)]
    return out


def _bytes_values(value: bytes, steer: Steer) -> list[str]:
    pieces = list(steer.byteses)
    for text in (*steer.strings, *steer.chars, *steer.contrasts):
        try:
            pieces.append(text.encode("latin-1"))
        except UnicodeEncodeError:
            continue
    text = value.decode("latin-1")
    first, rest = _placed_text(text, [p.decode("latin-1") for p in dict.fromkeys(pieces)])
    out = first + rest + _resized(text, steer.lengths)
    return [repr(v.encode("latin-1")) for v in out]


def _number_values(value: int | float, steer: Steer) -> list[str]:
    kinds = [repr(v) for v in kind_values(value, steer.kinds)]
    if isinstance(value, int):
        return kinds + [repr(n) for n in steer.numbers]
    return kinds + [repr(float(n)) for n in (*steer.floats, *steer.numbers)]


def _pieces(value: str | bytes, steer: Steer) -> tuple[list[str], list[str]]:
    """Sources of ``value`` with one number inside it varied: steered (a number of a
    kind a changed type check names, the changed lines' numbers), generic."""
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    steered, generic = piece_values(text, steer.tested, steer.numbers)

    def source(texts: list[str]) -> list[str]:
        if isinstance(value, bytes):
            return [repr(t.encode("latin-1")) for t in texts]
        return [repr(t) for t in texts]

    return source(steered), source(generic)


def _alternate(first: list[str], second: list[str]) -> list[str]:
    """One of ``first``, one of ``second``, and so on."""
    out: list[str] = []
    for a, b in itertools.zip_longest(first, second):
        out += [x for x in (a, b) if x is not None]
    return out


def _steered(source: str, value: object, steer: Steer) -> list[str]:
    """Sources of the values steered by the change, for a literal ``value``: a number
    inside a text made the kind a changed ``isinstance`` names first, then the numbers
    inside it varied towards the change alternate with the text's other values (these
    first when the text is one number or holds a text the changed lines test)."""
    out: list[str] = []
    if isinstance(value, str | bytes):
        whole = _text_values(value, steer) if isinstance(value, str) else []
        whole += _bytes_values(value, steer) if isinstance(value, bytes) else []
        if steer.containment:
            whole += _nearby(source)
        out += _pieces(value, Steer(tested=steer.tested))[0]
        inside = _pieces(value, steer)[0]
        # a text that holds its numbers among other text (a body, markup): its pieces
        # are its inputs and go first; a text that is one number, or that holds what the
        # changed lines test (a terminator to break where it stands): the whole first
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        bare = re.fullmatch(r"\s*[\d.]*\s*", text)
        held = [p.decode("latin-1") for p in steer.byteses] + [*steer.strings, *steer.chars]
        first = bare or any(p and p in text for p in held)
        out += _alternate(whole, inside) if first else _alternate(inside, whole)
        out += [repr(v) for v in kind_values(value, steer.kinds)]
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out += _number_values(value, steer)
    # a constant a changed branch tests, in place of a literal of its type and role:
    # first for a literal that is another constant's value (a type tag), else after
    swapped = [repr(c) for c in steer.consts if c != value and same_role(value, c)]
    out = swapped + out if value in steer.const_peers else out + swapped
    for name in steer.exceptions:
        out += _values(source, make=_MAKERS[name])
    if set(steer.transforms) & _CASE:
        out += _made(source, make=_cased)
    if set(steer.transforms) - _CASE:
        out += _made(source, make=_spaced)
    if steer.none:
        out.append("None")
    return out


def _generic(source: str, value: object) -> list[str]:
    if isinstance(value, str | bytes):
        return _alternate([*_nearby(source), repr(value[:0])], _pieces(value, Steer())[1])
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [repr(v) for v in (value + 1, value - 1, type(value)(0), -value)]
    return []


# ---- which literals of a test are inputs ----


def _literal(node: ast.AST) -> bool:
    value = _const(node) if isinstance(node, ast.expr) else ...
    return type(value) in (str, bytes, int, float)


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _contains_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _expected_ids(func: ast.AST) -> set[int]:
    """The nodes on the expected side of the test's asserts (the operands of an
    ``assert`` comparison without a call when another has one; ``assertEqual``'s second
    argument, or its first when only the second has a call; messages)."""
    sides: list[ast.AST] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assert):
            sides += [node.msg] if node.msg is not None else []
            if isinstance(node.test, ast.Compare):
                operands = [node.test.left, *node.test.comparators]
                actual = [o for o in operands if _contains_call(o)]
                sides += [o for o in operands if o not in actual] if actual else operands
        elif isinstance(node, ast.Call) and _callee(node).startswith("assert"):
            name = _callee(node)
            if "Raises" in name or "Warns" in name:
                sides += node.args[: 2 if "Regex" in name else 1]
            elif len(node.args) >= 2 and [_contains_call(a) for a in node.args[:2]] == [
                False,
                True,
            ]:  # assertEqual(expected, f(x)): the side without a call is the expected one
                sides += [node.args[0], *node.args[2:]]
            else:
                sides += node.args[1:]
            sides += [k.value for k in node.keywords if k.arg == "msg"]
    return {id(n) for side in sides for n in ast.walk(side)}


def _column(path: list[ast.AST], table: ast.AST, target: ast.AST) -> str:
    """The name the loop ``for <target> in <table>`` gives the row item on ``path`` (the
    literal's ancestors, innermost first, up to the table's parent)."""
    if not isinstance(table, ast.List | ast.Tuple | ast.Set) or not isinstance(target, ast.Tuple):
        return ""
    at = next((n for n, p in enumerate(path) if p is table), None)
    if at is None or at < 2:
        return ""
    row, item = path[at - 1], path[at - 2]
    if not isinstance(row, ast.Tuple | ast.List):
        return ""
    i = next((n for n, e in enumerate(row.elts) if e is item), len(target.elts))
    name = target.elts[i] if i < len(target.elts) else None
    return name.id if isinstance(name, ast.Name) else ""


class _Inputs:
    """The input literals of one test function."""

    def __init__(
        self, func: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None = None
    ) -> None:
        self.func = func
        self.owner = owner
        self.parents = {id(c): p for p in ast.walk(func) for c in ast.iter_child_nodes(p)}
        self.expected = _expected_ids(func)
        self.loops = [n for n in ast.walk(func) if isinstance(n, ast.For | ast.AsyncFor)]
        self.used: dict[tuple[str, ...], bool] = {}
        self.columns: dict[str, bool] = {}

    def found(self, tree: ast.Module | None = None) -> list[Input]:
        """The test's literal inputs (its parametrize rows first, then its body's in
        the order written), then those it reads from its module or class."""
        own = [Input(n, _const(n)) for n in self._literals()]
        if tree is None:
            return own
        return own + references(tree, self.func, self.owner, self)

    def is_input(self, node: ast.expr) -> bool:
        return self._is_input(node)

    def input_column(self, name: str) -> bool:
        return self._input_column(name)

    def _literals(self) -> list[ast.expr]:
        out: list[ast.expr] = []
        for dec in self.func.decorator_list:
            out += _parametrize_inputs(dec)
        found: list[ast.expr] = []  # the body's, in the order written
        body = self.func.body
        if body and isinstance(body[0], ast.Expr) and isinstance(_const(body[0].value), str):
            body = body[1:]  # the docstring
        for stmt in body:
            for node in ast.walk(stmt):
                parent = self.parents.get(id(node))
                negated = isinstance(parent, ast.UnaryOp) and _literal(parent)
                if isinstance(node, ast.expr) and _literal(node) and not negated:
                    if self._is_input(node):
                        found.append(node)
        return out + sorted(found, key=lambda n: (n.lineno, n.col_offset))

    def _is_input(self, node: ast.expr) -> bool:
        if id(node) in self.expected:
            return False
        path: list[ast.AST] = [node]
        child: ast.AST = node
        while (parent := self.parents.get(id(child))) is not None and parent is not self.func:
            path.append(parent)
            verdict = self._step(parent, child, path)
            if verdict is not None:
                return verdict
            child = parent
        return False

    def _step(self, parent: ast.AST, child: ast.AST, path: list[ast.AST]) -> bool | None:
        """Whether ``child`` (on ``path``) is an input, decided at ``parent``; None: go up."""
        if isinstance(parent, ast.JoinedStr | ast.Assert | ast.Return):
            return False
        if isinstance(parent, ast.Dict) and child in parent.keys:
            return False
        if isinstance(parent, ast.Subscript) and child is parent.slice:
            return False
        if isinstance(parent, ast.Call):
            return self._argument(parent, child)
        if isinstance(parent, ast.For | ast.AsyncFor) and child is parent.iter:
            return self._input_column(_column(path, parent.iter, parent.target))
        if isinstance(parent, ast.Assign | ast.AnnAssign) and child is parent.value:
            targets: list[ast.expr] = (
                parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            )
            return self._assigned(targets, parent.value, path)
        return None

    def _passed_on(self, names: tuple[str, ...]) -> bool:
        """Whether the test reads one of ``names`` other than as an expected value."""
        if names not in self.used:
            loads = [
                n
                for n in ast.walk(self.func)
                if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)
            ]
            self.used[names] = any(id(n) not in self.expected for n in loads)
        return self.used[names]

    def _argument(self, call: ast.Call, child: ast.AST) -> bool:
        name = _callee(call)
        if child is call.func or name in _NOT_INPUT_CALLS:
            return False
        if name.startswith("assert"):
            first = 3 if "Regex" in name else 2
            raises = "Raises" in name or "Warns" in name
            return raises and child in call.args and call.args.index(child) >= first
        if name in _NAME_ARGS:  # setenv(name, value), setattr(target, name, value): the value
            last = call.args[-1] if len(call.args) >= 2 else None
            return child is last and name.startswith("set")
        return not (isinstance(child, ast.keyword) and child.arg in ("msg", "match", "id", "ids"))

    def _assigned(self, targets: list[ast.expr], value: ast.expr, path: list[ast.AST]) -> bool:
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if not names or any(_EXPECTED.search(n) for n in names):
            return False
        if not self._passed_on(tuple(names)):
            return False  # never used, or only compared against
        for loop in self.loops:  # a table the test loops over: its input columns
            if isinstance(loop.iter, ast.Name) and loop.iter.id in names:
                if not self._input_column(_column(path, value, loop.target)):
                    return False
        return True

    def _input_column(self, name: str) -> bool:
        """Whether a loop's column ``name`` reaches an input (a call's argument, a value
        passed on), not only a ``subTest`` message or an expected value."""
        if not name:
            return True
        if _EXPECTED.search(name):
            return False
        if name not in self.columns:
            self.columns[name] = False
            self.columns[name] = any(
                isinstance(n, ast.Name)
                and n.id == name
                and isinstance(n.ctx, ast.Load)
                and self._is_input(n)
                for n in ast.walk(self.func)
            )
        return self.columns[name]


def _parametrize_inputs(dec: ast.expr) -> list[ast.expr]:
    """The literals of a ``pytest.mark.parametrize`` decorator's rows, not those of a
    column named like an expected value."""
    if not (isinstance(dec, ast.Call) and _callee(dec) == "parametrize" and dec.args):
        return []
    names_node = dec.args[0]
    raw = _const(names_node)
    if isinstance(raw, str):
        names = [n.strip() for n in raw.split(",") if n.strip()]
    elif isinstance(names_node, ast.List | ast.Tuple):
        names = [str(_const(e)) for e in names_node.elts]
    else:
        return []
    rows_node = dec.args[1] if len(dec.args) > 1 else None
    rows_node = rows_node or next((k.value for k in dec.keywords if k.arg == "argvalues"), None)
    if not isinstance(rows_node, ast.List | ast.Tuple):
        return []
    out: list[ast.expr] = []
    for row in rows_node.elts:
        if isinstance(row, ast.Call) and _callee(row) == "param":
            items = list(row.args)
        elif len(names) > 1 and isinstance(row, ast.Tuple | ast.List):
            items = list(row.elts)
        else:
            items = [row]
        for name, item in zip(names, items, strict=False):
            if not _EXPECTED.search(name):
                out += _plain_literals(item)
    return out


def _plain_literals(node: ast.expr) -> list[ast.expr]:
    """The literals in a data value (not dict keys, not a negated number's inner part)."""
    if _literal(node):
        return [node]
    out: list[ast.expr] = []
    if isinstance(node, ast.Dict):
        for value in node.values:
            out += _plain_literals(value)
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        for e in node.elts:
            out += _plain_literals(e)
    elif isinstance(node, ast.Call):
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            out += _plain_literals(arg)
    return out


# ---- the copies ----


def _find(
    tree: ast.Module, qualname: str
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None] | None:
    body: list[ast.stmt] = tree.body
    owner: ast.ClassDef | None = None
    parts = qualname.split(".")
    for part in parts[:-1]:
        owner = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if owner is None:
            return None
        body = owner.body
    func = [n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    found = [n for n in func if n.name == parts[-1]]
    return (found[-1], owner) if found else None  # the last def of a name is the one run


class _Text:
    """A module's text, addressed as the ``ast`` addresses it (lines, UTF-8 columns)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.starts = [0]
        for m in re.finditer("\n", source):
            self.starts.append(m.end())

    def offset(self, line: int, col: int) -> int:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.source)
        return start + len(self.source[start:end].encode("utf-8")[:col].decode("utf-8", "replace"))

    def span(self, node: ast.expr, start: int = 0) -> tuple[int, int]:
        """Where ``node`` stands, from ``start``."""
        a = self.offset(node.lineno, node.col_offset)
        b = self.offset(node.end_lineno or node.lineno, node.end_col_offset or 0)
        return a - start, b - start

    def line_end(self, line: int) -> int:
        return self.starts[line] if line < len(self.starts) else len(self.source)


def _schedule(
    nodes: list[Input], values: Callable[[int], list[str]], cap: int
) -> list[tuple[int, str]]:
    """(literal index, value) pairs: each literal's first value, then each one's second...
    (``values`` gives a literal's, made only when its turn comes: a table of thousands)."""
    made: dict[int, list[str]] = {}
    out: list[tuple[int, str]] = []
    for k in itertools.count():
        more = False
        for i in range(len(nodes)):
            if i not in made:
                made[i] = values(i)
            if k < len(made[i]):
                out.append((i, made[i][k]))
                more = True
                if len(out) >= cap:
                    return out
        if not more:
            return out
    return out


def _fits(source: str, own: object) -> bool:
    """A value source that is short, evaluates back (no ``inf``, no ``nan``) and is not
    the literal's own value (``0.0`` for ``-0.0``)."""
    if len(source) > MAX_VALUE:
        return False
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return False
    return type(value) is not type(own) or value != own


class _Values:
    """A literal's steered values and its generic ones (Python source, deduplicated,
    never its own value), made once."""

    def __init__(self, inputs: list[Input], steer: Steer) -> None:
        self.inputs = inputs
        self.steer = steer
        self.made: dict[int, tuple[list[str], list[str]]] = {}

    def both(self, i: int) -> tuple[list[str], list[str]]:
        if i not in self.made:
            value = self.inputs[i].value
            own = repr(value)
            first = [s for s in dict.fromkeys(_steered(own, value, self.steer)) if _fits(s, value)]
            rest = [s for s in dict.fromkeys(_generic(own, value)) if s not in first]
            self.made[i] = first, [s for s in rest if _fits(s, value)]
        return self.made[i]

    def steered(self, i: int) -> list[str]:
        return self.both(i)[0]

    def generic(self, i: int) -> list[str]:
        return self.both(i)[1]


def add_variants(
    module_source: str, qualname: str, steer: Steer, limit: int = 12
) -> tuple[str, list[Variant]]:
    """The test module's source with up to ``limit`` copies of the test ``qualname``
    appended (inside its class for a method), each with one literal input changed; the
    module unchanged and no variant when the test is not found or has no literal input."""
    try:
        tree = ast.parse(module_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return module_source, []
    found = _find(tree, qualname)
    if found is None or limit <= 0:
        return module_source, []
    func, owner = found
    inputs = _Inputs(func, owner).found(tree)
    raising = raiser_variants(tree, func, steer.raisers)  # a callable that raises, first
    # a part the changed code reads left out (a key, a keyword, a variable): next
    dropped = drop_variants(module_source, func, steer.drop_keys, steer.drop_params)
    added = added_variants(module_source, func, steer.adds)  # or one it reads added
    if not inputs and not raising and not dropped and not added:
        return module_source, []
    values = _Values(inputs, steer)
    cap = limit * 4  # room for the copies that do not compile
    # a word swapped for another the changed lines name beside it goes first
    swaps = [
        (i, repr(word))
        for i, found_input in enumerate(inputs)
        if isinstance(found_input.value, str)
        for word in _siblings(found_input.value, steer)
    ]
    held = Witnesses(steer.witness_texts, steer.witness_numbers, steer.witness_context)
    # a query of the test's own data asked of another entry (``amplify_keys``) first
    # (at most half the copies: the others are the steered literals')
    keyed = key_plan(tree, func, owner, inputs, steer.strings, steer.value_kinds)
    keyed = keyed[: max(1, limit // 2)]
    plan = keyed + _witnessed(inputs, held, cap) + swaps
    # a group emptied, a list cut (``text_edits``): before the steered values when the
    # changed lines name a bracket or separator, else after them
    edited = _schedule(inputs, lambda i: sources(inputs[i].value, steer.marks), cap)
    steered = _schedule(inputs, values.steered, cap)
    early = edited[: max(1, limit // 3)] if steer.marks else []
    plan += early + steered + edited + _schedule(inputs, values.generic, cap)
    first = [(len(inputs) + k, name) for k, (_i, name) in enumerate(raising)][: limit // 3 + 1]
    at = len(inputs) + len(raising)
    drops = [(at + k, new) for k, (_i, new) in enumerate(dropped)][: limit // 3 + 1]
    told = {at + k: f"{i.value!r} left out" for k, (i, _new) in enumerate(dropped)}
    at += len(dropped)
    adds = [(at + k, new) for k, (_i, new) in enumerate(added)][: limit // 3 + 1]
    told |= {at + k: f"{i.value} added" for k, (i, _new) in enumerate(added)}
    turns = itertools.zip_longest(adds, drops)  # an added part, a part left out, ...
    first += [p for turn in turns for p in turn if p is not None]
    plan = first + list(dict.fromkeys(plan))
    taken = _names(owner.body if owner is not None else tree.body)
    every = [*inputs, *(i for i, _name in raising), *(i for i, _new in dropped)]
    every += [i for i, _new in added]
    text, variants = _write(module_source, (func, owner), every, plan, (taken, limit), told)
    return with_helpers(text), variants


def _witnessed(inputs: list[Input], found: Witnesses, cap: int) -> list[tuple[int, str]]:
    """(literal index, value) pairs holding a witness of a changed literal (``witness``),
    first for the literals that hold another literal of the changed statement (where
    the changed regex looks), the literals taking turns."""
    if not found:
        return []
    near = [any(c in str(i.value) for c in found.context) for i in inputs]
    order = sorted(range(len(inputs)), key=lambda i: not near[i])
    made = {
        i: [repr(v) for v in placed(inputs[i].value, found) if _fits(repr(v), inputs[i].value)]
        for i in order
    }
    turns = itertools.zip_longest(*[[(i, v) for v in made[i]] for i in order])
    return [p for turn in turns for p in turn if p is not None][:cap]


def _names(body: list[ast.stmt]) -> set[str]:
    out: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


def _unique(name: str, taken: set[str], mark: str = "v") -> str:
    """A name for a copy of the test ``name`` that no other test has (``name__v1``)."""
    k = 1
    while f"{name}__{mark}{k}" in taken:
        k += 1
    taken.add(f"{name}__{mark}{k}")
    return f"{name}__{mark}{k}"


def _compiles(source: str) -> bool:
    try:
        compile(source, "<variants>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _with_row(text: _Text, where: Input, table: str, value: str) -> str:
    """What stands in a copy for ``where``: the value's source, or for a table's row
    the table with a copy of that row added, its literal changed to ``value``."""
    if where.row is None or where.literal is None:
        return value
    ra, rb = text.span(where.row)
    la, lb = text.span(where.literal)
    row = text.source[ra:la] + value + text.source[lb:rb]
    return f"[*{table}, {row}]"


def _write(
    source: str,
    where: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None],
    inputs: list[Input],
    plan: list[tuple[int, str]],
    names: tuple[set[str], int],
    told: dict[int, str] | None = None,
) -> tuple[str, list[Variant]]:
    """The copies spliced from the test's own text: the literal's span replaced (a
    constant's name by the literal, a table's by the table with one row more), the name
    made unique; each appended (to its class for a method) if the module compiles;
    ``told`` describes an input's change in its own words (a part left out)."""
    func, owner = where
    taken, limit = names
    text = _Text(source)
    first = min([d.lineno for d in func.decorator_list] + [func.lineno])
    start, end = text.starts[first - 1], text.line_end(func.end_lineno or func.lineno)
    segment = source[start:end] if source[start:end].endswith("\n") else source[start:end] + "\n"
    at = text.line_end(owner.end_lineno or owner.lineno) if owner is not None else len(source)
    head, tail = source[:at], source[at:]
    head += "" if head.endswith("\n") or not head else "\n"
    gap = "\n" if owner is not None else "\n\n"
    at_def = text.offset(func.lineno, func.col_offset) - start
    named = re.compile(r"def\s+(" + re.escape(func.name) + r")\b").search(segment, at_def)
    if named is None:
        return source, []
    prefix = owner.name + "." if owner is not None else ""
    variants: list[Variant] = []
    for i, value in plan:
        if len(variants) >= limit:
            break
        node = inputs[i].node
        a, b = text.span(node, start)
        new = f"({value})" if value.startswith("-") and not isinstance(node, ast.UnaryOp) else value
        new = _with_row(text, inputs[i], segment[a:b], new)
        name = _unique(func.name, taken)
        edits = sorted([(a, b, new), (named.start(1), named.end(1), name)], reverse=True)
        copy = segment
        for x, y, piece in edits:
            copy = copy[:x] + piece + copy[y:]
        if not _compiles("class _Copy:\n" + copy if owner is not None else copy):
            continue  # the copy alone: the module around it compiled already
        head += gap + copy
        old = re.sub(r"\s*\n\s*", " ", segment[a:b])  # one line
        short = old if len(old) <= 60 else old[:57] + "..."
        shown = re.sub(r"\s*\n\s*", " ", new if inputs[i].row is not None else value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        said = (told or {}).get(i) or f"{short} -> {shown}"
        variants.append(Variant(name, prefix + name, f"line {node.lineno}: {said}"))
    result = head + tail
    return (result, variants) if _compiles(result) else (source, [])
