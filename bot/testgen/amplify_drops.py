"""Input variants that leave ONE part of a test's input out, steered by what the changed
code reads.

A fix very often handles a part that is missing: a key absent from a mapping
(``env.get("X")`` now checked for ``None``), a keyword argument left to its default, an
environment variable that is not set. A project's tests usually pass every part, so no
literal changed in place (``amplify_inputs``) reaches the new branch; a copy of the test
without that part does.

- **Keys** (``read_keys``): the string literals the changed functions read a mapping or
  the environment with (``x["K"]``, ``x.get("K")``, ``"K" in x``, ``getenv("K")``,
  ``self._get_env("K")``: any call with the literal), those assigned to a name a changed
  condition tests first (``if repo is not None`` -> ``repo = self._get_env("REPO")`` ->
  ``"REPO"``), then the other keys the changed functions read.
- **Parameters**: the parameters of a changed function (or the attributes of ``self``)
  that a changed condition tests (``is None``, truthiness, ``in``).
- **Drops** (``drop_variants``): an entry of a dict literal (or a ``dict(K=...)``
  keyword) whose key is a read key; a keyword argument named like a tested parameter (the
  default is used); a ``monkeypatch.setenv("K", ...)`` of a read key becomes
  ``monkeypatch.delenv("K", raising=False)``. Each as the replacement source of one node
  of the test, which ``amplify_inputs`` splices into a copy like a changed literal.
- **The differential's inputs** (``left_out``): a dict argument of a call (or of its
  receiver's constructor) without one read key, a keyword argument a changed condition
  tests left off.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import replace

from bot.testgen.amplify_refs import Input
from bot.testgen.inputs import Candidate

__all__ = [
    "drop_variants",
    "first_holding",
    "key_reads",
    "left_out",
    "leaving_out_first",
    "read_keys",
]

MAX_KEYS = 12
Key = str | bytes  # a mapping's key the changed code reads (``sig[b"t"]``)
MAX_DROPS = 6  # copies of one test with a part left out


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _functions(tree: ast.Module, lines: set[int]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The innermost functions that hold a line of ``lines``."""
    out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            span = set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
            if span & lines:
                out.append(node)
    # an inner function's lines are its own, not its outer one's
    return [f for f in out if not any(g is not f and _inside(g, f) for g in out)] or out


def _inside(inner: ast.AST, outer: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(outer)) and inner is not outer


def _tests(func: ast.AST, lines: set[int]) -> list[ast.expr]:
    """The conditions on ``lines`` of ``func`` (an ``if``, a ``while``, a conditional
    expression, a boolean operation, a comparison, a comprehension's ``if``)."""
    out: list[ast.expr] = []
    for node in ast.walk(func):
        if getattr(node, "lineno", 0) not in lines:
            continue
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            out.append(node.test)
        elif isinstance(node, ast.BoolOp | ast.Compare):
            out.append(node)
        elif isinstance(node, ast.comprehension):
            out += node.ifs
    return out


def key_reads(node: ast.AST) -> Iterator[tuple[ast.expr, ast.AST, ast.expr | None]]:
    """The key nodes ``node`` reads a mapping or the environment with, each with its
    read (the subscript, the call, the ``in``) and the mapping read when it is one
    (``x["K"]``, ``x.get("K")``, ``"K" in x``: ``x``; ``getenv("K")``: None)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Subscript):
            yield sub.slice, sub, sub.value
        elif isinstance(sub, ast.Call):
            func = sub.func
            mapping = func.value if isinstance(func, ast.Attribute) else None
            for arg in sub.args[:2]:
                yield arg, sub, mapping
        elif isinstance(sub, ast.Compare) and isinstance(sub.ops[0], ast.In | ast.NotIn):
            yield sub.left, sub, sub.comparators[0]


def _key_of(node: ast.AST) -> list[Key]:
    """The string (and bytes) literals ``node`` reads a mapping or the environment with."""
    return _strings([key for key, _read, _mapping in key_reads(node)])


def _strings(nodes: list[ast.expr]) -> list[Key]:
    return [
        n.value
        for n in nodes
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str | bytes)
        and 0 < len(n.value) <= 80
    ]


def _holding(func: ast.AST, lines: set[int]) -> list[ast.expr]:
    """The conditions of the ``if`` / ``while`` statements of ``func`` whose body or
    ``else`` holds one of ``lines`` (a changed ``else`` runs when its condition fails)."""

    def holds(body: list[ast.stmt]) -> bool:
        return any(st.lineno <= n <= (st.end_lineno or st.lineno) for st in body for n in lines)

    return [
        node.test
        for node in ast.walk(func)
        if isinstance(node, ast.If | ast.While) and (holds(node.body) or holds(node.orelse))
    ]


def _names(nodes: list[ast.expr]) -> tuple[set[str], set[str]]:
    """The names and the attributes of ``self`` that ``nodes`` load."""
    names: set[str] = set()
    attrs: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                names.add(sub.id)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                if sub.value.id in ("self", "cls"):
                    attrs.add(sub.attr)
    return names, attrs


def _assigned(func: ast.AST, names: set[str]) -> Iterator[ast.expr]:
    """The values assigned in ``func`` to one of ``names``."""
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            targets = [n for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            if any(t.id in names for t in targets):
                yield node.value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
            target = node.target
            if isinstance(target, ast.Name) and target.id in names and node.value is not None:
                yield node.value


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = func.args
    return {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]} - {"self", "cls"}


def _read(source: str, lines: list[int]) -> tuple[list[Key], list[Key], list[str]]:
    """(keys steered by the changed conditions, the changed functions' other keys, the
    parameters and ``self`` attributes the changed conditions test) of ``source``."""
    tree = _parse(source) if lines else None
    if tree is None:
        return [], [], []
    wanted = set(lines)
    steered: list[Key] = []
    other: list[Key] = []
    params: list[str] = []
    for func in _functions(tree, wanted):
        names, attrs = _names(_tests(func, wanted))
        for value in _assigned(func, names):
            steered += _key_of(value)
        for test in _tests(func, wanted):
            steered += _key_of(test)  # ``if env.get("K")``, ``if "K" in env``
        for test in _holding(func, wanted):  # ``if "t" in sig: ... else: <changed>``
            steered += [k for k in _key_of(test) if k not in steered]
        params += sorted(names & _params(func)) + sorted(attrs)
        other += [k for stmt in func.body for k in _key_of(stmt)]  # not its annotations
    return steered, other, params


def read_keys(
    head: str, parent: str | None, changed: list[int], removed: list[int]
) -> tuple[tuple[Key, ...], tuple[str, ...], tuple[Key, ...]]:
    """The keys the changed functions read (those a changed condition tests first), the
    parameters a changed condition tests, and those keys and parameters the changed
    conditions steer to, from the head's changed lines and the parent's lines they
    replace."""
    steered, other, params = _read(head, changed)
    if parent is not None:
        s, o, p = _read(parent, removed)
        steered, other, params = steered + s, other + o, params + p
    keys = list(dict.fromkeys([*steered, *other]))[:MAX_KEYS]
    aimed: list[Key] = [*dict.fromkeys(steered), *dict.fromkeys(params)]
    return tuple(keys), tuple(dict.fromkeys(params)), tuple(aimed)


# ---- the copies ----


def _parts(node: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """The parts of a dict literal or a call, each as (first node, last node) in order
    of the text."""
    if isinstance(node, ast.Dict):  # not one with ``**x``: its span starts after the stars
        if any(k is None for k in node.keys):
            return []
        return [(k, v) for k, v in zip(node.keys, node.values, strict=True) if k is not None]
    if isinstance(node, ast.Call):
        parts: list[tuple[ast.AST, ast.AST]] = [(a, a) for a in node.args]
        parts += [(k, k) for k in node.keywords]
        return sorted(parts, key=lambda p: (getattr(p[0], "lineno", 0), p[0].col_offset))  # type: ignore[attr-defined]
    return []


def _offset(rows: list[str], line: int, col: int) -> int:
    """The character offset of a line and a UTF-8 column in ``rows`` (with line ends)."""
    before = sum(len(r) for r in rows[: line - 1])
    return before + len(rows[line - 1].encode("utf-8")[:col].decode("utf-8", "replace"))


def _without(rows: list[str], node: ast.expr, at: int) -> str | None:
    """The source of ``node`` (a dict or a call) without its part ``at``: from the part
    to the next one, or from the one before to its end when it is the last."""
    parts = _parts(node)
    if not parts or at >= len(parts):
        return None
    first, last = parts[at]
    start = _offset(rows, node.lineno, node.col_offset)
    end = _offset(rows, node.end_lineno or node.lineno, node.end_col_offset or 0)
    text = "".join(rows)[start:end]

    def begin(n: ast.AST) -> int:
        return _offset(rows, n.lineno, n.col_offset) - start  # type: ignore[attr-defined]

    def finish(n: ast.AST) -> int:
        return _offset(rows, n.end_lineno, n.end_col_offset) - start  # type: ignore[attr-defined]

    if at + 1 < len(parts):
        return text[: begin(first)] + text[begin(parts[at + 1][0]) :]
    if at > 0:
        return text[: finish(parts[at - 1][1])] + text[finish(last) :]
    return text[: begin(first)] + text[finish(last) :]


def _key(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _any_key(node: ast.AST | None) -> Key | None:
    """A string or bytes key."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        return node.value
    return None


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _drops(
    func: ast.AST, rows: list[str], keys: tuple[Key, ...], params: tuple[str, ...]
) -> list[tuple[float, Input, str]]:
    """(rank, input, replacement source) of each part of the test's input that can be
    left out; the rank is the key's or the parameter's place (steered ones first). A
    key the test gives in more than one place (a dict literal, then ``d[K] = v`` on its
    copy) is also left out of all of them at once, first."""
    rank = {k: n for n, k in enumerate(keys)}
    prank = {p: n for n, p in enumerate(params)}
    out: list[tuple[float, Input, str]] = everywhere(func, rows, rank)
    for node in ast.walk(func):
        if isinstance(node, ast.Dict):
            for at, key in enumerate(node.keys):
                name = _any_key(key)
                if name in rank:
                    new = _without(rows, node, at)
                    out += [(rank[name], Input(node, name), new)] if new is not None else []
        elif isinstance(node, ast.Call):
            callee = _callee(node)
            if callee == "setenv" and node.args and _key(node.args[0]) in rank:
                name = str(_key(node.args[0]))
                receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
                if receiver is not None:
                    start = _offset(rows, receiver.lineno, receiver.col_offset)
                    end = _offset(rows, receiver.end_lineno or 0, receiver.end_col_offset or 0)
                    new = f"{''.join(rows)[start:end]}.delenv({name!r}, raising=False)"
                    out.append((rank[name], Input(node, name), new))
                continue
            parts = _parts(node)
            for keyword in node.keywords:
                if keyword.arg is None:
                    continue
                if callee == "dict" and keyword.arg in rank:
                    order = rank[keyword.arg]
                elif keyword.arg in prank:
                    order = prank[keyword.arg]
                else:
                    continue
                at = next(n for n, p in enumerate(parts) if p[0] is keyword)
                new = _without(rows, node, at)
                out += [(order, Input(node, keyword.arg), new)] if new is not None else []
    return out


def _given(func: ast.AST, key: Key) -> list[tuple[ast.AST, str]]:
    """The places the test ``func`` gives ``key``: (the node, the source that leaves it
    out) for a dict literal's entry (``None``: the dict without it, made later) and a
    statement ``x[key] = v`` (made ``x.pop(key, None)``)."""
    out: list[tuple[ast.AST, str]] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Dict) and any(_any_key(k) == key for k in node.keys):
            out.append((node, ""))
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript)
            and _any_key(node.targets[0].slice) == key
        ):
            target = ast.unparse(node.targets[0].value)
            out.append((node, f"{target}.pop({key!r}, None)"))
    return out


def everywhere(
    func: ast.AST, rows: list[str], rank: dict[Key, int]
) -> list[tuple[float, Input, str]]:
    """For each read key the test gives in more than one place: the span from the first
    place to the last with the key left out of every one of them, as one input."""
    out: list[tuple[float, Input, str]] = []
    text = "".join(rows)
    for key, order in rank.items():
        places = _given(func, key)
        if len(places) < 2 or any(not isinstance(n, ast.Dict | ast.Assign) for n, _ in places):
            continue
        spans: list[tuple[int, int, str, ast.Dict | ast.Assign]] = []
        for node, new in places:
            assert isinstance(node, ast.Dict | ast.Assign)
            a = _offset(rows, node.lineno, node.col_offset)
            b = _offset(rows, node.end_lineno or node.lineno, node.end_col_offset or 0)
            if isinstance(node, ast.Dict):
                at = next(i for i, k in enumerate(node.keys) if _any_key(k) == key)
                new = _without(rows, node, at) or ""
            spans.append((a, b, new, node))
        spans.sort(key=lambda x: x[0])
        if not all(x[1] <= y[0] for x, y in zip(spans, spans[1:], strict=False)) or any(
            not new for _a, _b, new, _n in spans
        ):
            continue  # one inside another (a nested dict): not one edit
        start, end = spans[0][0], spans[-1][1]
        edited = text[start:end]
        for a, b, new, _node in reversed(spans):
            edited = edited[: a - start] + new + edited[b - start :]
        first, last = spans[0][3], spans[-1][3]
        whole = ast.Constant(value=None)
        whole.lineno, whole.col_offset = first.lineno, first.col_offset
        whole.end_lineno, whole.end_col_offset = last.end_lineno, last.end_col_offset
        out.append((order - 0.5, Input(whole, key), edited))
    return out


def drop_variants(
    source: str,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    keys: tuple[Key, ...],
    params: tuple[str, ...],
) -> list[tuple[Input, str]]:
    """Each part of the test ``func`` (in the module ``source``) that can be left out, as
    the node a copy replaces and the source put there, those steered by the change
    first, at most ``MAX_DROPS``."""
    if not keys and not params:
        return []
    rows = source.splitlines(keepends=True)
    found = _drops(func, rows, keys, params)
    found.sort(key=lambda d: d[0])  # stable: the test's order within a rank
    seen: set[str] = set()
    out: list[tuple[Input, str]] = []
    for _rank, where, new in found:
        if new not in seen:
            seen.add(new)
            out.append((where, new))
    return out[:MAX_DROPS]


def leaving_out_first(
    nodes: list[str], sources: dict[str, str], keys: tuple[Key, ...], params: tuple[str, ...]
) -> list[str]:
    """The test node ids ``nodes`` with those first whose test holds a part the changed
    conditions steer to (``keys``, ``params``: ``read_keys``' third) that a copy can
    leave out, the others after them in their order (the variants' budget is shared)."""
    if not keys and not params:
        return nodes

    def holds(func: ast.AST, source: str) -> bool:
        return bool(_drops(func, source.splitlines(keepends=True), keys, params))

    return first_holding(nodes, sources, holds)


def first_holding(
    nodes: list[str], sources: dict[str, str], holds: Callable[[ast.AST, str], bool]
) -> list[str]:
    """The test node ids ``nodes`` with those first whose test function ``holds`` (with
    its module's source) accepts, the others after them, each in their order."""
    held: dict[tuple[str, str], bool] = {}
    trees: dict[str, ast.Module | None] = {}

    def where(node: str) -> tuple[str, str]:
        rel, _, rest = node.partition("::")
        return rel, rest.split("[", 1)[0].replace("::", ".")

    for node in nodes:
        rel, qualname = where(node)
        if (rel, qualname) in held:
            continue
        if rel not in trees:
            trees[rel] = _parse(sources.get(rel, ""))
        func = _def(trees[rel], qualname)
        held[rel, qualname] = func is not None and holds(func, sources.get(rel, ""))
    first = [n for n in nodes if held.get(where(n))]
    return first + [n for n in nodes if n not in first]


def _def(tree: ast.Module | None, qualname: str) -> ast.AST | None:
    body: list[ast.stmt] = tree.body if tree is not None else []
    found: ast.AST | None = None
    for part in qualname.split("."):
        named = [
            n
            for n in body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and n.name == part
        ]
        if not named:
            return None
        found = named[-1]
        body = named[-1].body
    return found


# ---- the differential generator's inputs ----


def _left_out_source(source: str | None, keys: tuple[Key, ...]) -> list[tuple[int, str]]:
    """(rank, source) of the dict literal ``source`` without one entry whose key is one
    of ``keys`` (the steered ones first)."""
    tree = _parse(source) if source and source.lstrip().startswith("{") else None
    node = tree.body[0] if tree is not None and len(tree.body) == 1 else None
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Dict):
        return []
    rows = str(source).splitlines(keepends=True)
    rank = {k: n for n, k in enumerate(keys)}
    out: list[tuple[int, str]] = []
    for at, key in enumerate(node.value.keys):
        name = _any_key(key)
        if name in rank:
            new = _without(rows, node.value, at)
            out += [(rank[name], new)] if new is not None else []
    return out


def left_out(candidates: list[Candidate], source: str, lines: list[int]) -> list[Candidate]:
    """The differential's inputs with one part the changed lines read left out: an entry
    of a dict argument (of the call or of its receiver's constructor) whose key the
    changed function reads, a keyword argument a changed condition tests; at most
    ``MAX_DROPS``, the steered keys first."""
    keys, params, _aimed = read_keys(source, None, lines, [])
    if not keys and not params:
        return []
    found: list[tuple[int, Candidate]] = []
    for c in candidates[:MAX_DROPS]:
        for i, arg in enumerate(c.args):
            for rank, new in _left_out_source(arg, keys):
                found.append((rank, replace(c, args=(*c.args[:i], new, *c.args[i + 1 :]))))
        if c.ctor is not None:
            args, kwargs = c.ctor
            for i, arg in enumerate(args):
                for rank, new in _left_out_source(arg, keys):
                    ctor = ((*args[:i], new, *args[i + 1 :]), kwargs)
                    found.append((rank, replace(c, ctor=ctor)))
        for j, (key, _value) in enumerate(c.kwargs):
            if key in params:
                kwargs = (*c.kwargs[:j], *c.kwargs[j + 1 :])
                found.append((params.index(key), replace(c, kwargs=kwargs)))
    found.sort(key=lambda f: f[0])
    made = list(dict.fromkeys(c for _rank, c in found))[:MAX_DROPS]
    return [replace(c, origin=f"{c.origin} (left out)") for c in made]
