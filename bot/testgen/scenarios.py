"""Instances built the way the project's tests and docstrings build them, read (never run)
from their source: ``cache = TTLCache(maxsize=2, ttl=1)`` starts a scenario; the plain
steps on ``cache`` that follow (``cache[1] = 1``, ``cache.pop(2)``) are kept in order; each
use of the changed member (``cache.expire(3)``, ``cache.maxsize``) is a candidate with
the constructor and the steps before it. A step the reader cannot replay (the instance
handed to a helper of the tests) ends the scenario."""

from __future__ import annotations

import ast
import re

from bot.testgen.inputs import (
    _PROMPT,
    Candidate,
    _imports,
    _plain,
    assignments,
    inline,
    mapped_calls,
    test_bodies,
)

__all__ = ["OBJ", "scenarios_from_doctests", "scenarios_from_tests"]

OBJ = "_nova_obj"  # the instance in a step (the side-runner binds it)
MAX_STEPS = 10
MAX_SCENARIOS = 40
_SUBJECT_FORMS = {
    "__len__": "len",
    "__iter__": "list",
    "__str__": "str",
    "__repr__": "repr",
    "__bool__": "bool",
}


class _Rename(ast.NodeTransformer):
    def __init__(self, var: str) -> None:
        self.var = var

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(id=OBJ, ctx=node.ctx) if node.id == self.var else node


def _step(node: ast.AST, var: str) -> str:
    return ast.unparse(_Rename(var).visit(node))


def _ctor_parts(
    call: ast.Call, env: dict[str, ast.expr], bound: set[str]
) -> tuple[tuple[str | None, ...], tuple[tuple[str, str | None], ...]] | None:
    args = [inline(a, env) for a in call.args]
    if any(isinstance(a, ast.Starred) for a in args) or not all(_plain(a, bound) for a in args):
        return None
    named = []
    for k in call.keywords:
        if k.arg is None:
            return None
        value = inline(k.value, env)
        named.append((k.arg, ast.unparse(value) if _plain(value, bound) else None))
    return tuple(ast.unparse(a) for a in args), tuple(named)


def _uses(
    stmt: ast.AST, var: str, member: str, env: dict[str, ast.expr] | None = None
) -> list[ast.Call | None]:
    """The member's uses on ``var`` in a statement: a call (its arguments are the
    input; ``filter(var.member, xs)`` is a call per item), or None for an argument-free
    use (a property, ``len(var)``)."""
    found: list[ast.Call | None] = list(_syntax_uses(stmt, var, member))
    handed = set()
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Call):
            for each in mapped_calls(sub, env or {}):
                f = each.func
                if (
                    isinstance(f, ast.Attribute)
                    and f.attr == member
                    and isinstance(f.value, ast.Name)
                    and f.value.id == var
                ):
                    found.append(each)
                    handed.add(id(f))
    for sub in ast.walk(stmt):
        if id(sub) in handed:
            continue
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr == member
            and isinstance(sub.func.value, ast.Name)
            and sub.func.value.id == var
        ):
            found.append(sub)
        elif (
            isinstance(sub, ast.Attribute)
            and sub.attr == member
            and isinstance(sub.value, ast.Name)
            and sub.value.id == var
            and isinstance(sub.ctx, ast.Load)
        ):
            found.append(None)
        elif (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Name)
            and sub.func.id == _SUBJECT_FORMS.get(member)
            and len(sub.args) == 1
            and isinstance(sub.args[0], ast.Name)
            and sub.args[0].id == var
        ):
            found.append(None)
    # a call's func is also an Attribute: count it once
    calls: list[ast.Call | None] = [f for f in found if f is not None]
    return calls or found[:1]


def _syntax_uses(stmt: ast.AST, var: str, member: str) -> list[ast.Call]:
    """A special method's uses written as syntax, as calls: ``var[k] = v`` is
    ``var.__setitem__(k, v)``, ``var[k]`` ``__getitem__``, ``del var[k]`` ``__delitem__``,
    ``k in var`` ``__contains__``, ``var(x)`` ``__call__``."""

    def on(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id == var

    def call(args: list[ast.expr], keywords: list[ast.keyword] | None = None) -> ast.Call:
        func = ast.Attribute(value=ast.Name(id=var, ctx=ast.Load()), attr=member, ctx=ast.Load())
        return ast.Call(func=func, args=args, keywords=keywords or [])

    out: list[ast.Call] = []
    if member in ("__setitem__", "__delitem__"):
        if member == "__setitem__" and isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, ast.Subscript) and on(t.value):
                    out.append(call([t.slice, stmt.value]))
        elif member == "__delitem__" and isinstance(stmt, ast.Delete):
            out += [
                call([t.slice])
                for t in stmt.targets
                if isinstance(t, ast.Subscript) and on(t.value)
            ]
        return out
    for sub in ast.walk(stmt):
        if member == "__getitem__" and isinstance(sub, ast.Subscript) and on(sub.value):
            if isinstance(sub.ctx, ast.Load):
                out.append(call([sub.slice]))
        elif member == "__contains__" and isinstance(sub, ast.Compare):
            lefts = [sub.left, *sub.comparators]
            for left, op, right in zip(lefts, sub.ops, sub.comparators, strict=False):
                if isinstance(op, ast.In | ast.NotIn) and on(right):
                    out.append(call([left]))
        elif member == "__call__" and isinstance(sub, ast.Call) and on(sub.func):
            out.append(call(list(sub.args), list(sub.keywords)))
    return out


def _last_name(node: ast.expr) -> str:
    """``Spec`` of ``Spec`` and of ``pkg.Spec``."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _mentions(stmt: ast.AST, var: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(stmt))


def _replayable(
    stmt: ast.stmt, var: str, bound: set[str], env: dict[str, ast.expr]
) -> list[str] | None:
    """The steps a statement takes on ``var`` (its plain method calls, item assignments),
    [] when it only reads it, None when it cannot be replayed."""
    if isinstance(stmt, ast.Assign) and any(
        isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == var
        for t in stmt.targets
    ):
        stmt = ast.Assign(targets=stmt.targets, value=inline(stmt.value, env), lineno=stmt.lineno)
        ok = all(
            _plain(n, bound | {var})
            for n in [*stmt.targets, stmt.value]
            if not isinstance(n, ast.Subscript)
        ) and all(_plain(t.slice, bound) for t in stmt.targets if isinstance(t, ast.Subscript))
        return [_step(stmt, var)] if ok else None
    if isinstance(stmt, ast.Delete):
        return None
    steps = []
    for sub in ast.walk(stmt):
        if not _mentions(sub, var) or sub is stmt:
            continue
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
            acting = isinstance(stmt, ast.Expr) and stmt.value is sub  # not a read in an assert
            if acting and isinstance(sub.func.value, ast.Name) and sub.func.value.id == var:
                args = [inline(a, env) for a in sub.args]
                kws = [inline(k.value, env) for k in sub.keywords]
                if not all(_plain(a, bound) for a in [*args, *kws]):
                    return None
                call = ast.Call(
                    func=sub.func,
                    args=args,
                    keywords=[
                        ast.keyword(arg=k.arg, value=v)
                        for k, v in zip(sub.keywords, kws, strict=True)
                    ],
                )
                steps.append(_step(call, var))
        elif isinstance(sub, ast.Call) and any(
            isinstance(a, ast.Name) and a.id == var for a in sub.args
        ):
            callee = sub.func.id if isinstance(sub.func, ast.Name) else ""
            if callee not in (
                "len",
                "list",
                "str",
                "repr",
                "bool",
                "sorted",
                "dict",
                "set",
                "tuple",
                "iter",
                "isinstance",
            ):
                return None  # handed to something the reader cannot follow
    return steps


# an instance the tests built: its constructor's arguments, the steps taken on it, the
# class method that built it ("": the class)
_Live = tuple[tuple[tuple[str | None, ...], tuple[tuple[str, str | None], ...]], list[str], str]


def _walk_body(
    body: list[ast.stmt],
    owner: str,
    member: str,
    bound: set[str],
    env: dict[str, ast.expr],
    imports: tuple[str, ...],
    origin: str,
    live: dict[str, _Live] | None = None,
) -> list[Candidate]:
    """The candidates of a body; ``live``: the instances built before it (an instance
    built before ``with pytest.raises(...):`` is used inside it)."""
    found: list[Candidate] = []
    live = {} if live is None else live
    for stmt in body:
        if isinstance(stmt, ast.With | ast.AsyncWith):
            found += _walk_body(stmt.body, owner, member, bound, env, imports, origin, live)
            continue
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
        ):
            func = stmt.value.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            # ``Spec.from_lines(...)``: a class method that builds the instance
            factory = (
                func.attr
                if isinstance(func, ast.Attribute)
                and _last_name(func.value) == owner
                and not func.attr.startswith("_")
                else ""
            )
            if name == owner or factory:
                parts = _ctor_parts(stmt.value, env, bound)
                var = stmt.targets[0].id
                live.pop(var, None)
                if parts is not None:
                    live[var] = (parts, [], factory)
                continue
        for var, (ctor, steps, factory) in list(live.items()):
            if not _mentions(stmt, var):
                continue
            for use in _uses(stmt, var, member, env):
                args: tuple[str | None, ...] = ()
                kwargs: tuple[tuple[str, str | None], ...] = ()
                if use is not None:
                    parts = _ctor_parts(use, env, bound)
                    if parts is None:
                        continue
                    args, kwargs = parts
                found.append(
                    Candidate(args, kwargs, imports, origin, ctor, tuple(steps), factory=factory)
                )
            more = _replayable(stmt, var, bound, env)
            if more is None or len(steps) + len(more) > MAX_STEPS:
                del live[var]
            else:
                steps += more
    return found


def scenarios_from_tests(files: dict[str, str], owner: str, member: str) -> list[Candidate]:
    """Candidates for ``owner.member`` from the test files (path -> source)."""
    out: list[Candidate] = []
    word = re.compile(rf"\b{re.escape(owner)}\b")
    for path, text in sorted(files.items()):
        if not word.search(text):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        imports, bound = _imports(tree)
        env: dict[str, ast.expr] = {}
        assignments(tree.body, bound, env)
        for func in test_bodies(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                local = dict(env)
                assignments(func.body, bound, local)
                for name in [owner]:
                    local.pop(name, None)
                out += _walk_body(
                    func.body, owner, member, bound, local, tuple(imports), f"{path}:{func.lineno}"
                )
    return list(dict.fromkeys(out))[:MAX_SCENARIOS]


def scenarios_from_doctests(source: str, owner: str, member: str, path: str) -> list[Candidate]:
    """Candidates from the ``>>>`` examples of the class's and its members' docstrings."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out: list[Candidate] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == owner):
            continue
        docs = [ast.get_docstring(node) or ""] + [
            ast.get_docstring(f) or ""
            for f in node.body
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for doc in docs:
            lines = [m.group(1) for m in map(_PROMPT.match, doc.splitlines()) if m]
            try:
                parsed = ast.parse("\n".join(lines))
            except SyntaxError:
                continue
            imports, bound = _imports(parsed)
            out += _walk_body(
                parsed.body, owner, member, bound | {owner}, {}, tuple(imports), f"{path} (doctest)"
            )
    return list(dict.fromkeys(out))[:MAX_SCENARIOS]
