"""Callables a fixture hands back, applied where a test calls them: ``partial(Signer,
key=k)()`` is ``Signer(key=k)``, a lambda or a function whose body is one ``return``
becomes that expression with the call's arguments put in (``*args`` and ``**kwargs``
spread into the calls it makes). Read, never run."""

from __future__ import annotations

import ast
import copy

__all__ = ["apply_callables", "body_of", "stored_names"]


def body_of(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return body


def _is_partial(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "partial"
        and bool(node.args)
        and not isinstance(node.args[0], ast.Starred)
    )


def _callables(body: list[ast.stmt]) -> dict[str, ast.expr | ast.FunctionDef]:
    """Names bound once to a ``partial(...)``, a lambda, or a one-``return`` function."""
    found: dict[str, ast.expr | ast.FunctionDef] = {}
    count: dict[str, int] = {}
    for stmt in body:
        for name in stored_names([stmt]):
            count[name] = count.get(name, 0) + 1
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and (
                _is_partial(stmt.value) or isinstance(stmt.value, ast.Lambda)
            ):
                found[target.id] = stmt.value
        elif isinstance(stmt, ast.FunctionDef):
            inner = body_of(stmt)
            if len(inner) == 1 and isinstance(inner[0], ast.Return) and inner[0].value:
                found[stmt.name] = stmt
    return {k: v for k, v in found.items() if count.get(k) == 1}


def _applied(made: ast.expr | ast.FunctionDef, call: ast.Call) -> ast.expr | None:
    """The call of a partial / lambda / one-return function, as the call it makes."""
    if isinstance(made, ast.Call):  # partial(F, *a, **k)(*b, **kk) -> F(*a, *b, **k | kk)
        given = {k.arg for k in call.keywords}
        keywords = [k for k in made.keywords if k.arg is None or k.arg not in given]
        return ast.Call(
            func=made.args[0], args=[*made.args[1:], *call.args], keywords=keywords + call.keywords
        )
    if isinstance(made, ast.Lambda):
        return _substituted(made.args, made.body, call)
    if not isinstance(made, ast.FunctionDef):
        return None
    ret = body_of(made)[0]
    assert isinstance(ret, ast.Return) and ret.value is not None
    return _substituted(made.args, ret.value, call)


def _substituted(params: ast.arguments, body: ast.expr, call: ast.Call) -> ast.expr | None:
    positional = [*params.posonlyargs, *params.args]
    names = [a.arg for a in positional]
    values: dict[str, ast.expr] = {}
    if params.defaults:
        values.update(zip(names[-len(params.defaults) :], params.defaults, strict=True))
    values.update(
        {a.arg: d for a, d in zip(params.kwonlyargs, params.kw_defaults, strict=True) if d}
    )
    extra: list[ast.expr] = []
    extra_kw: list[ast.keyword] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if i < len(names):
            values[names[i]] = arg
        elif params.vararg:
            extra.append(arg)
        else:
            return None
    known = set(names) | {a.arg for a in params.kwonlyargs}
    for kw in call.keywords:
        if kw.arg in known:
            values[kw.arg] = kw.value
        elif params.kwarg and kw.arg is not None:
            extra_kw.append(kw)
        else:
            return None
    if known - set(values):
        return None  # a required parameter the call does not give
    star = {params.vararg.arg: extra} if params.vararg else {}
    stars = {params.kwarg.arg: extra_kw} if params.kwarg else {}
    out = _Spread(values, star, stars).visit(copy.deepcopy(body))
    leftover = {n.id for n in ast.walk(out) if isinstance(n, ast.Name)} & {*star, *stars}
    return None if leftover else out


class _Spread(ast.NodeTransformer):
    """Parameters put in place: names, ``*args`` and ``**kwargs`` in the calls made."""

    def __init__(
        self,
        values: dict[str, ast.expr],
        star: dict[str, list[ast.expr]],
        stars: dict[str, list[ast.keyword]],
    ) -> None:
        self.values, self.star, self.stars = values, star, stars

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.values.get(node.id)
        return copy.deepcopy(value) if value is not None else node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        args: list[ast.expr] = []
        for arg in node.args:
            if (
                isinstance(arg, ast.Starred)
                and isinstance(arg.value, ast.Name)
                and arg.value.id in self.star
            ):
                args += self.star[arg.value.id]
            else:
                args.append(arg)
        keywords: list[ast.keyword] = []
        for kw in node.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Name) and kw.value.id in self.stars:
                keywords += self.stars[kw.value.id]
            else:
                keywords.append(kw)
        node.args, node.keywords = args, keywords
        return node


class _Apply(ast.NodeTransformer):
    def __init__(self, made: dict[str, ast.expr | ast.FunctionDef]) -> None:
        self.made = made

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        for _ in range(3):  # a partial of a partial
            func = node.func
            target: ast.expr | ast.FunctionDef | None = None
            if isinstance(func, ast.Name):
                target = self.made.get(func.id)
            elif _is_partial(func):
                target = func
            found = _applied(target, node) if target is not None else None
            if not isinstance(found, ast.Call):
                return found if found is not None else node
            node = ast.copy_location(found, node)
        return node


def apply_callables(body: list[ast.stmt]) -> list[ast.stmt]:
    made = _callables(body)
    apply = _Apply(made)
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.Assign) and stmt.value in made.values():
            out.append(stmt)  # the binding itself stays as written
            continue
        out.append(apply.visit(stmt))
    return out


def stored_names(stmts: list[ast.stmt]) -> set[str]:
    """Names the statements bind (their locals)."""
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(node.name)
    return out
