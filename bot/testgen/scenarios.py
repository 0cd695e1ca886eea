"""Instances built the way the project's tests and docstrings build them, read (never run)
from their source: ``cache = TTLCache(maxsize=2, ttl=1)`` starts a scenario; the plain
steps on ``cache`` that follow (``cache[1] = 1``, ``cache.pop(2)``) are kept in order; each
use of the changed member (``cache.expire(3)``, ``cache.maxsize``) is a candidate with
the constructor and the steps before it. A step the reader cannot replay (the instance
handed to a helper of the tests) ends the scenario."""

from __future__ import annotations

import ast
import re
import typing

from bot.testgen.inputs import (
    _PROMPT,
    Candidate,
    _imports,
    _parametrize,
    _plain,
    assignments,
    inline,
    mapped_calls,
    test_bodies,
)

__all__ = ["MAKER", "OBJ", "makers_of", "scenarios_from_doctests", "scenarios_from_tests"]

OBJ = "_nova_obj"  # the instance in a step (the side-runner binds it)
MAKER = "@"  # a factory that starts so is a callable the test imports (``@parse``), not a
# class method: ``url = parse(text)`` builds the instance (the side-runner checks its class)
MAX_STEPS = 10
MAX_SCENARIOS = 40
MAX_ROWS = 12  # parametrize rows a test's scenarios are read with
# a comparison written as syntax: the special method it calls on its left operand
_COMPARED = {
    ast.Eq: "__eq__",
    ast.NotEq: "__ne__",
    ast.Lt: "__lt__",
    ast.LtE: "__le__",
    ast.Gt: "__gt__",
    ast.GtE: "__ge__",
}
_REFLECTED = {"__eq__": "__eq__", "__ne__": "__ne__", "__lt__": "__gt__", "__gt__": "__lt__"}
_REFLECTED |= {"__le__": "__ge__", "__ge__": "__le__"}
_ARITHMETIC = {
    ast.Add: "__add__",
    ast.Sub: "__sub__",
    ast.Mult: "__mul__",
    ast.BitOr: "__or__",
    ast.BitAnd: "__and__",
}
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
    if member in _REFLECTED or member in _ARITHMETIC.values():
        return _operator_uses(stmt, var, member, call)
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


def _operator_uses(
    stmt: ast.AST, var: str, member: str, call: typing.Callable[[list[ast.expr]], ast.Call]
) -> list[ast.Call]:
    """``var == x`` (and ``x == var``, ``var != x``: the same equality) as ``var.__eq__(x)``,
    ``var < x`` as ``__lt__``, ``var + x`` as ``__add__``: the other operand is the input."""
    out: list[ast.Call] = []
    equality = member in ("__eq__", "__ne__")
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Compare):
            sides = [sub.left, *sub.comparators]
            for left, op, right in zip(sides, sub.ops, sub.comparators, strict=False):
                name = _COMPARED.get(type(op))
                if name is None or not (
                    name == member or equality and name in ("__eq__", "__ne__")
                ):
                    continue
                if isinstance(left, ast.Name) and left.id == var:
                    out.append(call([right]))
                elif isinstance(right, ast.Name) and right.id == var and _REFLECTED[name] == member:
                    out.append(call([left]))
        elif (
            isinstance(sub, ast.BinOp)
            and _ARITHMETIC.get(type(sub.op)) == member
            and isinstance(sub.left, ast.Name)
            and sub.left.id == var
        ):
            out.append(call([sub.right]))
    return out


def _made_by(
    parts: tuple[tuple[str | None, ...], tuple[tuple[str, str | None], ...]],
    owner: str,
    factory: str,
) -> ast.expr | None:
    """The expression that builds an instance again (the other operand of ``a == b`` built
    as ``b`` was); None when one of its arguments is not plain."""
    args, named = parts
    if any(a is None for a in args) or any(v is None for _, v in named):
        return None
    func = (
        factory[len(MAKER) :]
        if factory.startswith(MAKER)
        else f"{owner}.{factory}"
        if factory
        else owner
    )
    listed = [*(str(a) for a in args), *(f"{k}={v}" for k, v in named)]
    try:
        return ast.parse(f"{func}({', '.join(listed)})", mode="eval").body
    except SyntaxError:
        return None


def _maker(func: ast.expr, bound: set[str], makers: frozenset[str]) -> str:
    """``parse`` of ``url = parse(text)``: a function of the project that builds the class
    (``makers``), as the test imports it; "" for anything else. The side-runner checks
    what it built."""
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or root.id not in bound or _last_name(func) not in makers:
        return ""
    return MAKER + ast.unparse(func)


MAKER_DEPTH = 3  # calls between a public function and the class it builds


def makers_of(sources: dict[str, str], owner: str) -> frozenset[str]:
    """The public module-level functions of the project (path -> source) that build an
    instance of ``owner``: a call of it in their body (or of a function that does, up to
    ``MAKER_DEPTH`` deep, in the modules that name the class), or a return annotation
    naming it."""
    word = re.compile(rf"\b{re.escape(owner)}\b")
    funcs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for text in sources.values():
        try:
            tree = ast.parse(text) if word.search(text) else None  # where it is built
        except SyntaxError:
            continue
        for node in tree.body if tree is not None else []:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                funcs.setdefault(node.name, []).append(node)
    builders = {owner}
    for _ in range(MAKER_DEPTH):
        more = {
            name
            for name, defs in funcs.items()
            for d in defs
            if any(isinstance(c, ast.Call) and _last_name(c.func) in builders for c in ast.walk(d))
            or (d.returns is not None and word.search(ast.unparse(d.returns)))
        }
        if more <= builders:
            break
        builders |= more
    return frozenset(b for b in builders - {owner} if not b.startswith("_"))


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
    makers: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """The candidates of a body; ``live``: the instances built before it (an instance
    built before ``with pytest.raises(...):`` is used inside it)."""
    found: list[Candidate] = []
    live = {} if live is None else live
    for stmt in body:
        if isinstance(stmt, ast.With | ast.AsyncWith):
            found += _walk_body(stmt.body, owner, member, bound, env, imports, origin, live, makers)
            continue
        if isinstance(stmt, ast.Try | ast.TryStar):  # the path with no exception, in order
            for block in (stmt.body, stmt.orelse, stmt.finalbody):
                found += _walk_body(block, owner, member, bound, env, imports, origin, live, makers)
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
            if not (name == owner or factory):
                factory = _maker(func, bound, makers)
            if name == owner or factory:
                parts = _ctor_parts(stmt.value, env, bound)
                var = stmt.targets[0].id
                live.pop(var, None)
                if parts is not None:
                    live[var] = (parts, [], factory)
                continue
        # another instance the test built, as an argument: built again the same way
        others = {v: _made_by(p, owner, f) for v, (p, s, f) in live.items() if not s}
        made = {v: e for v, e in others.items() if e is not None}
        for var, (ctor, steps, factory) in list(live.items()):
            if not _mentions(stmt, var):
                continue
            for use in _uses(stmt, var, member, env):
                args: tuple[str | None, ...] = ()
                kwargs: tuple[tuple[str, str | None], ...] = ()
                if use is not None:
                    parts = _ctor_parts(use, {**env, **made}, bound | {owner})
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


def scenarios_from_tests(
    files: dict[str, str], owner: str, member: str, makers: frozenset[str] = frozenset()
) -> list[Candidate]:
    """Candidates for ``owner.member`` from the test files (path -> source); ``makers``:
    the project's functions that build an instance (``parse`` of ``url = parse(text)``)."""
    out: list[Candidate] = []
    word = re.compile(rf"\b({'|'.join(re.escape(n) for n in sorted({owner, *makers}))})\b")
    for path, text in sorted(files.items()):
        if not word.search(text):  # the class, or a function that builds it
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
                for row in _parametrize(func)[:MAX_ROWS] or [{}]:
                    local = {**env, **row}
                    assignments(func.body, bound, local)
                    local.update(row)  # ``url = parse(url)``: the row's value is the argument
                    local.pop(owner, None)
                    out += _walk_body(
                        func.body,
                        owner,
                        member,
                        bound,
                        local,
                        tuple(imports),
                        f"{path}:{func.lineno}",
                        makers=makers,
                    )
    # a class's own constructors first: an imported callable may build something else
    out.sort(key=lambda c: c.factory.startswith(MAKER))
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
