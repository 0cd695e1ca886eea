"""Witnesses of a changed mini-language literal: values that the parent's literal and
the head's literal at the same place treat differently, found by comparing the two
literals alone (the project is never run for it).

Many fixes change a literal written in a small language: a regular expression, a
format spec, a ``%`` format, a strftime pattern, a prefix or a separator. The project's
tests rarely hold a value the two literals tell apart (``"0x{:02}"`` -> ``"0x{:02x}"``
prints bytes below 10 alike), so inputs are steered towards the witnesses:

- **Pairs** (``literal_pairs``): each string literal of the changed head lines with the
  parent's literal at the same place (same position among the statement's literals, or
  the most alike one); an f-string is read as the ``str.format`` template it amounts to.
- **Regex**: short strings built from both patterns' parse trees, the tests' own short
  strings, and each with one character dropped, inserted or replaced (by characters of
  the literals' classes), kept when one pattern matches and the other does not, or
  matches with other groups; under a time budget, strings at most ``MAX_SEED`` long.
- **Format spec / ``%`` format**: integers (0..300, negatives, large) and floats that the
  two templates print differently (or one of them refuses); a number that fits in a
  byte also becomes bytes holding it.
- **strftime**: the texts a few dates print as under each pattern, when they differ.
- **Prefix / separator**: the old and the new literal themselves.

``placed`` puts a text witness into a test's value where the changed statement looks:
right after another literal of the same statement (``current == "."`` next to the
regex: ``"a.b"`` -> ``"a._"``; ``[".", "b"]`` -> ``[".", "_"]``), in place of a word,
at its end, and alone; a numeric witness replaces a number, or a byte of a bytes value.
"""

from __future__ import annotations

import ast
import datetime as dt
import difflib
import io
import json
import re
import string
import time
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.testgen.modregex import MAX_TEXT, changed_patterns, pattern_witnesses
from bot.testgen.steer import _alike, _differ, _regex_words, _samples, _shortened

if TYPE_CHECKING:
    from bot.testgen.differential import DifferentialPlan
    from bot.testgen.matrix import Target

__all__ = ["Witnesses", "changed_rows", "literal_pairs", "placed", "steer_plans", "witnesses"]

MAX_TEXTS = 6
MAX_NUMBERS = 6
MAX_SEED = 24  # characters of a string a regex is tried on
MAX_TRIES = 3000  # strings tried per regex pair
SECONDS = 0.5  # per regex pair
MAX_PLACED = 8  # values made from one test value

_FIELD_PLAIN = re.compile(r"^(\d*|[A-Za-z_]\w*)$")
# directives only a date pattern has (``%d``, ``%x``, ``%f`` are numbers' too)
_STRFTIME = re.compile(r"%[-#]?[aAbBHIjmMpSUwWyYzZGuV]")
_PERCENT = re.compile(r"%(\([^)]*\))?[-+ #0]*(\d+|\*)?(\.\d+)?[diouxXeEfFgGcrsa]")
_WORD = re.compile(r"\w+")
_DATES = (
    dt.datetime(2021, 12, 9, 3, 31, 20, 123456),
    dt.datetime(1999, 1, 2, 13, 4, 5),
    dt.datetime(2000, 2, 29, 0, 0, 0),
)
_NUMBERS: tuple[int | float, ...] = (
    *range(0, 301),
    -1,
    -10,
    -255,
    1000,
    4096,
    65535,
    2**31,
    10**6,
    0.5,
    1.5,
    2.25,
    -0.5,
    3.14159,
    1e-7,
    1e20,
    100.0,
)


@dataclass(frozen=True)
class Witnesses:
    """What a change's literals tell apart, and where in an input it belongs."""

    texts: tuple[str, ...] = ()  # strings a changed regex / pattern / prefix treats differently
    numbers: tuple[int | float, ...] = ()  # values a changed format prints differently
    context: tuple[str, ...] = ()  # the changed statements' other short literals
    # (a test's string, the witness made from it): a changed module-level pattern's
    # witness made by editing an input the tests pass (``modregex``) replaces it whole
    rewrites: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.texts or self.numbers or self.rewrites)

    def merged(self, other: Witnesses) -> Witnesses:
        return Witnesses(
            tuple(dict.fromkeys(self.texts + other.texts))[:MAX_TEXTS],
            tuple(dict.fromkeys(self.numbers + other.numbers))[:MAX_NUMBERS],
            tuple(dict.fromkeys(self.context + other.context)),
            tuple(dict.fromkeys(self.rewrites + other.rewrites))[:MAX_TEXTS],
        )


def changed_rows(
    head_source: str, parent_source: str | None, lines: list[int]
) -> tuple[list[str], list[str]]:
    """The head's changed rows and the parent's rows they replace."""
    head = head_source.split("\n")
    added = [head[n - 1] for n in sorted(set(lines)) if 0 < n <= len(head)]
    if parent_source is None:
        return added, []
    parent = parent_source.split("\n")
    wanted, removed = set(lines), []
    matcher = difflib.SequenceMatcher(None, parent, head, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        span = set(range(j1 + 1, j2 + 1)) if j2 > j1 else {j1, j1 + 1}
        if tag != "equal" and span & wanted:
            removed += parent[i1:i2]
    return added, removed


def witnesses(
    head_source: str,
    parent_source: str | None,
    lines: list[int],
    seeds: Sequence[str] = (),
    plain: bool = True,
) -> Witnesses:
    """The witnesses of the literals ``lines`` of the head changed (the parent's rows
    they replace read from ``parent_source``); ``seeds`` are the tests' own strings;
    ``plain``: a changed prefix or separator's two literals too. Where a changed line
    is top-level code, the module's patterns built at import that it changed come
    first (``modregex``)."""
    if parent_source is None:
        return Witnesses()
    added, removed = changed_rows(head_source, parent_source, lines)
    pairs = literal_pairs(added, removed)
    built = _built_witnesses(head_source, parent_source, lines, seeds)
    texts: list[str] = [w for _s, w in built]
    numbers: list[int | float] = []
    for old, new in pairs:
        texts += regex_witnesses(old, new, seeds)
        numbers += format_witnesses(old, new)
        texts += strftime_witnesses(old, new)
        texts += plain_witnesses(old, new) if plain else []
    paired = {s for p in pairs for s in p}
    context = [
        s
        for s in dict.fromkeys(_strings(added) + _strings(removed))
        if s not in paired and 0 < len(s) <= 4
    ]
    return Witnesses(
        tuple(dict.fromkeys(texts))[:MAX_TEXTS],
        tuple(dict.fromkeys(numbers))[:MAX_NUMBERS],
        tuple(context),
        tuple(dict.fromkeys((s, w) for s, w in built if s)),
    )


def _built_witnesses(
    head_source: str, parent_source: str, lines: list[int], seeds: Sequence[str]
) -> list[tuple[str, str]]:
    """(seed, witness) of the module-level patterns whose full text or flags the change
    altered, when a changed line is top-level code (``modregex``)."""
    if not _top_level(head_source, lines):
        return []
    pairs = [(old, new) for _n, old, new in changed_patterns(head_source, parent_source)]
    return pattern_witnesses(pairs, seeds) if pairs else []


def _top_level(source: str, lines: list[int]) -> bool:
    """Whether one of ``lines`` is in a top-level statement other than a def or class."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    wanted = set(lines)
    return any(
        wanted & set(range(n.lineno, (n.end_lineno or n.lineno) + 1))
        for n in tree.body
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    )


# ---- the literals at the same place ----


def _strings(rows: list[str]) -> list[str]:
    """The string literals of ``rows`` in order; an f-string as its format template."""
    out: list[str] = []
    for row in rows:
        for tok in _tokens(row):
            value = _template(tok) if tok[:1] not in "#" else None
            if value is not None:
                out.append(value)
    return out


def _tokens(row: str) -> list[str]:
    """The string tokens of one row, up to where it stops making sense alone (a row
    of a statement continued on the next: ``x = f(["a",``)."""
    out: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(row.strip() + "\n").readline):
            if tok.type == tokenize.STRING:
                out.append(tok.string)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the tokens before the end are read
    return out


def _template(token: str) -> str | None:
    """A string token's value; an f-string's as a ``str.format`` template (each
    replacement field a positional ``{}`` with its conversion and spec)."""
    try:
        node = ast.parse(token, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if not isinstance(node, ast.JoinedStr):
        return None
    out = ""
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            out += part.value.replace("{", "{{").replace("}", "}}")
        elif isinstance(part, ast.FormattedValue):
            spec = ""
            if part.format_spec is not None:
                inner = part.format_spec
                if not isinstance(inner, ast.JoinedStr) or not all(
                    isinstance(v, ast.Constant) for v in inner.values
                ):
                    return None  # a nested field: its spec depends on a value
                spec = ":" + "".join(str(getattr(v, "value", "")) for v in inner.values)
            conv = f"!{chr(part.conversion)}" if part.conversion > 0 else ""
            out += "{" + conv + spec + "}"
    return out


def literal_pairs(added: list[str], removed: list[str]) -> list[tuple[str, str]]:
    """(parent's, head's) string literals at the same place that differ: the replaced
    stretches of the two literal sequences, position by position when they are as long,
    else each head literal with the most alike parent literal."""
    new, old = _strings(added), _strings(removed)
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        before, after = old[i1:i2], new[j1:j2]
        if len(before) == len(after):
            out += list(zip(before, after, strict=True))
            continue
        for n in after:
            like = max(before, key=lambda o: _alike(o, n))
            if _alike(like, n) >= 0.5:
                out.append((like, n))
    return list(dict.fromkeys(p for p in out if p[0] != p[1]))


# ---- witnesses of each kind ----


def regex_witnesses(old: str, new: str, seeds: Sequence[str] = ()) -> list[str]:
    """Short strings the two patterns match differently (shortest first), when either
    looks like a regex and both compile."""
    if _regex_words(old) is None and _regex_words(new) is None:
        return []
    try:
        a, b = re.compile(old), re.compile(new)
    except (re.error, RecursionError, OverflowError, ValueError):
        return []
    start = time.monotonic()
    tried = _samples(a) + _samples(b) + [s for s in seeds if len(s) <= MAX_SEED][:40]
    chars = list(dict.fromkeys("".join(_samples(a) + _samples(b)) + "_a0 .-"))[:24]
    found: list[str] = []
    for i, text in enumerate(dict.fromkeys(_shortened(tried) + _mutated(tried, chars))):
        if i >= MAX_TRIES or time.monotonic() - start > SECONDS:
            break
        if text and len(text) <= MAX_SEED and _differ(a, b, text):
            found.append(text)
    return sorted(dict.fromkeys(found), key=lambda s: (len(s), s))[:4]


def _mutated(texts: list[str], chars: list[str]) -> list[str]:
    """Each text with one character dropped, inserted or replaced by one of ``chars``."""
    out: list[str] = []
    for t in texts:
        if len(t) > MAX_SEED:
            continue
        for i in range(len(t) + 1):
            out += [t[:i] + c + t[i:] for c in chars]
            if i < len(t):
                out += [t[:i] + t[i + 1 :]] + [t[:i] + c + t[i + 1 :] for c in chars]
    return out


def format_witnesses(old: str, new: str) -> list[int | float]:
    """Numbers the two templates (``str.format`` or ``%``) print differently: those both
    print first (the smallest two, the largest byte, the rest), then those one refuses."""
    render_old, render_new = _renderer(old), _renderer(new)
    if render_old is None or render_new is None:
        return []
    both: list[int | float] = []
    one: list[int | float] = []
    for v in _NUMBERS:
        a, b = render_old(v), render_new(v)
        if a != b:
            (both if a is not None and b is not None else one).append(v)
    ints = [v for v in both if type(v) is int and 0 <= v <= 300]
    byte = [v for v in ints if v <= 255][-1:]
    others = [v for v in both if v not in ints]  # negative, large, a float
    ordered = ints[:2] + byte + others + ints[2:] + one
    return list(dict.fromkeys(ordered))[:MAX_NUMBERS]


def _renderer(template: str) -> _Render | None:
    """How ``template`` prints one value put in all its fields (None: it prints none,
    or a field names an attribute or an item)."""
    try:
        fields = [f for _t, f, _s, _c in string.Formatter().parse(template) if f is not None]
    except ValueError:
        fields = []
    if fields and all(_FIELD_PLAIN.match(f) for f in fields):
        numbered = [int(f) for f in fields if f.isdigit()]
        count = max(numbered) + 1 if numbered else fields.count("")
        names = {f for f in fields if f and not f.isdigit()}
        return _Render(lambda v: template.format(*[v] * count, **dict.fromkeys(names, v)))
    percent = _PERCENT.findall(template.replace("%%", ""))
    if percent and not _STRFTIME.search(template.replace("%%", "")):
        keys = {k[1:-1] for k, _w, _p in percent if k}
        if keys:
            return _Render(lambda v: template % dict.fromkeys(keys, v))
        return _Render(lambda v: template % tuple([v] * len(percent)))
    return None


class _Render:
    def __init__(self, render: Callable[[int | float], str]) -> None:
        self.render = render

    def __call__(self, value: int | float) -> str | None:
        try:
            out = self.render(value)
        except (ValueError, TypeError, KeyError, IndexError, OverflowError):
            return None
        return out if isinstance(out, str) else None


def strftime_witnesses(old: str, new: str) -> list[str]:
    """The texts a few dates print as under each pattern, where the two differ."""
    if not (_STRFTIME.search(old) and _STRFTIME.search(new)):
        return []
    out: list[str] = []
    for d in _DATES:
        try:
            a, b = d.strftime(old), d.strftime(new)
        except (ValueError, OverflowError):
            continue
        if a != b:
            out += [b, a]
    return out[:4]


def plain_witnesses(old: str, new: str) -> list[str]:
    """A prefix, suffix or separator: the literal that does not hold the other first
    (a value holding ``#`` but not ``# ``), then the other; words only, short."""
    if _STRFTIME.search(old) or "{" in old + new or len(old) > 20 or len(new) > 20:
        return []
    if _regex_words(old) is not None or _regex_words(new) is not None:
        return []
    ordered = sorted([old, new], key=lambda s: old in s and new in s)
    return [s for s in ordered if s]


# ---- witnesses put into the tests' values ----


def placed(value: object, w: Witnesses) -> list[object]:
    """Values like ``value`` (a test's input) holding a witness: see the module's doc."""
    out: list[object] = []
    if isinstance(value, str):
        out = [new for old, new in w.rewrites if old == value]
        out += [t for text in w.texts for t in _into_text(value, text, w.context)]
    elif isinstance(value, bytes):
        out = [b for n in w.numbers if type(n) is int and 0 <= n <= 255 for b in _into(value, n)]
        for text in w.texts:
            try:
                raw = text.encode("latin-1")
            except UnicodeEncodeError:
                continue
            out += [value + raw, raw]
    elif type(value) is int or type(value) is float:
        out = [n for n in w.numbers if n != value]
    elif isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        out = [r for text in w.texts for r in _into_tokens(value, text, w.context)]
    seen: list[object] = []
    for v in out:
        if v != value and v not in seen:
            seen.append(v)
    return seen[:MAX_PLACED]


def _into_text(value: str, text: str, context: tuple[str, ...]) -> list[str]:
    """``value`` with ``text`` in place of the word right after a context literal (or
    right after it), in place of its last and first words, at its end, and alone."""
    out: list[str] = []
    for c in context:
        at = value.find(c)
        while at >= 0 and len(out) < 4:
            end = at + len(c)
            word = _WORD.match(value, end)
            stop = word.end() if word else end
            out.append(value[:end] + text + value[stop:])
            at = value.find(c, end)
    words = list(_WORD.finditer(value))
    for m in [*words[-1:], *words[:1]]:
        out.append(value[: m.start()] + text + value[m.end() :])
    return [*out, value + text, text]


def _into_tokens(
    value: list[str] | tuple[str, ...], text: str, context: tuple[str, ...]
) -> list[object]:
    """A token list with ``text`` as the token after a context token, or as its last."""
    spots = [i + 1 for i, tok in enumerate(value[:-1]) if tok in context][:3] + [len(value) - 1]
    out: list[object] = []
    for i in dict.fromkeys(spots):
        items = [*value[:i], text, *value[i + 1 :]]
        out.append(items if isinstance(value, list) else tuple(items))
    return out


def _into(value: bytes, number: int) -> list[bytes]:
    """``value`` with its first (and last) byte made ``number``, and the byte alone."""
    one = bytes([number])
    if not value:
        return [one]
    return [one + value[1:], value[:-1] + one, one]


# ---- the differential generator's inputs ----

MAX_INPUTS = 24  # witness inputs per function
MAX_FROM = 12  # of the tests' inputs they are made from


def steer_plans(
    plans: list[DifferentialPlan],
    targets: list[Target],
    head: Callable[[str], str | None],
    parent: Callable[[str], str | None],
) -> list[str]:
    """Put inputs holding the witnesses of the changed literals each function reaches
    before its other inputs (``head`` and ``parent`` read a file on each side); notes."""
    notes: list[str] = []
    # a pattern built at import is searched from the tests' longer texts too (a whole
    # file's text, where a line made optional tells the two apart)
    every = [s for p in plans for i in p.functions.values() for e in i for s in _texts(e, MAX_TEXT)]
    every = list(dict.fromkeys(every))
    seeds = [s for s in every if len(s) <= MAX_SEED][:40] + [s for s in every if len(s) > MAX_SEED]
    known: dict[tuple[str, str], Witnesses] = {}  # each target's, made once
    for plan in plans:
        for name, inputs in plan.functions.items():
            via = set(plan.via.get(name, []))
            reached = {name, name.rsplit(".", 1)[0], *via}
            found = Witnesses()
            for t in targets:
                if t.path.endswith(".py") and (
                    (t.path == plan.path and t.qualname in reached) or t.qualname in via
                ):
                    key = (t.path, t.qualname)
                    if key not in known:
                        # a plain literal already steers there (``steering_literals``)
                        known[key] = witnesses(
                            head(t.path) or "", parent(t.path), t.lines, seeds, plain=False
                        )
                    found = found.merged(known[key])
            made = _witness_inputs(inputs, found) if found else []
            if made:
                plan.functions[name] = made + inputs
                notes.append(
                    f"differential: {plan.path}::{name}: {len(made)} inputs hold values the "
                    "changed literals treat differently"
                )
    return notes


def _texts(entry: dict[str, object], longest: int = MAX_SEED) -> list[str]:
    out: list[str] = []
    for source in _sources(entry):
        value = _value(source)
        if isinstance(value, str) and len(value) <= longest:
            out.append(value)
    return out


def _sources(entry: dict[str, object]) -> list[str]:
    args, kwargs = entry.get("args"), entry.get("kwargs")
    ctor = entry.get("ctor")
    out = [s for s in (args if isinstance(args, list) else []) if isinstance(s, str)]
    out += [s for s in (kwargs.values() if isinstance(kwargs, dict) else []) if isinstance(s, str)]
    if isinstance(ctor, dict):
        out += _sources(ctor)
    return out


def _value(source: str | None) -> object:
    try:
        return ast.literal_eval(source) if source else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


def _witness_inputs(inputs: list[dict[str, object]], w: Witnesses) -> list[dict[str, object]]:
    """Copies of the inputs with one argument (a constructor's too) holding a witness:
    the first placement of every argument, then the second, ..."""
    slots: list[list[dict[str, object]]] = []
    used = 0  # the first inputs with an argument a witness fits in
    rewritten = {old for old, _new in w.rewrites}
    # the inputs a witness was made from first: it replaces their text whole
    ordered = sorted(inputs, key=lambda e: not rewritten & set(_texts(e, MAX_TEXT)))
    for entry in ordered:
        if used >= MAX_FROM:
            break
        mine = _variants(entry, w)
        ctor = entry.get("ctor")
        if isinstance(ctor, dict):
            mine += [[{**entry, "ctor": c} for c in group] for group in _variants(ctor, w)]
        used += bool(mine)
        slots += mine
    seen = {json.dumps(e, sort_keys=True) for e in inputs}
    out: list[dict[str, object]] = []
    for k in range(MAX_PLACED):
        for group in slots:
            key = json.dumps(group[k], sort_keys=True) if k < len(group) else None
            if key is not None and key not in seen and len(out) < MAX_INPUTS:
                seen.add(key)
                out.append(group[k])
    return out


def _variants(entry: dict[str, object], w: Witnesses) -> list[list[dict[str, object]]]:
    """Per argument of ``entry`` (positional, then keyword): ``entry`` with it holding
    each witness placement."""
    out: list[list[dict[str, object]]] = []
    args, kwargs = entry.get("args"), entry.get("kwargs")
    for i, source in enumerate(args if isinstance(args, list) else []):
        values = placed(_value(source), w) if isinstance(source, str) else []
        out.append([{**entry, "args": [*args[:i], repr(v), *args[i + 1 :]]} for v in values])  # type: ignore[index]
    for key, source in kwargs.items() if isinstance(kwargs, dict) else []:
        values = placed(_value(source), w) if isinstance(source, str) else []
        out.append([{**entry, "kwargs": {**kwargs, key: repr(v)}} for v in values])  # type: ignore[dict-item]
    return [group for group in out if group]
