"""Witnesses of regular expressions built at import: the module-level patterns a change
alters without a changed regex literal of their own.

Many patterns are assembled when the module is imported: a template ``.format()``-ed
with module constants (``re.compile(r"({idx})\\s*{eof}".format(idx=RGX_INDEX, ...))``),
concatenations, f-strings, ``"|".join([...])``. ``witness`` pairs changed string
literals; a changed template or constant is no regex by itself, so the strings that
tell the two patterns apart are searched on the patterns themselves:

- **The patterns** (``module_patterns``): the module's top-level assignments are folded
  as far as they are made of strings, numbers, lists and tuples of them, names bound
  before, ``+ * %``, f-strings, ``str.format`` / ``str.join`` / ``re.escape`` and the
  ``re`` flags; ``re.compile(...)`` of a folded string is a pattern, and so is a folded
  string handed to an ``re`` function elsewhere in the module (``re.match(NAME, s)``).
  Nothing of the project runs. ``changed_patterns``: the names whose full pattern or
  flags differ between the parent's source and the head's.
- **The search** (``pattern_witnesses``): strings one pattern matches and the other does
  not, or matches with other groups or span. Seeds: strings walked from both patterns'
  parse trees and the strings the project's tests pass to the functions reading them;
  each seed with a whole line dropped or doubled, a token dropped or doubled, then a
  character dropped, inserted or replaced. The patterns are untrusted: the search runs
  in a child process killed after ``HARD_SECONDS`` (a match can backtrack for ever),
  with a budget of tries and seconds, on strings of at most ``MAX_TEXT`` characters.
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.testgen.steer import _differ

__all__ = ["changed_patterns", "module_patterns", "pattern_witnesses", "search"]

MAX_VALUE = 20_000  # characters of a folded string
MAX_TEXT = 2_000  # characters of a string a pattern is tried on
MAX_SEEDS = 24
MAX_PAIRS = 4  # changed patterns searched per module
MAX_FOUND = 4  # witnesses per pattern pair
SECONDS = 1.5  # the search's own budget (all pairs)
HARD_SECONDS = 4.0  # the child is killed after this
MAX_TRIES = 20_000
_RE_FUNCS = {"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn"}
_RE_FUNCS |= {"split"}

_KEPT_ENV = ("PATH", "PYTHONPATH", "SYSTEMROOT", "LANG", "LC_ALL")

Pattern = tuple[str, int]  # (pattern, flags)


class _Compiled:
    """A folded ``re.compile(...)``."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern, self.flags = pattern, flags


class _Unknown(Exception):
    """An expression that does not fold."""


def module_patterns(source: str) -> dict[str, Pattern]:
    """name -> (pattern, flags) of the module's top-level compiled regexes and of its
    folded strings handed to an ``re`` function (see the module's doc)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    folder = _Folder(tree)
    for node in _top(tree.body):
        targets: list[ast.expr]
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        try:
            folded = folder.fold(value)
        except (_Unknown, RecursionError, MemoryError, OverflowError, ValueError, TypeError):
            for t in targets:
                if isinstance(t, ast.Name):
                    folder.env.pop(t.id, None)  # rebound to what does not fold
            continue
        for t in targets:
            if isinstance(t, ast.Name):
                folder.env[t.id] = folded
    out: dict[str, Pattern] = {}
    used = _regex_args(tree, folder.re_names)
    for name, value in folder.env.items():
        if isinstance(value, _Compiled):
            out[name] = (value.pattern, value.flags)
        elif isinstance(value, str) and name in used:
            out[name] = (value, 0)
    return out


def _top(body: list[ast.stmt]) -> list[ast.stmt]:
    """Top-level statements, with those of a top-level ``try`` / ``if`` body (in order)."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.Try):
            out += _top(node.body)
        elif isinstance(node, ast.If):
            out += _top(node.body)
        else:
            out.append(node)
    return out


def _regex_args(tree: ast.Module, re_names: set[str]) -> set[str]:
    """Names passed first to an ``re`` function anywhere in the module."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in re_names
            and node.func.attr in _RE_FUNCS
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            out.add(node.args[0].id)
    return out


class _Folder:
    """Folds expressions of constants (see ``module_patterns``)."""

    def __init__(self, tree: ast.Module) -> None:
        self.env: dict[str, Any] = {}
        self.re_names = {"re"} if _imports_re(tree, "re") else set()
        self.re_names |= _aliases(tree)

    def fold(self, node: ast.expr) -> Any:
        value = self._fold(node)
        if isinstance(value, str | bytes) and len(value) > MAX_VALUE:
            raise _Unknown
        if isinstance(value, list | tuple) and len(value) > 1000:
            raise _Unknown
        return value

    def _fold(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | int | bytes):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise _Unknown
            return self.env[node.id]
        if isinstance(node, ast.List | ast.Tuple):
            items = [self.fold(e) for e in node.elts if not isinstance(e, ast.Starred)]
            if len(items) != len(node.elts):
                raise _Unknown
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node)
        if isinstance(node, ast.Attribute):
            return self._flag(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise _Unknown

    def _binop(self, node: ast.BinOp) -> Any:
        left, right = self.fold(node.left), self.fold(node.right)
        if isinstance(node.op, ast.Add) and type(left) is type(right):
            if isinstance(left, str | bytes | list | tuple | int):
                return left + right
        if isinstance(node.op, ast.Mult):
            if isinstance(left, str | list | tuple) and type(right) is int and 0 <= right <= 100:
                return left * right
            if type(left) is int and type(right) is int:
                return left * right
        if isinstance(node.op, ast.BitOr) and type(left) is int and type(right) is int:
            return left | right
        if isinstance(node.op, ast.Mod) and isinstance(left, str):
            return left % (tuple(right) if isinstance(right, list) else right)
        raise _Unknown

    def _fstring(self, node: ast.JoinedStr) -> str:
        out = ""
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out += part.value
            elif isinstance(part, ast.FormattedValue):
                value = self.fold(part.value)
                if not isinstance(value, str | int):
                    raise _Unknown
                spec = part.format_spec
                if spec is not None and not isinstance(spec, ast.JoinedStr):
                    raise _Unknown
                shown: object = value
                if part.conversion > 0:
                    shown = str(value) if part.conversion == 115 else ascii(value)
                    shown = repr(value) if part.conversion == 114 else shown
                out += format(shown, self._fstring(spec) if spec is not None else "")
            else:
                raise _Unknown
        return out

    def _flag(self, node: ast.Attribute) -> int:
        if isinstance(node.value, ast.Name) and node.value.id in self.re_names:
            flag = getattr(re, node.attr, None)
            if isinstance(flag, re.RegexFlag):
                return int(flag)
        raise _Unknown

    def _call(self, node: ast.Call) -> Any:
        func = node.func
        if not isinstance(func, ast.Attribute):
            raise _Unknown
        if isinstance(func.value, ast.Name) and func.value.id in self.re_names:
            return self._re_call(func.attr, node)
        owner = self.fold(func.value)
        args = [self.fold(a) for a in node.args if not isinstance(a, ast.Starred)]
        if len(args) != len(node.args):
            raise _Unknown
        kwargs = {k.arg: self.fold(k.value) for k in node.keywords if k.arg is not None}
        if len(kwargs) != len(node.keywords):
            raise _Unknown
        if not isinstance(owner, str):
            raise _Unknown
        if func.attr == "format":
            return owner.format(*args, **kwargs)
        if func.attr == "join" and len(args) == 1 and isinstance(args[0], list | tuple):
            if all(isinstance(a, str) for a in args[0]):
                return owner.join(args[0])
        if func.attr in ("replace", "upper", "lower", "strip", "rstrip", "lstrip") and not kwargs:
            if all(isinstance(a, str | int) for a in args):
                return getattr(owner, func.attr)(*args)
        raise _Unknown

    def _re_call(self, name: str, node: ast.Call) -> Any:
        args = [self.fold(a) for a in node.args]
        kwargs = {k.arg: self.fold(k.value) for k in node.keywords if k.arg is not None}
        if name == "escape" and len(args) == 1 and isinstance(args[0], str):
            return re.escape(args[0])
        if name == "compile" and args and isinstance(args[0], str):
            flags = args[1] if len(args) > 1 else kwargs.get("flags", 0)
            if type(flags) is not int:
                raise _Unknown
            return _Compiled(args[0], flags)
        raise _Unknown


def _imports_re(tree: ast.Module, name: str) -> bool:
    return any(
        isinstance(n, ast.Import) and any(a.name == name and not a.asname for a in n.names)
        for n in tree.body
    )


def _aliases(tree: ast.Module) -> set[str]:
    return {
        a.asname
        for n in tree.body
        if isinstance(n, ast.Import)
        for a in n.names
        if a.name == "re" and a.asname
    }


def changed_patterns(head_source: str, parent_source: str) -> list[tuple[str, Pattern, Pattern]]:
    """(name, parent's, head's) of the module patterns whose text or flags differ."""
    head, parent = module_patterns(head_source), module_patterns(parent_source)
    out = [(n, parent[n], head[n]) for n in head if n in parent and parent[n] != head[n]]
    return out[:MAX_PAIRS]


# ---- the search (in a child process) ----


def pattern_witnesses(
    pairs: Sequence[tuple[Pattern, Pattern]], seeds: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(seed, witness) for each pair of patterns (parent's, head's): a string the two
    match differently, with the seed it was made from ("" for one walked from the
    patterns); the search runs in a child process (the patterns are untrusted)."""
    if not pairs:
        return []
    text = json.dumps(
        {
            "pairs": [[list(a), list(b)] for a, b in pairs],
            "seeds": [s for s in dict.fromkeys(seeds) if len(s) <= MAX_TEXT][: MAX_SEEDS * 4],
        }
    )
    try:
        run = subprocess.run(
            [sys.executable, "-m", "bot.testgen.modregex"],
            input=text,
            capture_output=True,
            text=True,
            timeout=HARD_SECONDS,
            check=False,
            # nothing of Nova's environment (its tokens) where untrusted patterns run;
            # this package found wherever Nova runs from (installed or a bare clone)
            env=_child_env(),
        )
        output = run.stdout
    except subprocess.TimeoutExpired as exc:  # a match that backtracks: what it found first
        raw = exc.stdout or ""
        output = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    found: list[tuple[str, str]] = []
    for line in output.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        if isinstance(row, list) and len(row) == 2 and all(isinstance(r, str) for r in row):
            found.append((row[0], row[1]))
    return found


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _KEPT_ENV}
    here = str(Path(__file__).resolve().parents[2])  # the folder holding ``bot``
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    return env


def search(
    old: Pattern, new: Pattern, seeds: Sequence[str], budget: float, emit: Any = None
) -> list[tuple[str, str]]:
    """(seed, witness) pairs the two patterns match differently (see the module's doc)."""
    from bot.testgen.steer import _samples

    try:
        a, b = re.compile(old[0], old[1]), re.compile(new[0], new[1])
    except (re.error, RecursionError, OverflowError, ValueError, TypeError):
        return []
    stop = time.monotonic() + budget
    walked = list(dict.fromkeys(_samples(a) + _samples(b)))
    edges = _edges(a) + _edges(b)
    # the texts either pattern finds something in first: a line dropped from those
    # is where a part made optional shows
    seeds = sorted(seeds, key=lambda s: a.search(s) is None and b.search(s) is None)[:MAX_SEEDS]
    # the characters at and just past each end of a class's ranges first: where a class
    # that changed (``[^\000-\037]`` -> ``[^\000\010\012-\037]``) tells the two apart
    chars = list(dict.fromkeys(edges + list("".join(walked) + "_a0 .-\n")))[:40]
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    tries = 0
    # the tests' own strings first (their witnesses are inputs like theirs; a seed the
    # two already tell apart is an input already: its edits are what is new), then the
    # strings walked from the patterns fill up
    groups = [
        ([(s, s) for s in seeds], MAX_FOUND - 1, (_lines, _tokens, _chars)),
        ([("", s) for s in walked], MAX_FOUND, (_whole, _lines, _tokens, _chars)),
    ]
    for group, cap, levels in groups:
        for level in levels:
            for seed, text in group:
                for variant in level(text, chars):
                    if variant in seen or len(variant) > MAX_TEXT:
                        continue
                    seen.add(variant)
                    tries += 1
                    if tries > MAX_TRIES or time.monotonic() > stop:
                        return found
                    if variant and _apart(a, b, variant):
                        found.append((seed, variant))
                        if emit is not None:
                            emit(seed, variant)
                        break  # one witness per seed and level: others from other seeds
                if len(found) >= cap:
                    break
            if len(found) >= cap:
                break
    return found


def _apart(a: re.Pattern[str], b: re.Pattern[str], text: str) -> bool:
    """Whether the two patterns find other things in ``text``: the first match (its
    span and groups), or the spans of the first matches ``finditer`` walks (a pattern a
    parser applies at each position of its input)."""
    if _differ(a, b, text):
        return True
    return [m.span() for m in itertools.islice(a.finditer(text), 50)] != [
        m.span() for m in itertools.islice(b.finditer(text), 50)
    ]


def _edges(pattern: re.Pattern[str]) -> list[str]:
    """The literal characters of ``pattern``'s classes and the ends of their ranges, each
    with its neighbours (code points one below and one above)."""
    import importlib

    parser: Any = importlib.import_module("re._parser")
    try:
        tree = parser.parse(pattern.pattern, pattern.flags)
    except (re.error, RecursionError, OverflowError, ValueError, TypeError):
        return []
    points: list[int] = []
    stack: list[Any] = [list(tree)]
    while stack and len(points) < 60:
        for op, av in stack.pop():
            name = str(op)
            if name == "IN":
                for kind, value in av:
                    if str(kind) == "LITERAL":
                        points += [value - 1, value, value + 1]
                    elif str(kind) == "RANGE":
                        points += [value[0] - 1, value[0], value[1], value[1] + 1]
            elif isinstance(av, tuple | list):
                stack += [list(p) for p in av if isinstance(p, parser.SubPattern)]
                stack += [list(p) for p in _branches(av, parser)]
    return [
        chr(p) for p in dict.fromkeys(points) if 0 <= p <= 0x10FFFF and not 0xD800 <= p <= 0xDFFF
    ]


def _branches(av: Any, parser: Any) -> list[Any]:
    """The sub-patterns held one level down (a branch's alternatives)."""
    out: list[Any] = []
    for part in av:
        if isinstance(part, list):
            out += [p for p in part if isinstance(p, parser.SubPattern)]
    return out


def _whole(text: str, chars: list[str]) -> list[str]:
    return [text]


def _lines(text: str, chars: list[str]) -> list[str]:
    """The text with one of its lines dropped, then with one doubled."""
    rows = text.splitlines(keepends=True)
    if len(rows) < 2:
        return []
    dropped = ["".join(rows[:i] + rows[i + 1 :]) for i in range(len(rows))]
    doubled = ["".join(rows[: i + 1] + rows[i:]) for i in range(len(rows))]
    return dropped + doubled


_TOKEN = re.compile(r"\w+|[^\w\s]+")


def _tokens(text: str, chars: list[str]) -> list[str]:
    """The text with one token (a word, or a run of punctuation) dropped or doubled."""
    spans = [m.span() for m in _TOKEN.finditer(text)][:200]
    out = [text[:i] + text[j:] for i, j in spans]
    return out + [text[:j] + text[i:j] + text[j:] for i, j in spans]


def _chars(text: str, chars: list[str]) -> list[str]:
    """The text with one character dropped, inserted or replaced by one of ``chars``."""
    out: list[str] = []
    for i in range(min(len(text), 200) + 1):
        out += [text[:i] + c + text[i:] for c in chars]
        if i < len(text):
            out += [text[:i] + text[i + 1 :]] + [text[:i] + c + text[i + 1 :] for c in chars]
    return out


def _main() -> None:
    """The child: read the pairs and seeds (JSON on stdin), print each witness as found
    (a JSON line ``[seed, witness]``), so a kill keeps what was found before it."""
    data = json.loads(sys.stdin.read())
    seeds = [str(s) for s in data.get("seeds", [])]
    pairs = data.get("pairs", [])
    budget = SECONDS / max(1, len(pairs))

    def emit(seed: str, text: str) -> None:
        print(json.dumps([seed, text]), flush=True)

    for old, new in pairs:
        search((str(old[0]), int(old[1])), (str(new[0]), int(new[1])), seeds, budget, emit)


if __name__ == "__main__":
    _main()
