"""Values of other types for a parameter whose type the changed lines test.

``if isinstance(other, Url): ... return False`` in ``Url.__eq__`` is a change about what
comparing with a string does; the project's tests compare a ``Url`` with another ``Url``
only. ``retype`` already tries the kinds a condition names (``isinstance(x, int)``: an
int) in the places the project's inputs hold literals; what it cannot do is a test against
one of the project's own classes (it names no kind), nor a place that holds no literal
(the other operand built by a call, ``a == parse(text)``). Here such a parameter gets a
string, ``None`` and a number in its place, on the receivers (and with the other
arguments) the project's tests used, a bounded number per function."""

from __future__ import annotations

import ast
from dataclasses import replace

from bot.testgen.inputs import Candidate
from bot.testgen.retype import called_def

__all__ = ["MAX_OPERANDS", "OTHER_TYPES", "other_types", "type_tested"]

MAX_OPERANDS = 16  # inputs of other types per function
MAX_RECEIVERS = 4  # of the project's inputs (distinct instances), the first ones varied
OTHER_TYPES = ("'text'", "None", "0")  # a str, None, an int: what a caller may hand in
_TYPE_TESTS = {"isinstance", "issubclass", "hasattr", "callable", "type"}
_MISSING_MEMBER = {"AttributeError", "TypeError"}


def _named(node: ast.expr, params: list[str]) -> str | None:
    """The parameter ``node`` is (``other``), or whose attribute it is (``other.x``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) and node.id in params else None


def _on_lines(node: ast.AST, lines: set[int]) -> bool:
    first = getattr(node, "lineno", None)
    last = getattr(node, "end_lineno", first)
    return first is not None and any(first <= n <= (last or first) for n in lines)


def _tested_in(node: ast.AST, params: list[str]) -> set[str]:
    """The parameters a statement tests the type of: ``isinstance(p, T)``, ``type(p) is
    T``, ``hasattr(p, "x")``, ``callable(p)``, ``p.__class__``."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Name)
            and sub.func.id in _TYPE_TESTS
            and sub.args
            and isinstance(sub.args[0], ast.Name)
            and sub.args[0].id in params
        ):
            found.add(sub.args[0].id)
        elif isinstance(sub, ast.Attribute) and sub.attr == "__class__":
            name = _named(sub.value, params)
            found |= {name} if name else set()
    return found


def _guarded(node: ast.Try, params: list[str]) -> set[str]:
    """``try: p.normalized ... except AttributeError``: the parameters whose members the
    guarded body reads (what a value of another type lacks)."""
    caught: set[str] = set()
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        caught |= {k.id for k in kinds if isinstance(k, ast.Name)}
    if not caught & _MISSING_MEMBER:
        return set()
    found: set[str] = set()
    for stmt in node.body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Load):
                name = _named(sub.value, params)
                found |= {name} if name else set()
    return found


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> list[str]:
    """Its positional parameters as a caller gives them (``self`` / ``cls`` left out)."""
    every = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    return every[1:] if "." in qualname and every[:1] in (["self"], ["cls"]) else every


def type_tested(source: str, qualname: str, lines: list[int]) -> list[str]:
    """The parameters (``self`` left out) whose type the changed lines of ``qualname``
    test, in the order of its signature."""
    try:
        func = called_def(ast.parse(source), qualname)
    except SyntaxError:
        return []
    if func is None:
        return []
    params = _params(func, qualname)
    wanted = set(lines)
    found: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Try) and (
            _on_lines(node, wanted) and any(_on_lines(h, wanted) for h in node.handlers)
        ):
            found |= _guarded(node, params)
        elif isinstance(node, ast.Call | ast.Attribute) and getattr(node, "lineno", 0) in wanted:
            found |= _tested_in(node, params)
    return [p for p in params if p in found]


def other_types(
    candidates: list[Candidate], source: str, qualname: str, lines: list[int]
) -> list[Candidate]:
    """The project's inputs of ``qualname`` with a value of another type in the place of
    each parameter whose type the changed lines test: on its first distinct receivers
    (a member) or its first distinct calls (a function)."""
    tested = type_tested(source, qualname, lines)
    if not tested:
        return []
    func = called_def(ast.parse(source), qualname)
    assert func is not None
    params = _params(func, qualname)
    required = len(params) - len(func.args.defaults)
    seen: set[object] = set()
    out: list[Candidate] = []
    for c in candidates:
        where = (c.ctor, c.factory, c.steps) if c.ctor is not None else (c.args, c.kwargs)
        if where in seen or len(seen) >= MAX_RECEIVERS:
            continue
        placed = [_placed(c, params.index(p), p, v, required) for p in tested for v in OTHER_TYPES]
        made = [m for m in placed if m is not None and m != c]
        if made:
            seen.add(where)
            out += made
    return list(dict.fromkeys(m for m in out if m not in candidates))[:MAX_OPERANDS]


def _placed(c: Candidate, index: int, name: str, value: str, required: int) -> Candidate | None:
    """``c`` with ``value`` for the parameter at ``index`` (named ``name``): in its place
    when the call gives it, else as the only argument a member needs."""
    origin = f"{c.origin} (other type)"
    keyed = [k for k, _ in c.kwargs]
    if name in keyed:
        kwargs = tuple((k, value if k == name else v) for k, v in c.kwargs)
        return replace(c, kwargs=kwargs, origin=origin)
    if index < len(c.args):
        return replace(c, args=(*c.args[:index], value, *c.args[index + 1 :]), origin=origin)
    if not c.args and not c.kwargs and index == 0 and required == 1 and c.ctor is not None:
        return replace(c, args=(value,), origin=origin)
    return None
