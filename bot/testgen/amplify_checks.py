"""The assert an amplified test ends with, where ``==`` or ``match=`` would not tell head
from the parent.

- **An exception's text** (``raised_checks``): a message too long or of several lines
  for ``match=`` is compared in full after the block (``with pytest.raises(E) as
  excinfo: ...`` then ``assert str(excinfo.value) == '...'``); a short one the parent's
  message also contains (``bad`` in ``bad value``) is matched whole (``^bad$``).
- **Order and type** (``value_check``): two values that compare equal although they are
  written differently (``{'b': 1, 'a': 2}`` and ``{'a': 2, 'b': 1}``; ``1`` and
  ``1.0``) differ in what the test can see of them, their repr: that is asserted.
"""

from __future__ import annotations

import ast
import re
from typing import Any

__all__ = ["raised_checks", "value_check"]


def raised_checks(
    call: str, head: dict[str, Any], parent: dict[str, Any], taken: set[str]
) -> list[ast.stmt]:
    """``with pytest.raises(...)`` around ``call``, and what of head's exception tells
    it from the parent's outcome."""
    message, text = head.get("message") or "", head.get("text") or ""
    if message:
        pattern = re.escape(message)
        theirs = parent.get("message") or parent.get("text") or ""
        if parent.get("kind") == "raises" and re.search(pattern, theirs):
            pattern = f"^{pattern}$"  # the parent's message holds head's
        return ast.parse(f"with pytest.raises({head['type']}, match={pattern!r}):\n    {call}").body
    if not text:
        return ast.parse(f"with pytest.raises({head['type']}):\n    {call}").body
    name = _free("excinfo", taken)
    return ast.parse(
        f"with pytest.raises({head['type']}) as {name}:\n    {call}\n"
        f"assert str({name}.value) == {text!r}"
    ).body


def value_check(expr: str, head: dict[str, Any], parent: dict[str, Any]) -> str:
    """``assert <expr> == <head's value>``; ``assert repr(<expr>) == ...`` where the two
    sides' values are plain literals that compare equal (they differ in order or type)."""
    shown = head["value"]
    if parent.get("kind") == "value" and _equal_but_shown_otherwise(shown, parent["value"]):
        return f"assert repr({expr}) == {shown!r}"
    return f"assert {expr} == {shown}"


def _equal_but_shown_otherwise(mine: str, theirs: str) -> bool:
    try:
        a, b = ast.literal_eval(mine), ast.literal_eval(theirs)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    # the source is the value's repr (a set's repr has no steady order: never asserted)
    return a == b and repr(a) == mine and not _holds_a_set(a)


def _holds_a_set(value: object, depth: int = 0) -> bool:
    if isinstance(value, set | frozenset) or depth > 16:
        return True
    if isinstance(value, dict):
        items: list[object] = [*value.keys(), *value.values()]
        return any(_holds_a_set(v, depth + 1) for v in items)
    if isinstance(value, list | tuple):
        return any(_holds_a_set(v, depth + 1) for v in value)
    return False


def _free(name: str, taken: set[str]) -> str:
    k = 1
    out = name
    while out in taken:
        k += 1
        out = f"{name}{k}"
    return out
