"""Inputs a test reads from elsewhere in its module: a constant (``SAMPLE = '...'`` at
module level, ``json_response = (...)`` in the test's class, ``self.body = b'...'`` in its
``setUp``) and a table of cases (``CASES = [(text, expected), ...]`` that the test loops
over or parametrizes with).

A copy of the test never changes the module's other text: a constant's reference in the
copy becomes the varied literal itself (``parse_token_response(self.json_response)`` ->
``parse_token_response('{"expires_in": 3600.5, ...}')``), and a table's reference becomes
the table with ONE row more, a copy of one of its rows with one input literal steered
(``for text, expected in [*CASES, ('3600.5', 3600)]:``), the expected side kept.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Input", "Judge", "references"]

MAX_ROWS = 4  # rows of a table copied with a steered input


@dataclass(frozen=True)
class Input:
    """One input of a test: ``node``'s span is what a copy replaces; ``value`` the
    literal's value. For a table's row (``row`` set), the copy puts the table with that
    row added, ``literal`` (inside the row) changed."""

    node: ast.expr
    value: object
    row: ast.expr | None = None
    literal: ast.expr | None = None


class Judge(Protocol):
    def is_input(self, node: ast.expr) -> bool: ...

    def input_column(self, name: str) -> bool: ...


def _value(node: ast.expr) -> object:
    if isinstance(node, ast.Constant) and type(node.value) in (str, bytes, int, float):
        return node.value
    return ...


def _bound(body: list[ast.stmt], self_name: str | None = None) -> dict[str, ast.expr]:
    """Names bound once in ``body`` (``X = ...``, or ``self.X = ...`` when ``self_name``
    is given), to their value."""
    seen: dict[str, list[ast.AST]] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            seen.setdefault(stmt.name, []).append(stmt)  # its own names are its own
            continue
        else:
            for node in ast.walk(stmt):  # any other binding spoils the name
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    seen.setdefault(node.id, []).append(node)
            continue
        if self_name is None and isinstance(target, ast.Name):
            seen.setdefault(target.id, []).append(value)
        elif (
            self_name is not None
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == self_name
        ):
            seen.setdefault(target.attr, []).append(value)
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and isinstance(v[0], ast.expr)}


class _Bindings:
    """The constants and tables a test function can read by name."""

    def __init__(
        self,
        tree: ast.Module,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        owner: ast.ClassDef | None,
    ) -> None:
        self.module = _bound(tree.body)
        self.klass: dict[str, ast.expr] = {}
        self.owner = owner.name if owner is not None else ""
        args = func.args
        params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        self.me = params[0] if owner is not None and params else ""
        if owner is not None:
            self.klass = _bound(owner.body)
            for f in owner.body:
                if isinstance(f, ast.FunctionDef) and f.name in ("setUp", "setup_method"):
                    first = f.args.args[0].arg if f.args.args else "self"
                    self.klass = {**_bound(f.body, first), **self.klass}
        local = set(params)
        stored: set[str] = set()
        for node in ast.walk(func):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                local.add(node.id)
            elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                stored.add(node.attr)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                local |= set(node.names)
        self.module = {k: v for k, v in self.module.items() if k not in local}
        self.klass = {k: v for k, v in self.klass.items() if k not in stored}

    def lookup(self, node: ast.expr) -> ast.expr | None:
        """The value a name or ``self.X`` / ``Owner.X`` reads, if bound once."""
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            return self.module.get(node.id)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id in {self.me, self.owner} - {""}
        ):
            return self.klass.get(node.attr)
        return None


def _rows(
    table: ast.expr, target: ast.expr, judge: Judge, in_class: bool
) -> list[tuple[ast.expr, ast.expr]]:
    """(row, literal) for the input literals of a table's first rows: the columns the
    loop's ``target`` names as inputs (any, for a single name)."""
    if not isinstance(table, ast.List | ast.Tuple):
        return []
    out: list[tuple[ast.expr, ast.expr]] = []
    for row in table.elts[:MAX_ROWS]:
        if in_class and not _plain(row):
            continue  # a class body's names are not in the method's scope
        if isinstance(target, ast.Tuple) and isinstance(row, ast.Tuple | ast.List):
            for name, item in zip(target.elts, row.elts, strict=False):
                if isinstance(name, ast.Name) and judge.input_column(name.id):
                    out += [(row, lit) for lit in _literals(item)]
        elif isinstance(target, ast.Name) and judge.input_column(target.id):
            out += [(row, lit) for lit in _literals(row)]
    return out


def _plain(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _literals(node: ast.expr) -> list[ast.expr]:
    if _value(node) is not ...:
        return [node]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [lit for e in node.elts for lit in _literals(e)]
    if isinstance(node, ast.Dict):
        return [lit for v in node.values for lit in _literals(v)]
    return []


def references(
    tree: ast.Module,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    owner: ast.ClassDef | None,
    judge: Judge,
) -> list[Input]:
    """The inputs the test ``func`` reads through names: constants it passes on, and
    tables it loops over (``for`` in its body) or is parametrized with."""
    bindings = _Bindings(tree, func, owner)
    if not bindings.module and not bindings.klass:
        return []
    out: list[Input] = []
    for dec in func.decorator_list:
        if isinstance(dec, ast.Call) and _name(dec.func) == "parametrize" and len(dec.args) > 1:
            out += _parametrized(dec, bindings, judge)
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(_value(body[0].value), str):
        body = body[1:]  # the docstring
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(node, ast.For | ast.AsyncFor):
            table = bindings.lookup(node.iter)
            if table is not None:
                in_class = not isinstance(node.iter, ast.Name)
                rows = _rows(table, node.target, judge, in_class)
                out += [Input(node.iter, _value(lit), row, lit) for row, lit in rows]
            continue
        if not isinstance(node, ast.Name | ast.Attribute):
            continue
        bound = bindings.lookup(node)
        if bound is not None and _value(bound) is not ... and judge.is_input(node):
            out.append(Input(node, _value(bound)))
    return out


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _parametrized(dec: ast.Call, bindings: _Bindings, judge: Judge) -> list[Input]:
    """A ``parametrize`` whose rows are a module's table: its input columns."""
    rows_ref = dec.args[1]
    table = bindings.lookup(rows_ref) if isinstance(rows_ref, ast.Name) else None
    names = _value(dec.args[0])
    if table is None or not isinstance(names, str):
        return []
    columns = [n.strip() for n in names.split(",") if n.strip()]
    target: ast.expr = (
        ast.Tuple([ast.Name(c, ast.Load()) for c in columns], ast.Load())
        if len(columns) > 1
        else ast.Name(columns[0] if columns else "", ast.Load())
    )

    rows = _rows(table, target, judge, in_class=False)
    return [Input(rows_ref, _value(lit), row, lit) for row, lit in rows]
