"""Inputs searched where no input showed the change: counted variants of the agreeing ones.

Some changes show on few inputs: a hash whose first byte is zero (srptools 1.0.1 keeps the
inner hash of a password as bytes, so its leading zero byte is no longer dropped: one
password in 256), a number at a boundary the tests never hit, a text of a length no test
has. The project's inputs and the steered ones then all agree on both sides. When no
input of any changed function showed the change, the differential generator probes, for
each function where every usable input agreed (at most six), in runs of their own with a
short time (two a side), variants of those inputs along their literals: a string gets a
counter at its end (``'password'`` -> ``'password0'``, ``'password1'``, ...), a bytes
value the counter's digits, an integer a step up; at most ``PER_FUNCTION`` a function,
taken in turn from every literal of its first ``ITEMS`` agreeing inputs, so each gets its
share. A variant where the sides differ is a difference like any other (steady in each
side's two runs); its test ranks after the project's own inputs.

Read only: the variants are expression sources, evaluated by the side-runner.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from typing import Any

__all__ = ["PER_FUNCTION", "variants"]

PER_FUNCTION = 1500  # variants of one function's agreeing inputs
ITEMS = 3  # of its agreeing inputs, the first are varied (each literal gets its share)
MAX_TEXT = 40  # a longer string literal is data, not a name or a word: left as it is
MAX_INT = 10**9
ORIGIN = "typed"  # ranked with the drawn and retyped inputs, after the project's own


def _sites(source: str | None) -> int:
    """How many literals of ``source`` can be counted up."""
    return sum(1 for _ in _literals(source))


def _literals(source: str | None) -> Iterator[ast.Constant]:
    if not source:
        return
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and _countable(node.value):
            yield node


def _countable(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str | bytes):
        return 0 < len(value) <= MAX_TEXT
    return isinstance(value, int) and abs(value) < MAX_INT


def _counted(value: Any, n: int) -> Any:
    if isinstance(value, str):
        return f"{value}{n}"
    if isinstance(value, bytes):
        return value + str(n).encode()
    return value + n + 1


def _count(source: str, site: int, n: int) -> str:
    """``source`` with its ``site``-th countable literal (in ``ast.walk`` order) counted."""
    tree = ast.parse(source, mode="eval")
    chosen = [node for node in ast.walk(tree) if isinstance(node, ast.Constant)]
    target = [node for node in chosen if _countable(node.value)][site]
    target.value = _counted(target.value, n)
    return ast.unparse(tree)


def _places(item: dict[str, Any]) -> list[tuple[tuple[str, ...], int]]:
    """Where an input's literals are: (the path to a source in the item, the literal's
    number in it), the call's arguments first, then the constructor's."""
    out: list[tuple[tuple[str, ...], int]] = []
    for i, arg in enumerate(item.get("args") or []):
        out += [(("args", str(i)), k) for k in range(_sites(arg))]
    for name, arg in sorted((item.get("kwargs") or {}).items()):
        out += [(("kwargs", name), k) for k in range(_sites(arg))]
    ctor = item.get("ctor")
    if isinstance(ctor, dict):
        for i, arg in enumerate(ctor.get("args") or []):
            out += [(("ctor", "args", str(i)), k) for k in range(_sites(arg))]
        for name, arg in sorted((ctor.get("kwargs") or {}).items()):
            out += [(("ctor", "kwargs", name), k) for k in range(_sites(arg))]
    return out


def _varied(item: dict[str, Any], where: tuple[str, ...], site: int, n: int) -> dict[str, Any]:
    out = {k: v for k, v in item.items() if k in ("args", "kwargs", "imports", "ctor", "steps")}
    if where[0] == "ctor":
        ctor = dict(out["ctor"])
        out["ctor"] = ctor
        holder, key = ctor, where[1:]
    else:
        holder, key = out, where
    if key[0] == "args":
        args = list(holder["args"])
        args[int(key[1])] = _count(str(args[int(key[1])]), site, n)
        holder["args"] = args
    else:
        kwargs = dict(holder["kwargs"])
        kwargs[key[1]] = _count(str(kwargs[key[1]]), site, n)
        holder["kwargs"] = kwargs
    out["origin"] = ORIGIN
    return out


def variants(items: list[dict[str, Any]], limit: int = PER_FUNCTION) -> list[dict[str, Any]]:
    """Up to ``limit`` inputs (the plan's form: args, kwargs, imports, ctor, steps) counted
    along the literals of ``items``: the first count of every literal of every item, then
    the second, and so on."""
    places = [(item, where, site) for item in items[:ITEMS] for where, site in _places(item)]
    if not places:
        return []
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for n, (item, where, site) in zip(range(limit * 2), itertools.cycle(places), strict=False):
        if len(out) >= limit:
            break
        varied = _varied(item, where, site, n // len(places))
        key = repr(sorted((k, repr(v)) for k, v in varied.items()))
        if key not in seen:
            seen.add(key)
            out.append(varied)
    return out
