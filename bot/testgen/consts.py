"""Inputs that carry the constants the changed code branches on.

Many fixes sit in a branch for one particular value: an option code, a key, a flag, a
type tag (``if ftype == TYPE_OPT_CUSTOM_STR: <changed>``), and no input of the project's
tests holds that value, so no input reaches the changed lines. The constants are read
from the conditions of the branches that hold the changed lines (innermost first, within
their function) and from the changed lines' own comparisons and lookups:

- a literal or a name of the module (``TYPE_X = "x"``, ``Cls.LIMIT = 3``) compared with
  ``==`` / ``!=`` / ``in`` / ``is`` (also each item of a tuple, set or list compared
  with ``in``), a ``match`` case's value, the key of a lookup (``d[K]``, ``d.get(K)``),
  and the keys of a module-level dict (items of a set, tuple, list) a condition tests
  membership in (``if code in _TABLE``);
- **carriers**: a named constant is often reached through another value that maps to it
  (``Option(2988, "custom_str_safe", TYPE_OPT_CUSTOM_STR)``, ``{3: TYPE_X}``): the
  integer and string literals beside the name, in the same call, tuple or dict entry,
  elsewhere in the module.

``constant_inputs`` changes ONE literal of a test input at a time to such a constant, a
literal of the same type in the same role (an integer for an integer: a code in a list
of ``(code, value)`` pairs; a word-like string for a string: a type tag in a schema; bytes
for bytes), at any depth of the argument (``data=[(1, b"..."), ...]`` -> ``data=[(2988,
b"..."), ...]``), the rest of the input's text kept byte for byte.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeGuard

from bot.testgen.inputs import Candidate

__all__ = [
    "Consts",
    "branch_constants",
    "constant_inputs",
    "named_literals",
    "same_role",
    "swap_constants",
]

MAX_CONST_INPUTS = 48  # inputs made from the branch constants, per function
_VALUES = 8  # constants kept per change
_PER_ARG = 3  # places one constant goes into, per argument
_WORD = re.compile(r"[\w.+:/-]{1,40}")

Value = str | int | bytes


@dataclass
class Consts:
    """What the changed branches compare with: the values, then the carriers."""

    values: list[Value] = field(default_factory=list)
    carriers: list[Value] = field(default_factory=list)
    # the values of the module's other constants named alike (``TYPE_BYTES = "bytes"``
    # beside ``TYPE_OPT_CUSTOM_STR``): a test's literal equal to one is in the role
    peers: frozenset[Value] = frozenset()

    def ordered(self) -> list[Value]:
        """The values and the carriers taking turns (values first)."""
        out: list[Value] = []
        for i in range(max(len(self.values), len(self.carriers))):
            out += self.values[i : i + 1] + self.carriers[i : i + 1]
        return list(dict.fromkeys(out))


def _plain(value: object) -> TypeGuard[Value]:
    if isinstance(value, bool) or not isinstance(value, str | int | bytes):
        return False
    if isinstance(value, int):
        return abs(value) < 10**12
    return 0 < len(value) <= 60


def _named(tree: ast.Module) -> dict[str, Value]:
    """Module-level ``NAME = literal`` and class-level ``Cls.NAME = literal``."""
    out: dict[str, Value] = {}

    def read(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef) and not prefix:
                read(node.body, node.name + ".")
                continue
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            if not isinstance(value, ast.Constant) or not _plain(value.value):
                continue
            for t in targets:
                if isinstance(t, ast.Name):
                    out[prefix + t.id] = value.value
                    if prefix:  # read inside the class as a bare name or self.NAME
                        out.setdefault("self." + t.id, value.value)
                        out.setdefault("cls." + t.id, value.value)

    read(tree.body, "")
    return out


def named_literals(
    source: str, path: str, lines: list[int], read: Callable[[str], str | None]
) -> list[Value]:
    """The values of the constants the changed ``lines`` name (``if
    value.startswith(LIST_ITEM_MARKER)``): a module-level ``NAME = literal`` of this module,
    or of the project's module the name is imported from (``from .constants import
    LIST_ITEM_MARKER``; ``read`` gives a project file's text, None when absent). What
    ``steering_literals`` gives for a literal written in the line itself."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    wanted = set(lines)
    names = [
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.lineno in wanted
    ]
    local = _named(tree)
    out = [local[n] for n in dict.fromkeys(names) if n in local]
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            if (alias.asname or alias.name) not in names or alias.name in local:
                continue
            for where in _module_files(path, node.module or "", node.level):
                text = read(where)
                if text is None:
                    continue
                try:
                    value = _named(ast.parse(text)).get(alias.name)
                except (SyntaxError, ValueError):
                    value = None
                if value is not None and value not in out:
                    out.append(value)
                break
    return out


def _module_files(path: str, module: str, level: int) -> list[str]:
    """Where the module an import names may be, for the file at ``path`` (relative: from
    its package; absolute: under each folder above it, ``src/`` layouts too)."""
    parts = module.split(".") if module else []
    if level:
        base = posixpath.dirname(path)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        roots = [base]
    else:
        folders = posixpath.dirname(path).split("/") if "/" in path else []
        roots = ["/".join(folders[:i]) for i in range(len(folders), -1, -1)]
    stem = "/".join(parts)
    out = []
    for root in roots:
        joined = posixpath.join(root, stem) if stem else root
        out += [f"{joined}.py", posixpath.join(joined, "__init__.py")]
    return [o.lstrip("/") for o in out]


def _tables(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = {...}`` / ``[...]`` / ``(...)`` / ``{...}`` (set)."""
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(
            node.value, ast.Dict | ast.Set | ast.List | ast.Tuple
        ):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node.value
    return out


def _ref(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return ""


class _Reader:
    def __init__(self, tree: ast.Module) -> None:
        self.named = _named(tree)
        self.tables = _tables(tree)
        self.values: list[Value] = []
        self.refs: list[str] = []  # the names the values were read through

    def value(self, node: ast.expr | None) -> None:
        if node is None:
            return
        if isinstance(node, ast.Constant) and _plain(node.value):
            self.values.append(node.value)
        elif _ref(node) in self.named:
            self.values.append(self.named[_ref(node)])
            self.refs.append(_ref(node).rsplit(".", 1)[-1])

    def items(self, node: ast.expr) -> None:
        """``x in (A, B)``, ``x in TABLE``: each item (each key)."""
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            for e in node.elts[:_VALUES]:
                self.value(e)
        elif isinstance(node, ast.Name) and node.id in self.tables:
            table = self.tables[node.id]
            keys = table.keys if isinstance(table, ast.Dict) else getattr(table, "elts", [])
            for k in list(keys)[:_VALUES]:
                self.value(k)

    def condition(self, test: ast.AST) -> None:
        for node in ast.walk(test):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
                    if isinstance(op, ast.In | ast.NotIn):
                        if not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
                            self.items(right)  # a substring test is the steer's
                            self.value(left)
                    elif isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
                        self.value(left)
                        self.value(right)
            elif isinstance(node, ast.Subscript):
                key = node.slice  # a key, not an index: ``x[0]`` is not a constant's
                if not (isinstance(key, ast.Constant) and isinstance(key.value, int)):
                    self.value(key)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("get", "pop", "setdefault")
                and node.args
            ):
                self.value(node.args[0])


def _enclosing(tree: ast.Module, lines: set[int]) -> list[ast.AST]:
    """The conditions of the branches holding ``lines`` (innermost first), within the
    function that holds them, and the ``match`` cases' patterns."""
    found: list[tuple[int, ast.AST]] = []

    def holds(body: list[ast.stmt]) -> bool:
        return any(s.lineno <= n <= (s.end_lineno or s.lineno) for s in body for n in lines)

    def visit(node: ast.AST, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If | ast.While) and (holds(child.body) or holds(child.orelse)):
                found.append((depth, child.test))
            elif isinstance(child, ast.match_case) and holds(child.body):
                found.append((depth, child.pattern))
            elif isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                if not holds([child]):
                    continue
                if not isinstance(child, ast.ClassDef):
                    found.clear()  # conditions outside the function are not its
            visit(child, depth + 1)

    visit(tree, 0)
    return [test for _d, test in sorted(found, key=lambda f: -f[0])][:4]


def _carriers(tree: ast.Module, refs: list[str], values: list[Value]) -> list[Value]:
    """The literals beside a named constant (or an equal literal string) elsewhere in
    the module: in one call's arguments, one tuple or list, one dict entry."""
    wanted = set(refs)
    strings = {v for v in values if isinstance(v, str) and len(v) >= 3}
    ints: list[Value] = []
    others: list[Value] = []

    def carries(e: ast.expr | None) -> bool:
        if e is None:
            return False
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return e.value in strings
        return (_ref(e).rsplit(".", 1)[-1] or "\0") in wanted

    for node in ast.walk(tree):
        groups: list[list[ast.expr | None]] = []
        if isinstance(node, ast.Call):
            groups.append([*node.args, *(k.value for k in node.keywords)])
        elif isinstance(node, ast.Tuple | ast.List):
            groups.append(list(node.elts))
        elif isinstance(node, ast.Dict):
            groups += [[k, v] for k, v in zip(node.keys, node.values, strict=True)]
        for group in groups:
            if not any(carries(e) for e in group):
                continue
            for e in group:
                if isinstance(e, ast.Constant) and _plain(e.value) and not carries(e):
                    (ints if isinstance(e.value, int) else others).append(e.value)
    return list(dict.fromkeys([*ints, *others]))[:_VALUES]


def branch_constants(source: str, lines: list[int]) -> Consts:
    """The constants the branches holding the changed ``lines`` of ``source`` (and the
    changed lines' own comparisons and lookups) test for, resolved to their values, and
    the literals that carry a named one elsewhere in the module."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Consts()
    if not lines:
        return Consts()
    reader = _Reader(tree)
    wanted = set(lines)
    for test in _enclosing(tree, wanted):
        if isinstance(test, ast.pattern):
            for p in ast.walk(test):
                if isinstance(p, ast.MatchValue):
                    reader.value(p.value)
                elif isinstance(p, ast.MatchSingleton):
                    continue
        else:
            reader.condition(test)
    for node in ast.walk(tree):  # the changed lines' own tests
        if getattr(node, "lineno", 0) in wanted and isinstance(node, ast.stmt):
            for part in _own_tests(node):
                reader.condition(part)
    # 0, 1 and -1 are every comparison's: the generic values try them already
    values = [v for v in dict.fromkeys(reader.values) if not _generic(v)][:_VALUES]
    return Consts(values, _carriers(tree, reader.refs, values), _peers(reader))


def _generic(value: Value) -> bool:
    return isinstance(value, int) and abs(value) <= 1


def _peers(reader: _Reader) -> frozenset[Value]:
    """The values of the constants whose names start like a name a value was read
    through (up to its first ``_``: ``TYPE_``), but for those values themselves."""
    stems = {r.split("_", 1)[0] + "_" for r in reader.refs if "_" in r.strip("_")}
    found = {
        v
        for name, v in reader.named.items()
        if any(name.rsplit(".", 1)[-1].startswith(s) for s in stems)
    }
    return frozenset(found - set(reader.values))


def _own_tests(node: ast.stmt) -> list[ast.AST]:
    """The expressions a changed statement tests or looks up with (not its body)."""
    if isinstance(node, ast.If | ast.While):
        return [node.test]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return []
    if isinstance(node, ast.For | ast.AsyncFor | ast.With | ast.AsyncWith | ast.Try):
        return []
    return [node]


# ---- inputs ----


def _offsets(text: str) -> list[int]:
    starts, at = [0], 0
    for row in text.split("\n"):
        at += len(row) + 1
        starts.append(at)
    return starts


def swap_constants(
    source: str | None, value: Value, peers: frozenset[Value] = frozenset(), per_arg: int = _PER_ARG
) -> list[str]:
    """``source`` (an expression) with one literal of ``value``'s type and role replaced
    by it: an integer for an integer, a word-like string for a word-like string, bytes
    for bytes; a literal equal to one of ``peers`` (another constant named alike) first,
    then in the order written, at most ``per_arg``; the rest of the text kept."""
    if not source:
        return []
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    fitting: list[ast.Constant] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or node.value == value:
            continue
        fits = same_role(node.value, value)
        if fits and node.end_lineno is not None and node.end_col_offset is not None:
            fitting.append(node)
    fitting.sort(key=lambda n: (n.value not in peers, n.lineno, n.col_offset))
    return [_spliced(source, node, repr(value)) for node in fitting[:per_arg]]


def same_role(literal: object, value: Value) -> bool:
    """Whether a test's ``literal`` can stand where ``value`` would: an integer for an
    integer (not a bool), a word-like string for a word-like string, bytes for bytes."""
    if isinstance(value, bool) or isinstance(literal, bool):
        return False
    if isinstance(value, int):
        return type(literal) is int
    if isinstance(value, str):
        words = [_WORD.fullmatch(x) for x in (value, literal) if isinstance(x, str)]
        return len(words) == 2 and all(words)
    return isinstance(literal, bytes)


def _spliced(source: str, node: ast.expr, text: str) -> str:
    """``source`` with ``node``'s span (its offsets count UTF-8 bytes) replaced."""
    rows = source.split("\n")
    starts = _offsets(source)

    def at(line: int, col: int) -> int:
        return starts[line - 1] + len(rows[line - 1].encode()[:col].decode(errors="ignore"))

    a = at(node.lineno, node.col_offset)
    b = at(node.end_lineno or node.lineno, node.end_col_offset or 0)
    return source[:a] + text + source[b:]


def _each(c: Candidate, value: Value, peers: frozenset[Value]) -> list[Candidate]:
    """``c`` with one literal of one argument (or of its receiver's constructor's)
    swapped for ``value``: each argument's first place, then each one's second."""
    origin = f"{c.origin} (a constant the changed branch tests: {value!r})"
    places: list[list[Candidate]] = []

    def swap(arg: str | None) -> list[str]:
        return swap_constants(arg, value, peers)

    for i, arg in enumerate(c.args):
        places.append(
            [
                replace(c, args=(*c.args[:i], new, *c.args[i + 1 :]), origin=origin)
                for new in swap(arg)
            ]
        )
    for j, (key, arg) in enumerate(c.kwargs):
        kw = [(*c.kwargs[:j], (key, new), *c.kwargs[j + 1 :]) for new in swap(arg)]
        places.append([replace(c, kwargs=k, origin=origin) for k in kw])
    if c.ctor is not None:
        args, kws = c.ctor
        for i, arg in enumerate(args):
            ctors = [((*args[:i], new, *args[i + 1 :]), kws) for new in swap(arg)]
            places.append([replace(c, ctor=k, origin=origin) for k in ctors])
        for j, (key, arg) in enumerate(kws):
            ctors = [(args, (*kws[:j], (key, new), *kws[j + 1 :])) for new in swap(arg)]
            places.append([replace(c, ctor=k, origin=origin) for k in ctors])
    return _turns(places)


def _plain_args(c: Candidate) -> bool:
    """Every argument (and the constructor's) is a literal."""
    ctor = c.ctor or ((), ())
    sources = [*c.args, *(v for _k, v in c.kwargs), *ctor[0], *(v for _k, v in ctor[1])]
    for source in sources:
        try:
            ast.literal_eval(source or "None")
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return False
    return True


def _turns(groups: list[list[Candidate]]) -> list[Candidate]:
    """The first of each group, then the second of each, and so on."""
    out: list[Candidate] = []
    for i in range(max((len(g) for g in groups), default=0)):
        out += [g[i] for g in groups if i < len(g)]
    return out


def constant_inputs(candidates: list[Candidate], source: str, lines: list[int]) -> list[Candidate]:
    """The tests' inputs with one literal changed to a constant the changed branches
    test for (or one that carries it); the constants take turns, at most
    ``MAX_CONST_INPUTS``."""
    consts = branch_constants(source, lines)
    ordered = consts.ordered()
    if not ordered:
        return []
    # those the side-runner can show as plain data first (it drops a value it cannot)
    first = sorted(candidates, key=lambda c: not _plain_args(c))[:12]
    # each input's first place with every constant, then the next input's; then the
    # second places: a constant in an input that fails early still has others
    rounds: list[list[Candidate]] = []
    for c in first:
        made = [_each(c, v, consts.peers) for v in ordered]
        rounds.append(_turns(made))
    seen = set(candidates)
    out = [m for m in _turns(rounds) if not (m in seen or seen.add(m))]  # type: ignore[func-returns-value]
    return out[:MAX_CONST_INPUTS]
