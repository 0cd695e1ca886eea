"""Amplified tests of calls made more than once at one line: inside a loop over a table
of cases (``for text, expected in CASES:``, a ``with self.subTest(...)`` in it) or as
the element of a list comprehension.

The loop is kept whole; each value the call gives is collected as the loop runs
(``got.append(parse(text))``) and, after the loop, the values head gave are asserted
together (``assert got == [...]``) — or, when all of them would be too long to read, the
value of the first iteration where the parent's differs (``assert got[132] == ...``;
only the part of it that differs when it is long itself: ``amplify_window``). A list
comprehension whose element is the call is asserted as a whole
(``assert [parse(t) for t in CASES] == [...]``), or its element that differs.
"""

from __future__ import annotations

import ast
import typing
from typing import TYPE_CHECKING, Any

from bot.testgen.amplify_window import part

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


def _listed(d: Difference, got: str) -> list[str] | str:
    """The assert after the loop: head's values of every occurrence as a list, or, when
    that is too long to read, of the occurrence where the parent's first differs (the
    part of it that differs, when that value alone is too long: ``amplify_window``)."""
    if d.series is None:
        return "the call is inside a loop and its values per iteration are not known"
    mine, theirs = d.series
    values = _values(mine)
    whole = "[" + ", ".join(values) + "]" if values is not None else ""
    if values is not None and len(whole) <= SHOWN:
        d.head = {"kind": "value", "value": whole, "imports": _imports(mine)}
        shown = _values(theirs)
        if shown is not None:
            d.parent = {"kind": "value", "value": "[" + ", ".join(shown) + "]"}
        d.head["asserted"] = got
        return [f"assert {got} == {whole}"]
    return _occurrence(d, got, _first_difference(mine, theirs))


def _occurrence(d: Difference, got: str, k: int) -> list[str] | str:
    """The assert of head's value at occurrence ``k`` of the call (``got[k] == ...``),
    or of how many times it was made when the parent made it another number of times
    and alike until then."""
    assert d.series is not None
    mine, theirs = d.series
    if k >= len(theirs) or mine[k] == theirs[k]:
        if len(mine) == len(theirs):
            return "the call is inside a loop and no occurrence of it differs"
        d.head = {"kind": "value", "value": str(len(mine)), "asserted": f"len({got})"}
        d.parent = {"kind": "value", "value": str(len(theirs))}
        d.head["why"] = (
            f"Nova: the loop makes the call {len(mine)} times ({len(theirs)} on the parent)"
        )
        return [f"assert len({got}) == {len(mine)}"]
    if (
        d.head.get("kind") == "object"
        and mine[d.index].get("kind") == "object"
        and d.head.get("facts")
        and (d.parent or {}).get("facts")
    ):  # a fact that differs: asserted alone; none known, no source form (below)
        return _fact_at(d, got, len(mine))
    if mine[k].get("kind") != "value":
        return (
            "the call is inside a loop and its value where the parent's differs has no source form"
        )
    found = part(f"{got}[{k}]", str(mine[k]["value"]), theirs[k])
    if found is None:
        return (
            "the call is inside a loop and where its value differs from the parent's is not known"
        )
    d.head = {"kind": "value", "value": found.value, "imports": _imports([mine[k]])}
    d.head["asserted"] = found.expr
    d.parent = {"kind": "value", "value": found.parent} if found.parent else theirs[k]
    why = _first_where(k, len(mine))
    if not found.whole:
        why += "\nNova: only the part of its long value where they differ is asserted"
    d.head["why"] = why
    return [found.check]


def _fact_at(d: Difference, got: str, calls: int) -> list[str]:
    """The fact that differs of the object the call gave at its first occurrence where
    the parent's differs (``d.index``; ``d.head`` holds that fact alone)."""
    expr, shown, imports = d.head["facts"][0]
    where = expr.replace("{r}", f"{got}[{d.index}]")
    d.head = {"kind": "value", "value": shown, "imports": list(imports), "asserted": where}
    d.parent = {"kind": "value", "value": d.parent["facts"][0][1]}
    d.head["why"] = _first_where(d.index, calls)
    return [f"assert {where} == {shown}"]


def _first_where(k: int, calls: int) -> str:
    return f"Nova: call {k + 1} of {calls} in the loop is the first where the parent's differs"


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
    stmt = body[index]
    parents = _parents(stmt)
    node: ast.AST = target
    while id(node) in parents:
        node = parents[id(node)]
        if isinstance(node, _CONDITIONAL):
            return "the call is inside a loop, in a part of its statement that runs only sometimes"
    got = _free_name(func, "got")
    checks = _listed(d, got)
    if isinstance(checks, str):
        return checks
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
    asserts = [ast.parse(check).body[0] for check in checks]
    block += asserts
    d.head["check"] = ast.unparse(asserts[-1])
    block.insert(at, ast.parse(f"{got} = []").body[0])
    d.head["asserted"] = f"{d.head['asserted']} ({ast.unparse(target)} in a loop)"
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
    picked = "[" + ", ".join(values) + "]"  # when long, the part that differs (``_checks``)
    d.head = {"kind": "value", "value": picked, "imports": _imports(mine)}
    if shown is not None:
        d.parent = {"kind": "value", "value": "[" + ", ".join(shown) + "]"}
    return node
