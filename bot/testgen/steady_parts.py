"""The steady parts of a value that is not steady as a whole.

A value a test sees often holds one part of its run's own: a key made by ``uuid4()``, a
number the test drew with ``randint``, an id. Compared whole, such a value differs from
one run to the next and nothing of it is asserted, although the part the change is about
(a field that is None on the head, a key the head adds) is the same in every run.

``parts`` reads a value's source (what the side-runner or the observation plugin
rendered) into parts one or two levels deep: its type's name and the fields of a
``Name(field=...)`` repr (a dataclass's, a namedtuple's), a dict's keys and items, a
list's or tuple's length and elements. ``differing`` keeps the parts every run of the
head showed alike and returns the first (type names, then sizes and keys, then values;
the shallowest first) that each run of the parent shows otherwise, or does not reach
(it raised): an assert of that part alone passes on the head in every run and fails on
the parent in every run seen. Only parts that are plain literals are asserted (they need
no import and compare by value).

The differential's side-runner calls a function whose value read randomness (and nothing
else) a few times over (``probe_steady.repeated``); ``unpacked`` turns such an outcome
into the parts all those calls showed alike, an object's facts, which the differential
compares across its runs as it does any object's.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

__all__ = ["differing", "imported_first", "of_runs", "parted", "parts", "unlike", "unpacked"]

VALUE = "{r}"  # the value's place in a part's expression (as in probe_objects' facts)
DEPTH = 2  # levels of a value read into parts
ITEMS = 8  # elements of a list or tuple read
MAX_PARTS = 60  # parts of one value
MAX_SHOWN = 200  # characters of a part's source


def parts(source: str) -> dict[str, str] | None:
    """expression (``{r}`` for the value) -> the source of that part, in the order a
    test would assert them (shallowest first); None when ``source`` is not a value's."""
    try:
        tree = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: dict[str, str] = {}
    queue: list[tuple[ast.expr, str, int]] = [(tree, VALUE, 0)]
    while queue and len(out) < MAX_PARTS:
        node, expr, depth = queue.pop(0)
        inner = _inner(node, expr)
        if inner is None:  # a leaf: asserted whole when it is a literal
            if expr != VALUE and _literal(node):
                out[expr] = ast.unparse(node)
            continue
        facts, below = inner
        out.update(facts)
        if expr != VALUE and _literal(node) and len(ast.unparse(node)) <= MAX_SHOWN:
            out[expr] = ast.unparse(node)  # a container that is steady whole says the most
        if depth < DEPTH:
            queue += [(n, e, depth + 1) for n, e in below]
    return {e: s for e, s in out.items() if len(s) <= MAX_SHOWN}


def _inner(node: ast.expr, expr: str) -> tuple[dict[str, str], list[tuple[ast.expr, str]]] | None:
    """The facts a container shows of itself, and its parts; None for a leaf."""
    if isinstance(node, ast.Call) and not node.args and node.keywords:
        name = _called(node.func)
        if name is None or any(k.arg is None for k in node.keywords):
            return None
        # a dataclass's or namedtuple's repr: its fields by name
        below = [(k.value, f"{expr}.{k.arg}") for k in node.keywords if k.arg]
        return {f"type({expr}).__name__": repr(name)}, below
    if isinstance(node, ast.Call):
        name = _called(node.func)
        return ({f"type({expr}).__name__": repr(name)}, []) if name else None
    # a plain container: its type's name at the top only (below, a part's source says it)
    named = {f"type({expr}).__name__": repr(type(node).__name__.lower())} if expr == VALUE else {}
    if isinstance(node, ast.Dict):
        if any(k is None or not _literal(k) for k in node.keys):
            return None
        keys = [ast.unparse(k) for k in node.keys if k is not None]
        facts = {f"len({expr})": str(len(keys)), f"list({expr})": "[" + ", ".join(keys) + "]"}
        return {**named, **facts}, [
            (v, f"{expr}[{k}]") for k, v in zip(keys, node.values, strict=True)
        ]
    if isinstance(node, ast.List | ast.Tuple):
        below = [(e, f"{expr}[{i}]") for i, e in enumerate(node.elts[:ITEMS])]
        return {**named, f"len({expr})": str(len(node.elts))}, below
    return None


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return not isinstance(node, ast.Set)  # a set's source order is the run's own


def _rank(expr: str) -> tuple[int, int]:
    """Type names first, then sizes and keys, then values; the shallowest first."""
    kind = 0 if "__name__" in expr else 1 if expr.startswith(("len(", "list(")) else 2
    return kind, expr.count(".") + expr.count("[")


def _parts_of(outcome: dict[str, Any]) -> dict[str, str] | None:
    """A value's parts; an object's facts (those that need no import)."""
    if outcome.get("kind") == "object":
        return {str(f[0]): str(f[1]) for f in outcome.get("facts") or [] if not f[2]}
    if outcome.get("kind") != "value":
        return None
    return parts(str(outcome.get("value", "")))


def of_runs(
    head: list[dict[Any, dict[str, Any]]],
    parent: list[dict[Any, dict[str, Any]]],
    key: object,
    outcome: Callable[[dict[str, Any]], dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``parted`` of the outcomes (``outcome`` of each observation) of the call ``key``
    in each run of a side (observations by call); None when a run did not make it."""
    if not all(key in r for r in [*head, *parent]):
        return None
    return parted([outcome(r[key]) for r in head], [outcome(r[key]) for r in parent])


def steady(outcomes: list[dict[str, Any]]) -> dict[str, str]:
    """The parts every outcome (all values) shows alike; {} when one is not a value."""
    seen = [_parts_of(o) for o in outcomes]
    if not seen or any(s is None for s in seen):
        return {}
    first = seen[0] or {}
    return {e: v for e, v in first.items() if all((s or {}).get(e) == v for s in seen[1:])}


def differing(
    head: list[dict[str, Any]], parent: list[dict[str, Any]]
) -> tuple[list[Any], list[Any] | None] | None:
    """(head's part, the parent's) as facts ``[expression, source, imports]``: the first
    part steady on every run of the head that every run of the parent shows with another
    value (the parent's first run's), or does not reach (None: it raised); None when
    there is none."""
    if len(head) < 2 or not parent:  # one run cannot tell a steady part
        return None
    mine = steady(head)
    theirs = [_parts_of(o) for o in parent]
    if any(p is None and o.get("kind") != "raises" for p, o in zip(theirs, parent, strict=True)):
        return None  # a parent run that neither gave a value nor raised tells nothing
    for expr in sorted(mine, key=_rank):
        shown = [p.get(expr, "") if p is not None else None for p in theirs]
        if "" in shown or mine[expr] in shown:
            continue  # a part the parent lacks is told by its type's or keys' part
        return [expr, mine[expr], []], None if shown[0] is None else [expr, shown[0], []]
    return None


def parted(
    head: list[dict[str, Any]], parent: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Outcomes of one call on each side's runs where one side's are not steady: head's
    and the parent's as objects with the one part that tells them apart (the parent's
    exception where it raised); None when no part does."""
    found = differing(head, parent)
    if found is None:
        return None
    mine, theirs = found
    shown = {"kind": "object", "facts": [mine], "repr": None}
    return shown, parent[0] if theirs is None else {**shown, "facts": [theirs]}


def unpacked(run: dict[str, Any]) -> None:
    """Each outcome of a side-runner's run that read randomness, with the values of its
    repeated calls, made an object of the parts those calls showed alike, and the
    values each other part took (``others``), in place."""
    functions = run.get("functions")
    for entry in functions.values() if isinstance(functions, dict) else []:
        for result in entry.get("results") or []:
            values = result["outcome"].get("values")
            seen = _facts_seen(values) if isinstance(values, list) else []
            facts = [[e, v[0], i] for e, v, i in seen if len(set(v)) == 1]
            if facts and facts[0][0] == f"type({VALUE}).__name__":
                others = {e: v for e, v, _ in seen if len(set(v)) > 1}
                shown = {"kind": "object", "type": facts[0][1], "facts": facts}
                result["outcome"] = {**shown, "others": others} if others else shown


def _facts_seen(values: list[dict[str, Any]]) -> list[tuple[str, list[str], list[str]]]:
    """(expression, its source in each value, imports) of the facts every value shows,
    the type's first."""
    if all(v.get("kind") == "object" for v in values):
        shown = [{str(f[0]): f for f in v.get("facts") or []} for v in values]
    else:
        found = [_parts_of(v) for v in values]
        if any(f is None for f in found):
            return []
        shown = [{e: [e, s, []] for e, s in (f or {}).items()} for f in found]
    order = sorted(shown[0], key=_rank) if values[0].get("kind") == "value" else list(shown[0])
    return [
        (e, [str(s[e][1]) for s in shown], list(shown[0][e][2]))
        for e in order
        if all(e in s for s in shown)
    ]


def unlike(
    ours: dict[str, list[Any]], theirs: dict[str, list[Any]], runs: list[str]
) -> dict[str, list[Any]]:
    """expression -> the parent's first fact, of head's steady facts (``ours``) that the
    parent's runs (outcomes as JSON, each of repeated calls: ``unpacked``) show in every
    run, not alike (they are not in ``theirs``), and never with head's value."""
    seen = [json.loads(r) if r.startswith("{") else {} for r in runs]
    if not all(s.get("others") for s in seen):  # two runs alone are too few to tell
        return {}
    # each run's values of a fact: the one it showed, or those its repeated calls took
    shown = [
        {**(s.get("others") or {}), **{str(f[0]): [f[1]] for f in s.get("facts") or []}}
        for s in seen
    ]
    out = {}
    for expr, fact in ours.items():
        if expr in theirs or not shown or any(expr not in s for s in shown):
            continue
        if all(fact[1] not in s[expr] for s in shown):
            out[expr] = [expr, shown[0][expr][0], []]
    return out


def imported_first(text: str, after: str, module: str) -> str:
    """A test module's source with ``import <after>`` before its first import: the
    module it tests imports only after that one (a circular import its package resolves
    in that order, ``probe_steady.imported``)."""
    if not after:
        return text
    tree = ast.parse(text)
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    first = next((n for n in imports if getattr(n, "module", "") != "__future__"), None)
    if first is None:
        return text
    lines = text.split("\n")
    line = f"import {after}  # {module} imports only after it (a circular import)"
    return "\n".join([*lines[: first.lineno - 1], line, *lines[first.lineno - 1 :]])
