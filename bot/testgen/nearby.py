"""Strings next to the tests' own, when the changed lines test containment.

A change between containment and equality (``iss not in issuer`` made ``iss != issuer``
for a string, ``name.startswith(prefix)`` made ``name == prefix``) shows only on a
string that contains another without being it, and the project's tests rarely hold one:
their strings are equal or unrelated. When a changed line, or one of the two either side
of it, tests containment (``in``, ``not in``, ``startswith``, ``endswith``, ``find``,
``index``, ``count``), each plain string argument of the tests' calls is also tried one
character longer (``'urn:foo'`` gives ``'urn:fooo'``, which contains it) and one shorter
(``'urn:fo'``, which it contains). A changed length test (``if length > len(data) - 2``)
asks for the same: a record one byte short is what a new bounds check rejects, so bytes
arguments are varied too. Read, never run: the side-runner calls them like any input,
and only a different outcome on the parent makes a test."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import replace

from bot.testgen.inputs import Candidate

__all__ = ["MAX_NEARBY", "nearby_strings", "containment_names"]

MAX_NEARBY = 16  # inputs per function
_METHODS = {"startswith", "endswith", "find", "rfind", "index", "rindex", "count"}


def containment_names(source: str, lines: list[int]) -> set[str]:
    """The names of the changed lines and their neighbours when one of them tests that
    a value contains another (an ``in`` that is not a ``for``'s, or a string method that
    looks inside); else nothing. Neighbours too: a change that makes a containment test
    an equality for one type adds a branch next to the ``in`` it leaves alone."""
    rows = source.split("\n")
    names: set[str] = set()
    contains = False
    for n in sorted({near for line in lines for near in range(line - 2, line + 3)}):
        if not 0 < n <= len(rows):
            continue
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(rows[n - 1].strip()).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            continue
        words = [t.string for t in tokens if t.type == tokenize.NAME]
        names.update(words)
        after_dot = {b.string for a, b in zip(tokens, tokens[1:], strict=False) if a.string == "."}
        contains = (
            contains
            or words.count("in") > words.count("for")
            or bool(after_dot & _METHODS)
            or "len" in words  # a length test: one element more or less crosses it
        )
    return names if contains else set()


def nearby_strings(candidates: list[Candidate], source: str, lines: list[int]) -> list[Candidate]:
    """The candidates with each plain string argument one character longer and one
    shorter, when the changed lines test containment: first those given by a name the
    changed lines use (``issuer=``, in any of the candidates), then the other arguments of
    the first few."""
    names = containment_names(source, lines)
    if not names:
        return []
    seen = set(candidates)
    named: list[Candidate] = []
    out: list[Candidate] = []
    for n, c in enumerate(candidates):
        origin = f"{c.origin} (nearby)"
        for i, arg in enumerate(c.args if n < 12 else ()):
            for value in _nearby(arg):
                out.append(replace(c, args=(*c.args[:i], value, *c.args[i + 1 :]), origin=origin))
        for j, (key, arg) in enumerate(c.kwargs):
            if n >= 12 and key not in names:
                continue  # past the first few: only what a name the changed lines use gets
            for value in _nearby(arg):
                kwargs = (*c.kwargs[:j], (key, value), *c.kwargs[j + 1 :])
                (named if key in names else out).append(replace(c, kwargs=kwargs, origin=origin))
    return [c for c in dict.fromkeys(named + out) if c not in seen][:MAX_NEARBY]


def _nearby(source: str | None) -> list[str]:
    try:
        value = ast.literal_eval(source) if source else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return []
    if isinstance(value, bytes) and 2 <= len(value) <= 200:  # an encoded record
        return [repr(value + value[-1:]), repr(value[:-1])]
    if not isinstance(value, str) or not 2 <= len(value) <= 60:  # not a blob (a token)
        return []
    return [repr(value + value[-1]), repr(value[:-1])]
