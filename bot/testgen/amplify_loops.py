"""Amplified tests of calls made more than once at one line: inside a loop over a table
of cases (``for text, expected in CASES:``, a ``with self.subTest(...)`` in it) or as
the element of a list comprehension.

The loop is kept whole; each value the call gives is collected as the loop runs
(``got.append(parse(text))``) and, after the loop, the values head gave are asserted
together (``assert got == [...]``) — or those up to the first iteration whose value
differs, when all of them would be too long to read. A list comprehension whose element
is the call is asserted as a whole (``assert [parse(t) for t in CASES] == [...]``).
"""

from __future__ import annotations

import ast
import typing
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.testgen.amplify_write import Difference

__all__ = ["comprehension_of", "looped_checks"]

SHOWN = 2000  # characters of the asserted list, at most
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# where a sub-expression runs only sometimes, or later: it is not hoisted out of there
_CONDITIONAL = (ast.BoolOp, ast.IfExp, ast.Lambda, *_COMPREHENSIONS)


def _values(outcomes: list[dict[str, Any]]) -> list[str] | None:
    if all(o.get("kind") == "value" for o in outcomes):
        return [str(o["value"]) for o in outcomes]
    return None


def _imports(outcomes: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(i for o in outcomes for i in o.get("imports") or []))


def _first_difference(mine: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> int:
    for i, outcome in enumerate(mine):
        if i >= len(theirs) or theirs[i] != outcome:
            return i
    return len(mine) - 1


def _listed(d: Difference) -> tuple[str, str] | str:
    """Head's values of every occurrence as a list's source (all of them, or those up to
    the first that differs when all would be too long) and how they are indexed."""
    if d.series is None:
        return "the call is inside a loop and its values per iteration are not known"
    mine, theirs = d.series
    values = _values(mine)
    if values is None:
        return "the call is inside a loop and not each of its values has a source form"
    whole = "[" + ", ".join(values) + "]"
    if len(whole) <= SHOWN:
        picked, index = whole, ""
    else:
        k = _first_difference(mine, theirs)
        picked, index = "[" + ", ".join(values[: k + 1]) + "]", f"[:{k + 1}]"
        if len(picked) > SHOWN:
            return "the call is inside a loop and its values are too long to assert"
    d.head = {"kind": "value", "value": picked, "imports": _imports(mine)}
    shown = _values(theirs)
    if shown is not None:
        d.parent = {"kind": "value", "value": "[" + ", ".join(shown) + "]"}
    return picked, index


def _parents(stmt: ast.stmt) -> dict[int, ast.AST]:
    return {id(c): p for p in ast.walk(stmt) for c in ast.iter_child_nodes(p)}


def _free_name(func: ast.AST, base: str) -> str:
    used = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(func) if isinstance(a, ast.arg)
    }
    for name in (base, f"{base}_values", f"nova_{base}"):
        if name not in used:
            return name
    return f"nova_{base}_{len(used)}"


class _Swap(ast.NodeTransformer):
    def __init__(self, old: ast.expr, new: ast.expr) -> None:
        self.old, self.new = old, new

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.old:
            return self.new
        visited: ast.AST = super().visit(node)
        return visited


def looped_checks(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    loop: tuple[list[ast.stmt], int],
    body: list[ast.stmt],
    index: int,
    target: ast.expr,
    d: Difference,
) -> list[ast.stmt] | str:
    """Collect the call's values in the loop and assert head's after it (the test is
    changed in place). A string says why it cannot be written."""
    listed = _listed(d)
    if isinstance(listed, str):
        return listed
    picked, sliced = listed
    stmt = body[index]
    parents = _parents(stmt)
    node: ast.AST = target
    while id(node) in parents:
        node = parents[id(node)]
        if isinstance(node, _CONDITIONAL):
            return "the call is inside a loop, in a part of its statement that runs only sometimes"
    got = _free_name(func, "got")
    collect = ast.parse(f"{got}.append({ast.unparse(target)})").body[0]
    if isinstance(stmt, ast.Assign) and stmt.value is target and len(stmt.targets) == 1:
        named = stmt.targets[0]
        if not isinstance(named, ast.Name):
            return "the call's value is unpacked in a loop"
        body.insert(index + 1, ast.parse(f"{got}.append({named.id})").body[0])
    elif isinstance(stmt, ast.Expr) and stmt.value is target:
        body[index] = collect
    else:  # the call taken out of its statement, which reads the value collected
        swapped = _Swap(target, ast.parse(f"{got}[-1]", mode="eval").body).visit(stmt)
        body[index] = typing.cast(ast.stmt, swapped)
        body.insert(index, collect)
    block, at = loop
    del block[at + 1 :]
    block.append(ast.parse(f"assert {got}{sliced} == {picked}").body[0])
    block.insert(at, ast.parse(f"{got} = []").body[0])
    d.head["asserted"] = f"{got}{sliced} ({ast.unparse(target)} in a loop)"
    return [collect]


def comprehension_of(stmt: ast.stmt, target: ast.expr, d: Difference) -> ast.expr | str | None:
    """The list comprehension whose element is the call (its value: head's values of the
    call, in order), None when the call is in no comprehension; a string says why the
    one it is in cannot be asserted."""
    parents = _parents(stmt)
    node: ast.AST = target
    while id(node) in parents:
        node = parents[id(node)]
        if isinstance(node, _COMPREHENSIONS):
            break
    else:
        return None
    if not isinstance(node, ast.ListComp) or node.elt is not target:
        return "the call is inside a comprehension, not as its element"
    if d.series is None:
        return "the call is inside a comprehension and its values are not known"
    mine, theirs = d.series
    values, shown = _values(mine), _values(theirs)
    if values is None:
        return "the call is inside a comprehension and not each of its values has a source form"
    picked = "[" + ", ".join(values) + "]"
    if len(picked) > SHOWN:
        return "the comprehension's values are too long to assert"
    d.head = {"kind": "value", "value": picked, "imports": _imports(mine)}
    if shown is not None:
        d.parent = {"kind": "value", "value": "[" + ", ".join(shown) + "]"}
    return node
