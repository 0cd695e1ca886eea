"""Steered values put where the code reads them, with the switches that let it run.

A changed table entry (``"strike": 9`` added to ``ATTRIBUTES``) is read by a function
that looks up each item of a list it is given (``for attr in attrs: ATTRIBUTES[attr]``),
often only when a switch lets it (``force_color=True``; without it the function returns
early). Steering the tests' inputs by the changed lines' strings appends a string to a
string, which never makes such an item, and keeps the tests' switches as they are. So:

- **into containers**: each changed string (integer) put in place of the strings
  (integers) of a list, tuple or set argument of the tests (``attrs=['bold']`` also as
  ``attrs=['strike']`` and ``attrs=['bold', 'strike']``), and as a key of a dict whose keys
  are of its type;
- **switches flipped**: each steered input (and the first few of the tests) also with
  one of the function's switches flipped: a parameter whose default is ``True`` or
  ``False``, or ``None`` with a ``bool`` annotation (``force_color: bool | None = None``
  given ``True``), at most three of them, in the order the function declares them.

Read, never run: the side-runner calls them like any input."""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import replace
from functools import partial

from bot.testgen.extremes import each_argument
from bot.testgen.inputs import Candidate
from bot.testgen.retype import called_def

__all__ = ["MAX_PLACED", "MAX_SWITCHED", "into_containers", "switched", "switches"]

MAX_PLACED = 24  # inputs with a changed string as an item, per function
MAX_SWITCHED = 16  # steered inputs with a switch flipped, per function
_SWITCHES = 3


def into_containers(candidates: list[Candidate], values: list[str | int]) -> list[Candidate]:
    """The tests' list, tuple and set arguments of strings (of integers) with each changed
    string (integer) as their only item and as one more item, and their dicts with string
    keys with it as a key (the first key's value); the first inputs of each value first."""
    per_value: list[list[Candidate]] = []
    for v in values:
        made: list[Candidate] = []
        for c in candidates:
            made += each_argument(c, partial(_with_item, item=v), "steered item")
        per_value.append(list(dict.fromkeys(made)))
    seen = set(candidates)
    out: list[Candidate] = []
    for i in range(max((len(g) for g in per_value), default=0)):
        for group in per_value:  # the values take turns
            if i < len(group) and group[i] not in seen:
                seen.add(group[i])
                out.append(group[i])
    return out[:MAX_PLACED]


def _with_item(source: str | None, item: str | int) -> list[str]:
    try:
        value = ast.literal_eval(source) if source else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return []
    if not isinstance(value, list | tuple | set | frozenset | dict) or not value:
        return []
    if not all(type(v) is type(item) for v in value) or item in value:
        return []
    if isinstance(value, dict):
        first = next(iter(value.values()))
        return [repr({item: first}), repr({**value, item: first})]
    if isinstance(value, list):
        return [repr([item]), repr([*value, item])]
    if isinstance(value, tuple):
        return [repr((item,)), repr((*value, item))]
    # a set written in sorted order: its repr's order is the hash seed's
    either: list[set[str | int]] = [{item}, {*value, item}]
    return ["{" + ", ".join(repr(v) for v in sorted(one)) + "}" for one in either]


def defaulted(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
) -> list[tuple[ast.arg, ast.expr, int, bool]]:
    """The parameters of ``node`` that have a default (``self``/``cls`` left out): each
    with its default, its place among the positional arguments (-1: keyword only) and
    whether a call can give it by name (it is not positional-only)."""
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    if positional and positional[0].arg in ("self", "cls"):
        positional = positional[1:]
    pairs = [
        *zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True),
        *((p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None),
    ]
    place = {p.arg: i for i, p in enumerate(positional)}
    named = {p.arg for p in a.args} | {p.arg for p in a.kwonlyargs}
    return [(p, d, place.get(p.arg, -1), p.arg in named) for p, d in pairs]


def switches(
    source: str, qualname: str, changed: Collection[int] = ()
) -> list[tuple[str, bool, int]]:
    """The switches of the function a call of ``qualname`` runs, each with its flipped
    value and its place among the positional arguments (-1: keyword only):
    ``strict=False`` -> ``('strict', True, 1)``; ``*, force: bool | None = None`` ->
    ``('force', True, -1)``. A parameter on a ``changed`` line may be new: the parent
    would refuse it (an unexpected keyword is no behaviour), so it is left out."""
    try:
        node = called_def(ast.parse(source), qualname)
    except SyntaxError:
        return []
    if node is None:
        return []
    out: list[tuple[str, bool, int]] = []
    for param, default, place, by_name in defaulted(node):
        if not by_name or not isinstance(default, ast.Constant):
            continue
        if param.lineno in changed:
            continue
        if isinstance(default.value, bool):
            out.append((param.arg, not default.value, place))
        elif default.value is None and param.annotation is not None:
            if "bool" in ast.unparse(param.annotation):
                out.append((param.arg, True, place))
    return out[:_SWITCHES]


def switched(
    candidates: list[Candidate], source: str, qualname: str, changed: Collection[int] = ()
) -> list[Candidate]:
    """``candidates`` (steered inputs) each with one of the function's switches flipped
    (given by keyword), the first inputs first."""
    flips = switches(source, qualname, changed)
    if not flips:
        return []
    out: list[Candidate] = []
    seen = set(candidates)
    for c in candidates:
        for name, value, index in flips:
            given = dict(c.kwargs)
            origin = f"{c.origin} (switched)"
            if 0 <= index < len(c.args):  # given by place
                if c.args[index] == repr(value):
                    continue
                args = (*c.args[:index], repr(value), *c.args[index + 1 :])
                made = replace(c, args=args, origin=origin)
            elif name in given:
                if given[name] == repr(value):
                    continue
                kwargs = tuple((k, repr(value) if k == name else v) for k, v in c.kwargs)
                made = replace(c, kwargs=kwargs, origin=origin)
            else:
                made = replace(c, kwargs=(*c.kwargs, (name, repr(value))), origin=origin)
            if made not in seen:
                seen.add(made)
                out.append(made)
    return out[:MAX_SWITCHED]
