"""Input variants of a test that change a whole container, not one literal: the ORDER
of its items, and a string item of a container the test reads from its ``setUp`` or its
module, given the changed condition's literal as its prefix.

- **Order** (when the changed lines concern order: ``sorted``, ``sort_keys``,
  ``reverse``, ``key=``, ``OrderedDict``, a ``set``): a dict, list or tuple literal the
  test passes on — in its body, or bound once to ``self.X`` in ``setUp`` / to a module
  name — with its items in the reverse order, at every depth (``{"a": 1, "b": 2}`` ->
  ``{"b": 2, "a": 1}``): a test whose keys happen to be in sorted order cannot tell
  "sorted" from "as given".
- **Prefix** (``self.items = ["Item 1", ...]`` in ``setUp``, read by the test): one
  string item starts with a piece the changed lines test (``"**Item 1"`` where they test
  ``startswith("**")``). A copy of the test binds the changed container at its start
  (``self.items = [...]``): the module's other text is untouched.

A copy is the test's own text, renamed ``<name>__o<k>``, right after it (inside its
class for a method).
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass

from bot.testgen.amplify_inputs import _EXPECTED, Steer, Variant, _find, _unique

__all__ = ["Aims", "aims_of", "concerns_order", "container_variants"]

MAX_CONTAINERS = 3  # containers of one test varied
MAX_ITEMS = 3  # string items of a container given a prefix
MAX_PIECES = 2  # steered pieces tried as a prefix
MAX_SOURCE = 2000  # characters of a varied container's source

_ORDER = re.compile(
    r"\bsort(?:ed)?\b|sort_keys|\breverse|\bkey=(?!=)|OrderedDict|\b(?:frozen)?set\(|\.sort\("
)


_PREFIX = re.compile(r"\.startswith\(|\.removeprefix\(|\bre\.match\(")


@dataclass(frozen=True)
class Aims:
    """What the changed lines concern, beyond their literals."""

    order: bool = False  # they sort, reverse or unorder something
    prefix: bool = False  # they test how a text starts


def concerns_order(rows: list[str]) -> bool:
    """Whether the changed lines (head's, and the parent's they replace) sort, reverse
    or unorder something."""
    return any(_ORDER.search(row) for row in rows)


def aims_of(rows: list[str]) -> Aims:
    return Aims(concerns_order(rows), any(_PREFIX.search(row) for row in rows))


Binding = tuple[str, ast.expr]  # what a copy rebinds at its start ("self.items"), its value


def container_variants(
    module_source: str, qualname: str, steer: Steer, aims: Aims, limit: int
) -> tuple[str, list[Variant]]:
    """The module's source with up to ``limit`` copies of the test ``qualname``, each
    with one container reordered (``aims.order``) or one string item of a container
    prefixed (one it reads by name; one in its body too where ``aims.prefix``)."""
    found = _test_of(module_source, qualname) if limit > 0 else None
    if found is None:
        return module_source, []
    tree, func, owner = found
    bound = _referenced(tree, func, owner)
    planned: list[tuple[str, Binding | None, ast.expr, str]] = []  # how, rebinding, node, new
    body: list[tuple[str | None, ast.expr]] = [(None, n) for n in _body_containers(func)]
    if aims.order:
        for target, node in [*bound, *body]:
            new = _reordered(node)
            if new is not None:
                where = target or f"line {node.lineno}"
                planned.append((f"{where}: the order reversed", _binding(target, node), node, new))
    pieces = sorted(dict.fromkeys([*steer.strings, *steer.chars]), key=len, reverse=True)
    for target, node in [*bound, *(body if aims.prefix else [])]:
        for item in _strings(node)[:MAX_ITEMS]:
            fresh = [p for p in pieces if p and not str(item.value).startswith(p)]
            for piece in fresh[:MAX_PIECES]:
                new = _prefixed(node, item, piece)
                shown = f"{item.value!r} -> {piece + str(item.value)!r}"
                where = target or f"line {node.lineno}"
                planned.append((f"{where}: {shown}", _binding(target, node), node, new))
    return _write(module_source, func, owner, planned[:limit])


def _test_of(
    source: str, qualname: str
) -> tuple[ast.Module, ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None] | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = _find(tree, qualname)
    return None if found is None else (tree, *found)


def _binding(target: str | None, node: ast.expr) -> Binding | None:
    return (target, node) if target is not None else None


def _plain(node: ast.expr) -> bool:
    if not isinstance(node, ast.List | ast.Tuple | ast.Dict):
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return len(ast.unparse(node)) <= MAX_SOURCE


def _referenced(
    tree: ast.Module, func: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None
) -> list[tuple[str, ast.expr]]:
    """The containers the test reads by name: ``self.X`` bound once in ``setUp`` /
    ``setup_method``, a module's ``X`` (names like ``expected`` left out)."""
    own: dict[str, ast.expr] = {}
    if owner is not None:
        for f in owner.body:
            if isinstance(f, ast.FunctionDef) and f.name in ("setUp", "setup_method"):
                me = f.args.args[0].arg if f.args.args else "self"
                own.update({f"self.{k}": v for k, v in _bound(f.body, me).items()})
    own.update(_bound(tree.body, None))
    stored = {
        ast.unparse(n)
        for n in ast.walk(func)
        if isinstance(n, ast.Name | ast.Attribute) and not isinstance(n.ctx, ast.Load)
    }
    read: list[str] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load):
            name = ast.unparse(node)
            if name in own and name not in stored and name not in read:
                read.append(name)
    out = [(n, own[n]) for n in read if not _EXPECTED.search(n.rsplit(".", 1)[-1])]
    return out[:MAX_CONTAINERS]


def _bound(body: list[ast.stmt], me: str | None) -> dict[str, ast.expr]:
    """Names (``me.X`` when ``me`` is given) bound once in ``body`` to a plain container."""
    seen: dict[str, list[ast.expr]] = {}
    for stmt in body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        if me is None and isinstance(target, ast.Name):
            seen.setdefault(target.id, []).append(stmt.value)
        elif (
            me is not None
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == me
        ):
            seen.setdefault(target.attr, []).append(stmt.value)
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and _plain(v[0])}


def _body_containers(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """The outermost plain containers of the test's body that are inputs: an argument
    of a call (not of an ``assert*`` call: ``assertEqual(expected, f(x))``'s ``x`` is
    one), or a value a statement outside an ``assert`` binds to a name not like
    ``expected``."""
    parents = {id(c): p for p in ast.walk(func) for c in ast.iter_child_nodes(p)}
    out: list[ast.expr] = []
    inner: set[int] = set()
    for stmt in func.body:
        for node in ast.walk(stmt):
            if id(node) in inner or not isinstance(node, ast.expr) or not _plain(node):
                continue
            if _input(node, parents):
                out.append(node)
                inner |= {id(n) for n in ast.walk(node)}
    return out[:MAX_CONTAINERS]


def _input(node: ast.expr, parents: dict[int, ast.AST]) -> bool:
    at: ast.AST | None = parents.get(id(node))
    while at is not None and not isinstance(at, ast.stmt):
        if isinstance(at, ast.Call):  # its nearest call says
            return not _callee(at).lower().startswith("assert")
        at = parents.get(id(at))
    if isinstance(at, ast.Assign):
        return not any(_EXPECTED.search(ast.unparse(t).rsplit(".", 1)[-1]) for t in at.targets)
    return False


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _reordered(node: ast.expr) -> str | None:
    """The container's source with its items reversed at every depth; None when that
    is the same value in the same order."""
    new = _reverse(copy.deepcopy(node))
    text = ast.unparse(new)
    return None if text == ast.unparse(node) else text


def _reverse(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Dict):
        pairs = list(zip(node.keys, node.values, strict=True))[::-1]
        node.keys = [k for k, _ in pairs]
        node.values = [_reverse(v) for _, v in pairs]
    elif isinstance(node, ast.List | ast.Tuple):
        node.elts = [_reverse(e) for e in node.elts[::-1]]
    return node


def _strings(node: ast.expr) -> list[ast.Constant]:
    """The container's string items (a dict's values, not its keys), in order."""
    keys = {id(k) for n in ast.walk(node) if isinstance(n, ast.Dict) for k in n.keys}
    return [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in keys
    ]


def _prefixed(node: ast.expr, item: ast.Constant, piece: str) -> str:
    place = _strings(node).index(item)
    new = copy.deepcopy(node)
    _strings(new)[place].value = piece + str(item.value)
    return ast.unparse(new)


def _write(
    source: str,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    owner: ast.ClassDef | None,
    planned: list[tuple[str, Binding | None, ast.expr, str]],
) -> tuple[str, list[Variant]]:
    """The copies, right after the test: a rebinding at the start of the body for a
    container read by name, else the container's own text replaced."""
    if not planned or func.body[0].lineno == func.lineno:
        return source, []
    rows = source.splitlines(keepends=True)
    rows[-1] = rows[-1] if rows[-1].endswith("\n") else rows[-1] + "\n"
    first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
    end = func.end_lineno or func.lineno
    body_at = func.body[0].lineno - first
    indent = " " * func.body[0].col_offset
    taken = {f.name for f in ast.walk(ast.parse(source)) if isinstance(f, ast.FunctionDef)}
    copies: list[str] = []
    made: list[Variant] = []
    for how, binding, node, new in planned:
        name = _unique(func.name, taken, "o")
        if binding is not None:
            lines = rows[first - 1 : end]
            lines.insert(body_at, f"{indent}{binding[0]} = {new}\n")
        else:
            lines = _replaced(rows, first, end, node, new)
        text = "".join(lines)
        text = re.sub(rf"\bdef {re.escape(func.name)}\(", f"def {name}(", text, count=1)
        copies.append("\n" + text)
        qualname = f"{owner.name}.{name}" if owner is not None else name
        made.append(Variant(name, qualname, how))
    out = "".join([*rows[:end], *copies, *rows[end:]])
    try:
        compile(out, "<variants>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source, []
    return out, made


def _replaced(rows: list[str], first: int, end: int, node: ast.expr, new: str) -> list[str]:
    """The function's lines with ``node``'s text (UTF-8 columns) replaced by ``new``."""
    start, stop = node.lineno, node.end_lineno or node.lineno
    head = rows[start - 1].encode("utf-8")[: node.col_offset].decode("utf-8")
    tail = rows[stop - 1].encode("utf-8")[node.end_col_offset or 0 :].decode("utf-8")
    return [*rows[first - 1 : start - 1], head + new + tail, *rows[stop:end]]
