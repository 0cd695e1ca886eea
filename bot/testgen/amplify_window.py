"""The part of a long value an amplified test asserts: where head's value and the
parent's differ, when head's is too long to read whole (a rendered document, the
accumulated output of a stream, a long list).

- **A string or bytes**: a window around the first position where the two differ, from
  the start of that line when it is near (``text[112:140] == '...'``); past the end of
  the shorter one, the window still differs (one slice is longer).
- **A list or tuple**: its first element that differs (``value[3] == ...``), narrowed the
  same way in turn; when one side's elements begin the other's, its length.
- **A dict** (its keys literals): the first key whose value differs, narrowed in turn, a
  key only head has (``'k' in value``), or its length.

A part is only given when the parent's recorded value is known to fail its assert (or
the call raised on the parent, where any assert of the value fails); the gates' run on
the parent decides in the end, as for every test.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from bot.testgen.amplify_checks import value_check

__all__ = ["LONGEST", "WHOLE", "Part", "part", "subscript"]

WHOLE = 300  # characters of a value's source asserted whole
LONGEST = 2000  # a longer one whose differing part is not known is not asserted
AROUND = 40  # characters of a text shown before and after where it first differs
DEPTH = 8  # containers narrowed into
_MISSING = object()


@dataclass
class Part:
    """What of head's value is asserted: the expression (``got[132][40:97]``), head's
    source of it, the parent's (empty when the call raised there) and the assert."""

    expr: str
    value: str
    parent: str
    check: str
    whole: bool  # the whole value (not a window, an element or a length of it)


def part(expr: str, mine: str, theirs: dict[str, Any]) -> Part | None:
    """The assert of ``expr`` (head's value's source ``mine``) that the parent's outcome
    ``theirs`` fails: the whole value when it is short, else the part where they differ.
    None when no such part is known (the parent's value has no source form, the two do
    not differ where it can be told)."""
    if theirs.get("kind") not in ("value", "raises"):
        return None
    other = str(theirs["value"]) if theirs["kind"] == "value" else None
    head, parent = _node(mine), _node(other) if other is not None else None
    if head is None or (other is not None and parent is None):
        return None
    return _narrow(expr, head, parent, 0)


def subscript(expr: str) -> str:
    """``expr`` as the operand of a subscript or call (``(await f())`` in brackets)."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return f"({expr})"
    plain = isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
    return expr if plain else f"({expr})"


def _node(source: str | None) -> ast.expr | None:
    if source is None:
        return None
    try:
        return ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return _MISSING
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING


def _same(a: ast.expr, b: ast.expr | None) -> bool:
    return b is not None and ast.dump(a) == ast.dump(b)


def _narrow(expr: str, mine: ast.expr, theirs: ast.expr | None, depth: int) -> Part | None:
    if _same(mine, theirs):
        return None
    source = ast.unparse(mine)
    if len(source) <= WHOLE:
        return _whole(expr, source, theirs)
    if depth > DEPTH:
        return None
    value = _literal(mine)
    if isinstance(value, str | bytes):
        return _window(expr, value, _literal(theirs), theirs)
    if isinstance(mine, ast.List | ast.Tuple):
        return _element(expr, mine, theirs, depth)
    if isinstance(mine, ast.Dict):
        return _entry(expr, mine, theirs, depth)
    return None


def _whole(expr: str, source: str, theirs: ast.expr | None) -> Part | None:
    """The value asserted whole (its repr where the two compare equal but read otherwise)."""
    other = ast.unparse(theirs) if theirs is not None else ""
    parent = {"kind": "value", "value": other} if theirs is not None else {"kind": "raises"}
    check = value_check(expr, {"value": source}, parent)
    mine, its = _literal(_node(source)), _literal(theirs)
    if mine is not _MISSING and mine == its and "repr(" not in check:
        return None  # equal as values: `==` would not tell them apart
    return Part(expr, source, other, check, whole=True)


def _window(expr: str, mine: str | bytes, theirs: Any, node: ast.expr | None) -> Part | None:
    """A slice of head's text around where the parent's first differs."""
    if node is not None and type(theirs) is not type(mine):
        # the parent's is not text of this kind at all: its start tells (a container's,
        # a number's slice is not equal to a text), where the parent's is a literal
        if theirs is _MISSING:
            return None
        theirs = None
    if node is None or theirs is None:  # the call raised on the parent
        start, end = 0, 2 * AROUND
    else:
        at = next(
            (i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b),
            min(len(mine), len(theirs)),
        )
        if at == len(mine) == len(theirs):
            return None
        start, end = _bounds(mine, at)
    stop = end if end < len(mine) else None  # to its end: ``text[120:]``
    cut = mine[start:stop]
    if theirs is not None and theirs[start:stop] == cut:
        return None
    where = f"{subscript(expr)}[{start or ''}:{'' if stop is None else stop}]"
    other = repr(theirs[start:stop]) if theirs is not None else ""
    return Part(where, repr(cut), other, f"assert {where} == {cut!r}", whole=False)


def _bounds(text: str | bytes, at: int) -> tuple[int, int]:
    """A window holding position ``at``: about ``AROUND`` on each side, from the start of
    its line and to the end of it when those are near."""
    newline: Any = "\n" if isinstance(text, str) else b"\n"
    start = max(0, at - AROUND)
    found = text.rfind(newline, start, at)
    if found != -1:
        start = found + 1
    end = at + AROUND
    found = text.find(newline, at, end)
    if found != -1:
        end = found + 1
    return start, max(end, at + 1)


def _element(
    expr: str, mine: ast.List | ast.Tuple, theirs: ast.expr | None, depth: int
) -> Part | None:
    """The first element of a list or tuple that differs from the parent's, narrowed;
    its length when one side's elements begin the other's."""
    if theirs is None:
        return _length(expr, len(mine.elts), None)
    if type(theirs) is not type(mine):
        return None
    elts = theirs.elts
    for i, (a, b) in enumerate(zip(mine.elts, elts, strict=False)):
        if not _same(a, b):
            return _narrow(f"{subscript(expr)}[{i}]", a, b, depth + 1)
    if len(mine.elts) == len(elts):
        return None
    return _length(expr, len(mine.elts), len(elts))


def _entry(expr: str, mine: ast.Dict, theirs: ast.expr | None, depth: int) -> Part | None:
    """The first key whose value differs from the parent's, narrowed; a key the parent's
    lacks; the length."""
    keys = [_literal(k) for k in mine.keys]
    if any(k is _MISSING for k in keys):
        return None
    if theirs is None:
        return _length(expr, len(keys), None)
    if not isinstance(theirs, ast.Dict):
        return None
    other = {}
    for k, v in zip(theirs.keys, theirs.values, strict=True):
        key = _literal(k)
        if key is _MISSING:
            return None
        other[key] = v
    for key, value in zip(keys, mine.values, strict=True):
        if key not in other:
            return Part(f"{key!r} in {expr}", "True", "False", f"assert {key!r} in {expr}", False)
        if not _same(value, other[key]):
            return _narrow(f"{subscript(expr)}[{key!r}]", value, other[key], depth + 1)
    if len(keys) == len(other):
        return None
    return _length(expr, len(keys), len(other))


def _length(expr: str, mine: int, theirs: int | None) -> Part:
    where = f"len({expr})"
    parent = "" if theirs is None else str(theirs)
    return Part(where, str(mine), parent, f"assert {where} == {mine}", whole=False)
