"""Structural edits of a text input: a bracketed group emptied, a separated list cut to
one item, grown by a duplicate, given an empty item or a trailing separator.

Parsers often treat an empty group (``{ a: 1 }`` -> ``{}``, ``[1, 2]`` -> ``[]``,
``(x)`` -> ``()``, ``<a>`` -> ``<>``, ``"x"`` -> ``""``) or a list of one or many items
(``a, b`` -> ``a``, ``a, b, a``, ``a,, b``, ``a, b,``) in a branch of their own, and a
change often sits in that branch. Literal steering changes one literal towards the
changed lines' literals; these edits change the text's shape instead, ONE edit per
variant. The brackets and separators the changed lines name (``marks``: punctuation in
their string and bytes literals, a regex class ``[,;]``, ``split(",")``,
``strip("{}")``) go first; a separator they name is also put into a text that has
none (``a`` -> ``a, a``). Otherwise groups are emptied innermost first, one per kind of
bracket in turn, and lists are found in the innermost groups and the lines.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from bot.testgen.inputs import Candidate, literal_strings

__all__ = ["MAX_EDITS", "edited", "edits", "marks", "row_marks", "sources"]

MAX_EDITS = 6  # edited copies of one text
MAX_TEXT = 4000  # characters of a text edited (a longer one is a document, not a shape)
MAX_EDITED = 16  # edited inputs of one function (the differential)
MAX_EDITED_FROM = 12  # the tests' inputs they are made from
MAX_GROUPS = 40  # bracketed groups looked at in one text
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_QUOTES = "\"'"
_SEPARATORS = ",;|"
_KINDS = "{[(\"'<"  # the kinds of group emptied first when the change names none
_CLASS = re.compile(r"(?<!\\)\[\^?([^\]\[]+)\]")
_PUNCTUATION = set(_PAIRS) | set(_PAIRS.values()) | set(_QUOTES) | set(_SEPARATORS)


def marks(strings: Iterable[str]) -> tuple[str, ...]:
    """The brackets and separators ``strings`` hold (a closing bracket names its
    opening one), in the order met."""
    out: list[str] = []
    closing = {c: o for o, c in _PAIRS.items()}
    for s in strings:
        for ch in s if len(s) <= 40 else "":
            if ch in _PUNCTUATION:
                out.append(closing.get(ch, ch))
    return tuple(dict.fromkeys(out))


def row_marks(rows: Iterable[str]) -> tuple[str, ...]:
    """The brackets and separators in the string and bytes literals of source ``rows``."""
    texts: list[str] = []
    for value in literal_strings(rows):
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        # a regex class names its members, not brackets
        texts.append(_CLASS.sub(lambda m: m.group(1), value))
    return marks(texts)


def _groups(text: str) -> list[tuple[int, int, int]]:
    """(start, end, depth below) of each bracketed or quoted group with something in
    it: ``start`` at the opening character, ``end`` just past the closing one, ``depth
    below`` 0 for a group holding no other group. Unbalanced brackets are skipped."""
    out: list[tuple[int, int, int]] = []
    stack: list[tuple[str, int, int]] = []  # opening char, where, deepest group inside
    quote: tuple[str, int] | None = None
    for i, ch in enumerate(text):
        if quote is not None:
            if ch == quote[0] and text[i - 1] != "\\":
                if i > quote[1] + 1:
                    out.append((quote[1], i + 1, 0))
                    _deepen(stack, 0)
                quote = None
            continue
        if ch in _QUOTES and ch in text[i + 1 : i + 200].split("\n", 1)[0]:
            quote = (ch, i)
            continue
        if ch in _PAIRS:
            stack.append((ch, i, -1))
            continue
        while stack and stack[-1][0] == "<" and ch in ")]}":
            stack.pop()  # a ``<`` no ``>`` closed: a comparison, not a bracket
        if stack and ch == _PAIRS[stack[-1][0]]:
            _open, at, below = stack.pop()
            if text[at + 1 : i].strip():
                out.append((at, i + 1, below + 1))
                _deepen(stack, below + 1)
        elif ch in _PAIRS.values() and ch != ">":
            stack.clear()  # unbalanced: what was open is not a group
    return out


def _deepen(stack: list[tuple[str, int, int]], depth: int) -> None:
    if stack:
        ch, at, below = stack[-1]
        stack[-1] = (ch, at, max(below, depth))


def _emptied(text: str, wanted: tuple[str, ...]) -> list[str]:
    """``text`` with one group emptied: those of a wanted kind first, then innermost
    first, the kinds of bracket taking turns, a group in a new place (the text before
    it) first."""
    groups = _groups(text[:MAX_TEXT])
    groups.sort(key=lambda g: (text[g[0]] not in wanted, g[2], g[1] - g[0]))
    by_kind: dict[str, list[tuple[int, int, int]]] = {}
    seen: set[tuple[str, str]] = set()
    later: list[tuple[int, int, int]] = []
    for g in groups[:MAX_GROUPS]:
        before = text[max(0, g[0] - 12) : g[0]].split()[-1:] or [""]
        place = (text[g[0]], before[0].strip("=:,;")[-6:])
        if place in seen:
            later.append(g)
            continue
        seen.add(place)
        by_kind.setdefault(text[g[0]], []).append(g)
    kinds = sorted(by_kind, key=lambda k: (k not in wanted, _KINDS.index(k)))
    turns = itertools.zip_longest(*[by_kind[k] for k in kinds])
    order = [g for turn in turns for g in turn if g is not None] + later
    return [text[: a + 1] + text[b - 1 : b] + text[b:] for a, b, _d in order]


def _split(region: str, sep: str) -> list[str]:
    """``region`` cut at each ``sep`` outside brackets and quotes."""
    items, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(region):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in _QUOTES:
            quote = ch
        elif ch in _PAIRS and ch != "<":
            depth += 1
        elif ch in _PAIRS.values() and ch != ">":
            depth -= 1
        elif ch == sep and depth == 0:
            items.append(region[start:i])
            start = i + 1
    return [*items, region[start:]]


def _listed(text: str, sep: str, alone: bool) -> list[str]:
    """``text`` with one list separated by ``sep`` (in an innermost group, else a
    line) cut to its first item, grown by a copy of it, given an empty item or a
    trailing separator; when ``alone`` (the changed lines name ``sep``) and no list
    is found, the whole text grown so."""
    spans = [(a + 1, b - 1) for a, b, d in _groups(text[:MAX_TEXT]) if d == 0]
    at = 0
    for line in text[:MAX_TEXT].split("\n"):
        spans.append((at, at + len(line)))
        at += len(line) + 1
    out: list[str] = []
    for a, b in spans:
        items = _split(text[a:b], sep)
        if len(items) < 2 or not items[0].strip() or not items[1].strip():
            continue
        region = text[a:b]
        tail = region.rstrip()
        gap = items[1][: len(items[1]) - len(items[1].lstrip())]
        made = [
            items[0].rstrip(),
            tail + sep + gap + items[0].strip(),
            (items[0] + sep + sep + sep.join(items[1:])).rstrip(),
            tail + sep,
        ]
        out += [text[:a] + m + region[len(tail) :] + text[b:] for m in made]
        break
    if not out and alone and text.strip() and sep not in text:
        out = [f"{text}{sep} {text}", f"{text}{sep}", f"{sep}{text}"]
    return out


def edits(text: str, wanted: tuple[str, ...] = (), limit: int = MAX_EDITS) -> list[str]:
    """Up to ``limit`` texts, each ``text`` with one structural edit; those on the
    brackets and separators in ``wanted`` (``marks``) first, the kinds of edit taking
    turns."""
    if not text or len(text) > MAX_TEXT:
        return []
    seps = [s for s in wanted if s in _SEPARATORS] + [s for s in _SEPARATORS if s not in wanted]
    lists = [_listed(text, s, s in wanted) for s in seps]
    emptied = _emptied(text, wanted)
    if any(s in wanted for s in _SEPARATORS) and not any(b in wanted for b in _PAIRS):
        kinds = [*lists, emptied]
    else:
        kinds = [emptied, *lists]
    turns = itertools.zip_longest(*kinds)
    out = [t for turn in turns for t in turn if t is not None and t != text]
    return list(dict.fromkeys(out))[:limit]


def sources(value: object, wanted: tuple[str, ...]) -> list[str]:
    """The sources of a str or bytes literal ``value`` with one structural edit each."""
    if isinstance(value, bytes):
        text = value.decode("latin-1")
        return [repr(t.encode("latin-1")) for t in edits(text, wanted)]
    return [repr(t) for t in edits(value, wanted)] if isinstance(value, str) else []


def edited(candidates: list[Candidate], strings: list[str]) -> list[Candidate]:
    """The tests' text inputs (an argument that is a str or bytes literal, or a call
    wrapping one: ``io.StringIO('a, b')``) each with one structural edit, towards the
    brackets and separators ``strings`` (the changed lines' literals) hold; the inputs
    take turns, those holding such a bracket or separator first."""
    wanted = marks(strings)
    made: list[list[Candidate]] = []
    texts = [c for c in candidates if any(_text(a) for a in (*c.args, *(v for _k, v in c.kwargs)))]
    texts.sort(key=lambda c: not any(m in str(c.args) + str(c.kwargs) for m in wanted))
    for c in texts[:MAX_EDITED_FROM]:
        mine: list[Candidate] = []
        for i, source in enumerate(c.args):
            found = _text(source)
            for value in _edited(found, wanted):
                mine.append(replace(c, args=(*c.args[:i], value, *c.args[i + 1 :])))
        for j, (key, source) in enumerate(c.kwargs):
            found = _text(source)
            for value in _edited(found, wanted):
                mine.append(replace(c, kwargs=(*c.kwargs[:j], (key, value), *c.kwargs[j + 1 :])))
        made.append(mine)
    turns = itertools.zip_longest(*made)
    out = [c for turn in turns for c in turn if c is not None and c not in candidates]
    return [replace(c, origin=f"{c.origin} (edited)") for c in dict.fromkeys(out)][:MAX_EDITED]


def _edited(found: tuple[str, Callable[[str], str]] | None, wanted: tuple[str, ...]) -> list[str]:
    if found is None:
        return []
    text, rebuild = found
    return [rebuild(t) for t in edits(text, wanted, limit=3)]


def _text(source: str | None) -> tuple[str, Callable[[str], str]] | None:
    """The text of an argument's source (a str literal, a bytes one read as Latin-1, or
    either wrapped by a call of one argument) and how to write it back with other text."""
    try:
        node = (
            ast.parse(source, mode="eval").body if source and len(source) <= 2 * MAX_TEXT else None
        )
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    wrapper: ast.Call | None = None
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        wrapper, node = node, node.args[0]
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str | bytes):
        return None
    raw = node.value
    text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
    if not text or len(text) > MAX_TEXT:
        return None

    def rebuild(new: str) -> str:
        value: str | bytes = new.encode("latin-1") if isinstance(raw, bytes) else new
        if wrapper is None:
            return repr(value)
        wrapper.args[0] = ast.Constant(value)
        return ast.unparse(wrapper)

    return text, rebuild
