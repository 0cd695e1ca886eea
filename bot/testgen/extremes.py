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
from functools import partial

from bot.testgen.inputs import Candidate

__all__ = [
    "MAX_EXTREME",
    "caught_types",
    "each_argument",
    "towards_exceptions",
    "towards_transforms",
    "transforms",
]

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
            made += each_argument(c, partial(_values, make=make), f"towards {name}")
        fresh = [m for m in dict.fromkeys(made) if m not in seen]
        seen.update(fresh)
        if fresh:
            per_candidate.append(fresh)
    out: list[Candidate] = []
    for group in per_candidate:  # a few of each first: the inputs differ more than the kinds
        out += group[:12]
    return out[:MAX_EXTREME]


def each_argument(
    c: Candidate, values: Callable[[str | None], list[str]], why: str
) -> list[Candidate]:
    """``c`` with one argument (positional or keyword) at a time given each of the
    sources ``values`` makes from its own; the origin says ``why``."""
    origin = f"{c.origin} ({why})"
    out: list[Candidate] = []
    for i, arg in enumerate(c.args):
        for value in values(arg):
            out.append(replace(c, args=(*c.args[:i], value, *c.args[i + 1 :]), origin=origin))
    for j, (key, arg) in enumerate(c.kwargs):
        for value in values(arg):
            kwargs = (*c.kwargs[:j], (key, value), *c.kwargs[j + 1 :])
            out.append(replace(c, kwargs=kwargs, origin=origin))
    return out


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


# a method that changes the case or the surrounding space of text
_CASE = frozenset({"lower", "upper", "casefold", "title", "capitalize", "swapcase"})
_SPACE = frozenset({"strip", "lstrip", "rstrip"})


def transforms(source: str, lines: list[int]) -> list[str]:
    """The case and whitespace methods the changed lines call (``netloc.lower()``,
    ``value.strip()``), in the order written: a change that adds, moves or drops one
    shows only on text that it changes (mixed case, surrounding spaces). ``strip(":")``
    strips no space: its literal steers inputs elsewhere."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    changed = set(lines)
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name = node.func.attr
        if name not in _CASE | _SPACE or node.lineno not in changed:
            continue
        if name in _SPACE and node.args:
            arg = node.args[0]
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str | bytes)):
                continue
            if arg.value.strip():  # strip(":"), not strip(" \t")
                continue
        found.append((node.lineno, node.col_offset, name))
    return list(dict.fromkeys(name for _, _, name in sorted(found)))


def _cased(text: str) -> list[str]:
    """Text in the cases a case transform changes: all upper, all lower, each word
    capitalised."""
    return [t for t in dict.fromkeys((text.upper(), text.lower(), text.title())) if t != text]


def _spaced(text: str) -> list[str]:
    return [f" {text} ", f"{text}\n"]


def _text_variants(value: object, make: Callable[[str], list[str]], depth: int = 0) -> list[object]:
    """``value`` with every string in it (also inside lists, tuples and dict values)
    made each way ``make`` makes one; bytes as their Latin-1 text."""
    if isinstance(value, str):
        return list(make(value))
    if isinstance(value, bytes):
        text = value.decode("latin-1")
        return [v.encode("latin-1") for v in make(text) if all(ord(ch) < 256 for ch in v)]
    if depth > 4 or not isinstance(value, list | tuple | dict):
        return []
    items = list(value.values()) if isinstance(value, dict) else list(value)
    per_item = [_text_variants(item, make, depth + 1) or [item] for item in items]
    out: list[object] = []
    for i in range(max((len(p) for p in per_item), default=0)):
        made = [p[min(i, len(p) - 1)] for p in per_item]
        if isinstance(value, dict):
            out.append(dict(zip(value, made, strict=True)))
        else:
            out.append(made if isinstance(value, list) else tuple(made))
    return [v for v in out if v != value]


def towards_transforms(
    candidates: list[Candidate], source: str, lines: list[int], strings: list[str]
) -> list[Candidate]:
    """The candidates' text changed towards the case and whitespace methods the changed
    lines call: ``canonicalize_url('http://user:pass@host/')`` also as
    ``'HTTP://USER:PASS@HOST/'``, a ``.strip()`` with spaces around the text. The inputs
    holding more of the changed lines' ``strings`` (``"@"`` of ``netloc.split("@")``)
    first: they reach the changed code; then the project's order, a few of each."""
    names = transforms(source, lines)
    makers: list[tuple[str, Callable[[str], list[str]]]] = []
    if any(n in _CASE for n in names):
        makers.append(("case", _cased))
    if any(n in _SPACE for n in names):
        makers.append(("space", _spaced))
    if not makers:
        return []
    seen = set(candidates)
    out: list[Candidate] = []
    for c in sorted(candidates, key=lambda c: -_holds(c, strings)):
        made: list[Candidate] = []
        for what, make in makers:
            made += each_argument(c, partial(_made, make=make), f"towards {what}")
        fresh = [m for m in dict.fromkeys(made) if m not in seen]
        seen.update(fresh)
        out += fresh[:6]
    return out[:MAX_EXTREME]


def _made(source: str | None, make: Callable[[str], list[str]]) -> list[str]:
    try:
        value = ast.literal_eval(source) if source else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return []
    shown = [repr(v) for v in _text_variants(value, make)]
    return [s for s in dict.fromkeys(shown) if len(s) <= 200]


def _holds(c: Candidate, strings: list[str]) -> int:
    """How many of ``strings`` the candidate's arguments hold."""
    sources = [a for a in (*c.args, *(v for _, v in c.kwargs)) if a]
    return sum(1 for s in strings if s and any(s in a for a in sources))
