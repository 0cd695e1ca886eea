"""Inputs steered towards the exceptions the changed lines name.

A change that adds a type to an ``except`` clause (``except (ValueError, OverflowError)``)
or a ``raise`` shows its new behaviour only on an input that makes that exception happen,
and the project's tests rarely hold one: nobody writes a test for a crash they have not
seen. Each exception type asks for a kind of input, made from the tests' own plain
arguments (a number, a string, a bytes value, a container):

- ``OverflowError`` (``ArithmeticError``): numbers past the machine's integer and float
  limits; in text, each run of letters and digits made a run of nines as long, one
  longer (an encoded number one digit past its width) and twenty long (past ``2**64``);
- ``ValueError``: the text empty or cut in half, a negative number;
- ``TypeError``: None, the text as bytes (or bytes as text), a number as text;
- ``KeyError`` / ``IndexError`` / ``LookupError``: empty containers, far indexes;
- ``ZeroDivisionError``: zero;  ``UnicodeError`` and its kinds: a byte or a character
  no codec takes;  ``AttributeError``: None.

Read, never run: the side-runner calls them like any input, and only a different outcome
on the parent makes a test."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import replace

from bot.testgen.inputs import Candidate

__all__ = ["MAX_EXTREME", "caught_types", "towards_exceptions"]

MAX_EXTREME = 48  # inputs made this way, per function
_TOKEN = re.compile(r"[A-Za-z0-9]{2,}")


def caught_types(source: str, lines: list[int]) -> list[str]:
    """The exception types an ``except`` clause or a ``raise`` on the changed lines names
    (``OverflowError`` of ``except (ValueError, OverflowError) as exc:``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    changed = set(lines)
    found: list[str] = []
    for node in ast.walk(tree):
        named: ast.expr | None = None
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            named = node.type
        elif isinstance(node, ast.Raise) and node.exc is not None:
            named = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if named is None:
            continue
        span = range(named.lineno, (named.end_lineno or named.lineno) + 1)
        if not changed.intersection(span):
            continue
        for part in named.elts if isinstance(named, ast.Tuple) else [named]:
            name = part.attr if isinstance(part, ast.Attribute) else getattr(part, "id", "")
            if name and name not in found:
                found.append(name)
    return found


def towards_exceptions(
    candidates: list[Candidate], source: str, lines: list[int]
) -> list[Candidate]:
    """The candidates' plain arguments changed towards what the changed lines catch or
    raise, the project's own inputs first, a few from each before more from any."""
    # the last type of a clause first: a type a change adds is most often put at its end
    named = caught_types(source, lines)[::-1]
    makers = [(name, _MAKERS[name]) for name in named if name in _MAKERS]
    if not makers:
        return []
    per_candidate: list[list[Candidate]] = []
    seen = set(candidates)
    for c in candidates:
        made: list[Candidate] = []
        for name, make in makers:
            origin = f"{c.origin} (towards {name})"
            for i, arg in enumerate(c.args):
                for value in _values(arg, make):
                    args = (*c.args[:i], value, *c.args[i + 1 :])
                    made.append(replace(c, args=args, origin=origin))
            for j, (key, arg) in enumerate(c.kwargs):
                for value in _values(arg, make):
                    kwargs = (*c.kwargs[:j], (key, value), *c.kwargs[j + 1 :])
                    made.append(replace(c, kwargs=kwargs, origin=origin))
        fresh = [m for m in dict.fromkeys(made) if m not in seen]
        seen.update(fresh)
        if fresh:
            per_candidate.append(fresh)
    out: list[Candidate] = []
    for group in per_candidate:  # a few of each first: the inputs differ more than the kinds
        out += group[:12]
    return out[:MAX_EXTREME]


def _values(source: str | None, make: Callable[[object], list[object]]) -> list[str]:
    try:
        value = ast.literal_eval(source) if source else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return []
    if value is None:
        return []
    return list(dict.fromkeys(repr(v) for v in make(value) if v != value))


def _huge(value: object) -> list[object]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [2**64, -(2**64), 2**1024]
    if isinstance(value, float):
        return [1e308, -1e308]
    if isinstance(value, str):
        return list(_nines(value))
    if isinstance(value, bytes):
        return [v.encode("latin-1") for v in _nines(value.decode("latin-1"))]
    return []


def _nines(text: str) -> list[str]:
    """Each run of letters and digits (the first four) as a run of nines: as long, one
    longer, and twenty long; text without one becomes twenty nines."""
    out: list[str] = []
    for match in list(_TOKEN.finditer(text))[:4]:
        size = match.end() - match.start()
        for n in dict.fromkeys((size, size + 1, 20)):
            out.append(text[: match.start()] + "9" * n + text[match.end() :])
    return out or ["9" * 20]


def _malformed(value: object) -> list[object]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [-1]
    if isinstance(value, str | bytes):
        return [value[:0], value[: len(value) // 2]]
    return []


def _retyped(value: object) -> list[object]:
    if isinstance(value, str):
        return [None, value.encode("utf-8")]
    if isinstance(value, bytes):
        return [None, value.decode("latin-1")]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [None, str(value)]
    return [None]


def _empty(value: object) -> list[object]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [10**6, -(10**6)]
    if isinstance(value, str | bytes | list | tuple | dict):
        return [type(value)()]
    return []


def _zero(value: object) -> list[object]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [type(value)(0)]
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return ["0"]
    return []


def _unicode(value: object) -> list[object]:
    if isinstance(value, str):
        return [value + "\udcff", value + "é"]
    if isinstance(value, bytes):
        return [value + b"\xff"]
    return []


def _nothing(value: object) -> list[object]:
    return [None]


_MAKERS: dict[str, Callable[[object], list[object]]] = {
    "OverflowError": _huge,
    "ArithmeticError": _huge,
    "ValueError": _malformed,
    "TypeError": _retyped,
    "KeyError": _empty,
    "IndexError": _empty,
    "LookupError": _empty,
    "StopIteration": _empty,
    "ZeroDivisionError": _zero,
    "UnicodeError": _unicode,
    "UnicodeDecodeError": _unicode,
    "UnicodeEncodeError": _unicode,
    "AttributeError": _nothing,
}
