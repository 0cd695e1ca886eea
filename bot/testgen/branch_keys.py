"""Inputs for a changed branch of a dispatch on a value: ``if header == b'upgrade': ...
elif header == b'sec-websocket-protocol': <changed>``. A test's text that holds the key of
one branch (``b"Upgrade: websocket"``) reaches that branch; the same text with that key
replaced by the key of the branch holding a changed line (``b"sec-websocket-protocol:
websocket"``) reaches the change. Read, never run."""

from __future__ import annotations

import ast

__all__ = ["branch_keys", "swapped"]

Key = str | bytes
MAX_SWAPPED = 12


def _key(test: ast.expr) -> tuple[str, Key] | None:
    """(the compared expression, the key) of ``x == 'k'`` / ``'k' == x``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if not isinstance(test.ops[0], ast.Eq):
        return None
    left, right = test.left, test.comparators[0]
    for subject, key in ((left, right), (right, left)):
        value = key.value if isinstance(key, ast.Constant) else None
        if isinstance(value, str | bytes) and value:
            return ast.unparse(subject), value
    return None


def _lines(nodes: list[ast.stmt]) -> set[int]:
    return {n for node in nodes for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)}


def branch_keys(source: str, qualname: str, changed: list[int]) -> list[tuple[list[Key], Key]]:
    """For each ``if``/``elif`` chain of the function that compares one expression with
    keys: (the keys of the other branches, the key of a branch that holds a changed line)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    parts = qualname.split(".")
    scope: list[ast.stmt] = tree.body
    fn: ast.AST | None = None
    for part in parts:
        fn = next(
            (
                n
                for n in scope
                if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and n.name == part
            ),
            None,
        )
        if fn is None:
            return []
        scope = fn.body
    out: list[tuple[list[Key], Key]] = []
    inner: set[int] = set()  # the ``elif`` nodes of a chain already read
    for node in ast.walk(fn) if fn is not None else []:
        if not isinstance(node, ast.If) or id(node) in inner:
            continue
        chain: list[tuple[str, Key, set[int]]] = []
        at: ast.If | None = node
        while at is not None:
            found = _key(at.test)
            if found is not None:
                chain.append((*found, _lines(at.body)))
            nxt = at.orelse[0] if len(at.orelse) == 1 else None
            at = nxt if isinstance(nxt, ast.If) else None
            if at is not None:
                inner.add(id(at))
        subjects = {subject for subject, _, _ in chain}
        if len(chain) < 2 or len(subjects) != 1:
            continue
        for _, key, body in chain:
            if body & set(changed):
                others = [k for _, k, _ in chain if k != key and type(k) is type(key)]
                out.append((others, key))
    return out


def swapped(value: object, keys: list[tuple[list[Key], Key]]) -> list[Key]:
    """``value`` (a test's text) with a key of another branch it holds (in any case: the
    code may lower it first) replaced by the changed branch's key."""
    out: list[Key] = []
    for others, target in keys:
        for other in others:
            if not isinstance(value, str | bytes) or type(value) is not type(other):
                continue
            at = value.lower().find(other.lower())  # type: ignore[arg-type]
            if at < 0:
                continue
            made = value[:at] + target + value[at + len(other) :]  # type: ignore[operator]
            if made not in out:
                out.append(made)
    return out[:MAX_SWAPPED]
