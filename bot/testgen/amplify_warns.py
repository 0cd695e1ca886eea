"""A project test that warns otherwise on the parent (test amplification).

Many releases deprecate something the old tests still use: a class attribute renamed, a
parameter replaced, a default about to change. The tests pass on both sides and every
value they observe is alike; what differs is that the head's code now warns (or stopped
warning: a deprecation fixed). The observation plugin hears the warnings each test's
body gives (``amplify_plugin._teed``: category, its first built-in class, message; not a
module's import-time warnings, not ``ResourceWarning``s, not those the test expects with
``pytest.warns`` itself). Where a warning is heard in both of head's runs and in neither
of the parent's (or the other way round), the test is written again whole, its body
under

- ``with pytest.warns(Category, match=...)``: head warns, the parent does not;
- ``warnings.filterwarnings("error", message=..., category=Category)``: the parent
  warned, head does not (the parent raises it).

The category asserted is the warning's first built-in class (a project's own category
subclasses one, and may be new: the parent could not import it); only the usual ones
(deprecations, future changes, user and runtime warnings). A message with an address, a
temporary path or an id is not pinned. The gates run the test on the parent as for any
other; a parent that fails because a name is missing is no catch (``names_missing``).
"""

from __future__ import annotations

import ast
import re
from typing import Any, Protocol

from bot.testgen.amplify_write import (
    Difference,
    Written,
    _bind_params,
    _written,
    changed_name,
    seeding,
)

__all__ = ["WARNED", "differing_first", "warned_differences", "warned_first", "warned_test"]

WARNED = "warns"  # a Difference's outcome kind: what the test's body warned
WARNED_FIRST = 4  # tests confirmed for their warnings alone, of the few confirmed
PATTERN = 200  # characters of the message matched (its start)
_CATEGORIES = {
    "DeprecationWarning",
    "PendingDeprecationWarning",
    "FutureWarning",
    "UserWarning",
    "RuntimeWarning",
}
# a message that differs from run to run: an address, a temporary path, an id, a clock
_NOT_STEADY = re.compile(
    r"0x[0-9a-fA-F]{4,}|/tmp/|pytest-of-|/var/folders/|\\Temp\\|[0-9a-f]{8}-[0-9a-f]{4}-"
    r"|\d{1,2}:\d\d:\d\d"
)


class _Observed(Protocol):
    tests: dict[str, dict[str, Any]]


def _heard(obs: _Observed, node: str) -> list[tuple[str, str]]:
    """What the test's body warned in that run (category, message), in order, the
    pinnable ones only."""
    rows = (obs.tests.get(node) or {}).get("warned") or []
    out = []
    for row in rows:
        if not isinstance(row, list) or len(row) != 3:
            continue
        base, message = str(row[0]), str(row[2])
        if base in _CATEGORIES and message.strip() and not _NOT_STEADY.search(message):
            out.append((base, message))
    return out


def _passed(runs: list[_Observed], node: str) -> bool:
    return all((o.tests.get(node) or {}).get("passed") for o in runs)


def warned_first(
    seen: list[str], ran: list[str], head: _Observed, parent: _Observed, cap: int
) -> list[str]:
    """The tests confirmed by a second run on each side: those whose values differed
    (``seen``, in order), with room kept for a few whose warnings differed in one run
    of each side."""
    apart = [
        n
        for n in ran
        if _passed([head, parent], n) and set(_heard(head, n)) != set(_heard(parent, n))
    ]
    apart = [n for n in apart if n not in seen][:WARNED_FIRST]
    return seen[: max(0, cap - len(apart))] + apart


def warned_differences(
    nodes: list[str],
    found: list[list[Difference]],
    heads: list[_Observed],
    parents: list[_Observed],
    notes: list[str],
) -> list[list[Difference]]:
    """``found`` with, for each test of ``nodes`` that passed in every run, a warning
    heard in every run of one side and in none of the other (after its values'
    differences: an assert on a value says more)."""
    by_node = {ds[0].node: ds for ds in found if ds}
    out = list(found)
    count = 0
    for node in nodes:
        if not _passed([*heads, *parents], node):
            continue
        head = [_heard(o, node) for o in heads]
        parent = [_heard(o, node) for o in parents]
        d = _difference(node, head, parent, heads[0])
        if d is None:
            continue
        count += 1
        if node in by_node:
            by_node[node].append(d)
        else:
            out.append([d])
    if count:
        notes.append(f"amplify: {count} test(s) warned otherwise on the parent")
    return out


def _difference(
    node: str,
    head: list[list[tuple[str, str]]],
    parent: list[list[tuple[str, str]]],
    first: _Observed,
) -> Difference | None:
    always = [w for w in head[0] if all(w in h for h in head[1:])]
    never = {w for p in parent for w in p}
    new = [w for w in always if w not in never]
    gone_always = [w for w in parent[0] if all(w in p for p in parent[1:])]
    gone = [w for w in gone_always if not any(w in h for h in head)]
    if new:
        base, message = new[0]
        mine = {"kind": WARNED, "warns": [base, message], "value": f"{base}({message!r})"}
        theirs = {"kind": WARNED, "value": f"no {base} of that message"}
    elif gone:
        base, message = gone[0]
        mine = {"kind": WARNED, "unwarns": [base, message], "value": f"no {base}"}
        theirs = {"kind": WARNED, "value": f"{base}({message!r})"}
    else:
        return None
    case = first.tests.get(node) or {}
    d = Difference(node, 0, "its body", 0, mine, theirs, case.get("params"))
    d.indices = case.get("indices")
    d.seeded = tuple(str(g) for g in case.get("seeded") or [])
    return d


def warned_test(func: ast.FunctionDef | ast.AsyncFunctionDef, d: Difference) -> Written | str:
    """The whole test of ``d`` (a parametrized case's arguments bound at its start), its
    body under head's warning: expected (``pytest.warns``) or made an error."""
    own = _own_params(func)
    params = {k: v for k, v in (d.params or {}).items() if k in own}
    # the function's own cases bound; a fixture's or a class mark's params stay as they
    # are (anyio's backends): the copy runs each, and the gates keep those that hold
    bound = _bind_params(func, params, d.indices) if params else []
    if isinstance(bound, str):
        return bound
    warns = d.head.get("warns")
    base, message = warns or d.head.get("unwarns") or ["", ""]
    if base not in _CATEGORIES:
        return "the warning's category is not one Nova asserts"
    pattern = re.escape(message[:PATTERN])
    body = func.body
    doc = body[:1] if body and _docstring(body[0]) else []
    rest = body[len(doc) :] or [ast.Pass()]
    if warns:
        imports = ["import pytest"]
        outer = ast.parse(f"with pytest.warns({base}, match={pattern!r}):\n    pass").body[0]
        assert isinstance(outer, ast.With)
        outer.body = rest
        func.body = [*doc, outer]
    else:
        imports = ["import warnings"]
        outer = ast.parse(
            "with warnings.catch_warnings():\n"
            f"    warnings.filterwarnings('error', message={pattern!r}, category={base})"
        ).body[0]
        assert isinstance(outer, ast.With)
        outer.body += rest
        func.body = [*doc, outer]
    for name, (shown, more) in reversed(bound):
        func.body.insert(len(doc), ast.parse(f"{name} = {shown}").body[0])
        imports += more
    imports += seeding(func, d)
    func.name = changed_name(func.name)
    comment = (
        f"Nova: amplified from {d.amplifies}; its body gives {d.head['value']} on the head, "
        f"{d.parent['value']} on the parent"
    )
    return _written(imports, comment, func)


def _own_params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names the function's own ``parametrize`` marks give."""
    names: set[str] = set()
    for deco in func.decorator_list:
        if isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("parametrize"):
            first = deco.args[0] if deco.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names |= {n.strip() for n in first.value.split(",") if n.strip()}
            elif isinstance(first, ast.List | ast.Tuple):
                names |= {str(e.value) for e in first.elts if isinstance(e, ast.Constant)}
    return names


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def differing_first(
    order: list[str], facts: dict[str, dict[str, list[dict[str, Any]]]]
) -> list[str]:
    """The written test files in the order their checks run: those holding a test whose
    generator saw head and parent differ first (each keeps its place among them). A file
    none of whose tests differed on the parent can only be kept by the mutants, the
    longest check: behind it, the job's budget could end before a file that catches
    (the whole tests written here are checked after the generators' own)."""
    from bot.testgen.amplify import pins_behaviour  # (it imports this module)

    def differs(rel: str) -> bool:
        return any(pins_behaviour(f) for rows in (facts.get(rel) or {}).values() for f in rows)

    return [r for r in order if differs(r)] + [r for r in order if not differs(r)]
