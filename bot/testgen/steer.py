"""Inputs steered by what a change's lines hold: the literals, patterns and code points of
changed module-level data, made into inputs of the functions that read it (``moddata``
says which those are).

- **Literals.** The string and integer literals of the changed entries (and of the
  lines they replaced; the values the change brought first, then those it took away,
  then the others), the words of a changed regular expression (``(CASE|IN|VALUES)\\b``
  gives ``IN``), and for integers written in hexadecimal (code points, almost always) the
  characters at each end of a changed range and just outside it.
- **Contrasts of a changed regular expression.** A regex literal the change replaced
  (``^(.*)'s?$`` -> ``^(.+)'s?$``) is walked with the standard library's own pattern
  parser: its literals, classes, repeats (at their least, one more) and branches give
  short strings, and the strings one version matches and the other does not (or matches
  with other groups) are inputs: ``'`` here. A regex the change added or removed whole
  is contrasted with one that matches nothing.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import io
import re
import tokenize
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bot.testgen.inputs import Candidate, steer
from bot.testgen.text_edits import edited

if TYPE_CHECKING:
    from bot.testgen.moddata import DataChange

__all__ = ["contrasts", "data_inputs", "literals", "placed"]

MAX_STRINGS = 8
MAX_CHARS = 12
MAX_CONTRASTS = 4
MAX_SAMPLES = 32  # strings made from one pattern
MAX_PAIRS = 6  # changed regular expressions contrasted, per change
MAX_PATTERNS = 60  # changed string literals read for them, each side
MAX_PLACED = 16  # inputs with a separator put in place, per function
MAX_PLACED_FROM = 6  # the tests' inputs it is put into
MAX_SPOTS = 6  # places in one text

_LOOKS_REGEX = re.compile(r"\\.|\|\w|\(\?|\[[^\]]+\]|[+*]\??\)|\.\*")
_REGEX_WORD = re.compile(r"(?<![\\\w])[A-Za-z][A-Za-z_]+")


def _regex_words(value: str) -> list[str] | None:
    """The literal words of a regular expression (``(NOT\\s+)?(IN)\\b`` gives NOT, IN);
    None when the string does not look like one."""
    if not _LOOKS_REGEX.search(value) or len(value) > 200:
        return None
    try:
        re.compile(value)
    except re.error:
        return None
    return [w for w in _REGEX_WORD.findall(re.sub(r"\[[^\]]*\]", " ", value)) if len(w) <= 20]


def _row_literals(code: str) -> tuple[list[str | int], list[int]]:
    """A row's string and integer literals, and its integers written in hexadecimal
    that can be code points."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code.strip() + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return [], []
    values: list[str | int] = []
    points: list[int] = []
    for tok in tokens:
        if tok.type not in (tokenize.STRING, tokenize.NUMBER):
            continue
        try:
            value = ast.literal_eval(tok.string)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, str) and value:
            values.append(value)
        elif type(value) is int:
            if tok.string.lower().startswith("0x") and 0 < value <= 0x10FFFF:
                points.append(value)
            elif abs(value) < 10**6:
                values.append(value)
    return values, points


def literals(added: list[str], removed: list[str]) -> tuple[list[str], list[int], list[str]]:
    """Strings, integers and code-point characters of the changed entries, without
    repeats: first the values the change brought (more often in the added rows than in
    the removed ones: ``'ru'`` added to a list of languages, an entry's new name), then
    those it took away, then the others."""
    new = [_row_literals(r) for r in added]
    old = [_row_literals(r) for r in removed]
    count = Counter(v for values, _p in new for v in values)
    count.subtract(v for values, _p in old for v in values)
    seen = list(dict.fromkeys(v for values, _p in new + old for v in values))
    ordered = [
        *(v for v in seen if count[v] > 0),
        *(v for v in seen if count[v] < 0),
        *(v for v in seen if count[v] == 0),
    ]
    strings: list[str] = []
    for v in ordered:
        if isinstance(v, str):
            words = _regex_words(v)
            strings += words if words is not None else [v] if len(v) <= 20 else []
    numbers = [v for v in ordered if isinstance(v, int)]
    chars: list[str] = []
    for _values, points in [new[i] for i in _entry_order(added, removed)] + old:
        # a range (lo, hi): its ends, then just outside it (where a shrunk range changed)
        around = [points[0] - 1, points[-1] + 1] if len(points) == 2 else []
        chars += [chr(p) for p in [*points, *around] if 0 < p <= 0x10FFFF and not _surrogate(p)]
    return (
        list(dict.fromkeys(strings))[:MAX_STRINGS],
        numbers[:MAX_STRINGS],
        list(dict.fromkeys(chars))[:MAX_CHARS],
    )


def _entry_order(added: list[str], removed: list[str]) -> list[int]:
    """The added rows' indexes, the rows that are new first (a table rewritten or
    re-indented as a whole still shows which entries really changed)."""
    old = {r.strip() for r in removed}
    return sorted(range(len(added)), key=lambda i: added[i].strip() in old)


def _surrogate(point: int) -> bool:
    return 0xD800 <= point <= 0xDFFF


def data_inputs(
    changes: Iterable[DataChange],
    path: str,
    qualname: str,
    candidates: list[Candidate],
    one_parameter: bool,
) -> list[Candidate]:
    """More inputs for the public name ``qualname`` of ``path`` when it reads changed data:
    the tests' inputs steered by the data's literals (in its own module the changed
    lines' strings and numbers already steer: only the characters are added; the contrasts
    of a changed regex come first everywhere), and for a one-parameter function the
    literals alone. The changes take turns, so one big table does not crowd out
    another's entries."""
    split: list[list[str]] = []
    chars: list[list[str]] = []
    words: list[list[str]] = []
    numbers: list[int] = []
    for change in changes:
        if not any(p == path and e.qualname == qualname for p, e in change.entries):
            continue
        split.append(change.contrasts)
        chars.append(change.chars)
        if change.path != path:
            words.append(change.strings)
            numbers += change.numbers
    strings = list(dict.fromkeys(_turns(split) + _turns(chars) + _turns(words)))
    numbers = list(dict.fromkeys(numbers))
    out = steer(candidates, strings, numbers)
    if one_parameter:
        out += [
            Candidate((repr(v),), (), (), f"{path} (changed data)") for v in [*strings, *numbers]
        ]
    return out


def _turns(groups: list[list[str]]) -> list[str]:
    """The first of each group, then the second of each, ..."""
    return [g[i] for i in range(max(map(len, groups), default=0)) for g in groups if i < len(g)]


_NOTHING = re.compile(r"(?!)")
_POOL = "a0 '-_.#=:/A"  # characters tried for a negated class or a \W


def contrasts(added: list[str], removed: list[str]) -> list[str]:
    """Short strings that the old and the new version of a changed regex literal match
    differently (one matches, the other does not, or the groups differ), shortest first;
    each changed string literal is paired with the most alike one on the other side,
    when one of the two looks like a regex (``(?i)^key=`` -> ``^key=``)."""
    now, then = _patterns(added), _patterns(removed)
    had, has = {o.pattern for o, _l in then}, {n.pattern for n, _l in now}
    # a big table of changed strings: its first ones (few of them look like regexes)
    new = [p for p in now if p[0].pattern not in had][:MAX_PATTERNS]
    old = [p for p in then if p[0].pattern not in has][:MAX_PATTERNS]
    pairs: list[tuple[re.Pattern[str], re.Pattern[str]]] = []
    used: set[str] = set()
    for n, looks in new:
        if len(pairs) >= MAX_PAIRS:
            break
        free = [(o, ol) for o, ol in old if o.pattern not in used and (looks or ol)]
        like = max(free, key=lambda o: _alike(o[0].pattern, n.pattern), default=None)
        if like is not None and _alike(like[0].pattern, n.pattern) >= 0.5:
            pairs.append((like[0], n))
            used.add(like[0].pattern)
        elif looks:
            pairs.append((_NOTHING, n))
    pairs += [(o, _NOTHING) for o, looks in old if looks and o.pattern not in used]
    out: list[str] = []
    for before, after in pairs[:MAX_PAIRS]:
        tried = _samples(before) + _samples(after)
        found = [s for s in dict.fromkeys(_shortened(tried)) if s and _differ(before, after, s)]
        out += sorted(found, key=lambda s: (len(s), s))[:2]
    return list(dict.fromkeys(out))[:MAX_CONTRASTS]


def _alike(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def _patterns(rows: list[str]) -> list[tuple[re.Pattern[str], bool]]:
    """The string literals of ``rows`` that compile as regexes, and whether each looks
    like one (a plain word compiles too)."""
    out: dict[str, tuple[re.Pattern[str], bool]] = {}
    for row in rows:
        values, _points = _row_literals(row)
        for v in values:
            if not isinstance(v, str) or len(v) > 200 or v in out:
                continue
            try:
                out[v] = (re.compile(v), _regex_words(v) is not None)
            except (re.error, RecursionError, OverflowError):
                continue
    return list(out.values())


def _differ(a: re.Pattern[str], b: re.Pattern[str], text: str) -> bool:
    ma, mb = a.search(text), b.search(text)
    if ma is None or mb is None:
        return (ma is None) != (mb is None)
    return (ma.span(), ma.groups()) != (mb.span(), mb.groups())


def _shortened(texts: list[str]) -> list[str]:
    """The strings, and each with one of its characters left out (where a ``+`` that was
    a ``*`` now needs one), and in the other case (where a flag changed)."""
    out = list(texts)
    for t in texts:
        if len(t) <= 8:
            out += [t[:i] + t[i + 1 :] for i in range(len(t))]
    out += [t.swapcase() for t in texts]
    return out


def _samples(pattern: re.Pattern[str]) -> list[str]:
    """Short strings built by walking ``pattern``'s parse tree."""
    if pattern is _NOTHING:
        return []
    parser: Any = importlib.import_module("re._parser")  # the parser ``re`` compiles with
    try:
        tree = parser.parse(pattern.pattern)
    except (re.error, RecursionError, OverflowError):
        return []
    return _sequence(list(tree), 0)


def _sequence(items: list[tuple[Any, Any]], depth: int) -> list[str]:
    out = [""]
    for op, av in items:
        options = _node(str(op), av, depth + 1)
        out = list(dict.fromkeys(a + b for a in out for b in options))[:MAX_SAMPLES]
    return out


def _node(op: str, av: Any, depth: int) -> list[str]:
    if depth > 12:
        return [""]
    if op == "LITERAL":
        return [chr(av)]
    if op == "NOT_LITERAL":
        return [next(c for c in _POOL if ord(c) != av)]
    if op == "ANY":
        return ["a"]
    if op == "IN":
        return _in(av)
    if op == "CATEGORY":
        return [_category(str(av))]
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, sub = av
        options = _sequence(list(sub), depth)
        counts = [n for n in dict.fromkeys([low, low + 1]) if n <= high and n <= 4]
        return [o * n for n in counts for o in options[: 3 if n == 1 else 1]]
    if op == "SUBPATTERN":
        return _sequence(list(av[-1]), depth)
    if op == "ATOMIC_GROUP":
        return _sequence(list(av), depth)
    if op == "BRANCH":
        return [s for branch in av[1] for s in _sequence(list(branch), depth)][:MAX_SAMPLES]
    return [""]  # anchors, lookarounds, group references: nothing to add


def _in(items: list[tuple[Any, Any]]) -> list[str]:
    """Characters a character class takes (its literals, the ends of its ranges); for a
    negated one, one it does not exclude and those it does."""
    members: list[str] = []
    negate = False
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            members.append(chr(av))
        elif name == "RANGE":
            members += [chr(av[0]), chr(av[1])]
        elif name == "CATEGORY":
            members.append(_category(str(av)))
    if not negate:
        return list(dict.fromkeys(members))[:3] or ["a"]
    body = "".join(re.escape(m) for m in members)
    outside = [c for c in _POOL if not re.fullmatch(f"[{body}]", c)] if body else list(_POOL)
    # what it excludes too: where an old and a new class differ
    return list(dict.fromkeys(outside[:1] + members))[:3] or ["a"]


def _category(name: str) -> str:
    return {
        "CATEGORY_DIGIT": "0",
        "CATEGORY_NOT_DIGIT": "a",
        "CATEGORY_SPACE": " ",
        "CATEGORY_NOT_SPACE": "a",
        "CATEGORY_WORD": "a",
        "CATEGORY_NOT_WORD": " ",
    }.get(name, "a")


def placed(candidates: list[Candidate], strings: list[str]) -> list[Candidate]:
    """The tests' text inputs with a separator the changed lines test for (a short
    literal of punctuation: ``"#"`` of ``peek(1) == "#"``) put where separators go: at
    each end, and after each punctuation character, alone and after a space
    (``a=b`` gives ``a= #b``: a value that is only a comment). ``steer`` puts it at the
    end and in the middle only; a parser's branch often needs it right after a token."""
    marks = [s for s in strings if 0 < len(s) <= 2 and not any(c.isalnum() for c in s)]
    out: list[Candidate] = []
    for c in candidates[:MAX_PLACED_FROM]:
        for i, source in enumerate(c.args):
            for value in _placings(source, marks):
                out.append(replace(c, args=(*c.args[:i], value, *c.args[i + 1 :])))
        for j, (key, source) in enumerate(c.kwargs):
            for value in _placings(source, marks):
                kwargs = (*c.kwargs[:j], (key, value), *c.kwargs[j + 1 :])
                out.append(replace(c, kwargs=kwargs))
    out = [replace(c, origin=f"{c.origin} (placed)") for c in dict.fromkeys(out)][:MAX_PLACED]
    return out + edited(candidates, strings)  # a group emptied, a list cut (``text_edits``)


def _placings(source: str | None, marks: list[str]) -> list[str]:
    text = _text(source)
    if text is None:
        return []
    value, rebuild = text
    spots = [0, *(i + 1 for i, ch in enumerate(value) if _separator(ch)), len(value)]
    out = []
    for mark in marks:
        for at in list(dict.fromkeys(spots))[:MAX_SPOTS]:
            for piece in (mark, f" {mark}"):
                out.append(rebuild(value[:at] + piece + value[at:]))
    return list(dict.fromkeys(out))


def _text(source: str | None) -> tuple[str, Callable[[str], str]] | None:
    """The text of an argument: a string literal, or the string literal a call wraps
    (``io.StringIO('a=b')``, ``Path('x')``); and how to write the argument with other
    text."""
    try:
        node = ast.parse(source, mode="eval").body if source else None
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and node.args and not node.keywords:
        inner = node.args[0]
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            call = node

            def wrap(text: str) -> str:
                call.args[0] = ast.Constant(text)
                return ast.unparse(call)

            return (inner.value, wrap) if 0 < len(inner.value) <= 80 else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value, repr) if 0 < len(node.value) <= 80 else None
    return None


def _separator(ch: str) -> bool:
    return not ch.isalnum() and not ch.isspace() and ch != "_"
