"""Multi-line inputs steered line by line: a line broken in two, for a change about line
breaks; a changed literal at a line's start and end, for a reader that goes line by line.

When the changed lines test for a line break (a string literal holding ``"\\n"``, a
``splitlines()``, a ``cleandoc`` or ``dedent`` of a continuation), the inputs that reach
them are the project's own text inputs with one line continued on the next: a parameter
spec ``ratio (Optional[float], optional): ...`` written over two lines, a call's argument
list wrapped after a comma. A line is broken where text is naturally wrapped: at a space
inside brackets first (Python, type hints, SQL, every format with brackets joins the
lines there), else at its last space; the continuation is indented four spaces further
than the line. Only the project's string arguments are edited, never made up.

A changed string literal (``if line.strip().startswith("#")``) is put at the start of a
line's content and at the end of a line of the project's multi-line inputs: appended to
the whole text it lands after a trailing blank line, and in its middle inside a word.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import replace

from bot.testgen.inputs import Candidate

__all__ = ["about_line_breaks", "broken_lines", "placed_in_lines"]

MAX_BROKEN = 16  # inputs made this way, per function
_PER_VALUE = 3  # variants of one string
_BREAK_CALLS = re.compile(
    r"\.splitlines\(|\bcleandoc\(|\bdedent\(|\bindent\(|\bre\.(M|MULTILINE)\b|\blinesep\b"
)
MAX_PLACED = 12  # inputs with a changed literal put at a line's start or end, per function


def about_line_breaks(source: str, lines: list[int]) -> bool:
    """Whether a changed line is about line breaks: a string literal with a line break
    (``"\\n" in before``, ``split("\\n", 1)``) or a call that splits or re-indents lines."""
    rows = source.split("\n")
    for n in lines:
        if not 0 < n <= len(rows):
            continue
        code = rows[n - 1]
        if _BREAK_CALLS.search(code) or "\\n" in code or "\\r" in code:
            return True
    return False


def _break_at(line: str, at: int) -> str:
    indent = len(line) - len(line.lstrip(" "))
    return line[:at].rstrip(" ") + "\n" + " " * (indent + 4) + line[at:].lstrip(" ")


def _bracketed_spaces(line: str) -> list[int]:
    """The positions of the spaces inside brackets of one line (first of each run)."""
    depth = 0
    out = []
    for i, ch in enumerate(line):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == " " and depth and line[i - 1] != " ":
            out.append(i)
    return out


def _variants(text: str) -> tuple[list[str], list[str]]:
    """(``text`` with one line broken inside brackets, ... broken at its last space):
    one variant a line, at most a few."""
    rows = text.split("\n")
    inside: list[str] = []
    last: list[str] = []
    for i, row in enumerate(rows):
        spaces = _bracketed_spaces(row)
        body = row.strip(" ")
        if spaces:
            inside.append("\n".join([*rows[:i], _break_at(row, spaces[0]), *rows[i + 1 :]]))
        elif " " in body:
            at = row.rstrip(" ").rindex(" ")
            last.append("\n".join([*rows[:i], _break_at(row, at), *rows[i + 1 :]]))
    return inside[:_PER_VALUE], last[:_PER_VALUE]


def _text(source: str | None) -> tuple[str, Callable[[str], str]] | None:
    """The text of an argument and how to write it with another text: a string literal,
    or a call of one (``io.StringIO('a=1\\nb=2')``: a reader of streams gets its text so)."""
    try:
        node = ast.parse(source, mode="eval").body if source else None
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value, repr) if len(node.value) <= 2000 else None
    if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
        return None
    first, call = node.args[0], node
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    if len(first.value) > 2000:
        return None

    def written(text: str) -> str:
        return ast.unparse(ast.Call(call.func, [ast.Constant(text)], []))

    return first.value, written


def broken_lines(candidates: list[Candidate], source: str, lines: list[int]) -> list[Candidate]:
    """The candidates' string arguments with one line broken in two, when the changed
    lines are about line breaks: breaks inside brackets of multi-line texts first, then
    of one-line texts, then breaks at a line's last space."""
    if not about_line_breaks(source, lines):
        return []
    ranked: list[tuple[int, int, Candidate]] = []  # (kind of break, n-th of its value, input)
    for c in candidates:
        origin = f"{c.origin} (line broken)"
        places = [("a", i, s) for i, s in enumerate(c.args)]
        places += [("k", j, s) for j, (_, s) in enumerate(c.kwargs)]
        for kind, i, arg in places:
            found = _text(arg)
            if found is None:
                continue
            text, written = found
            inside, last = _variants(text)
            for rank, group in ((0 if "\n" in text else 1, inside), (2, last)):
                for n, new in enumerate(group):
                    if kind == "a":
                        made = replace(c, args=(*c.args[:i], written(new), *c.args[i + 1 :]))
                    else:
                        key = c.kwargs[i][0]
                        kwargs = (*c.kwargs[:i], (key, written(new)), *c.kwargs[i + 1 :])
                        made = replace(c, kwargs=kwargs)
                    ranked.append((rank, n, replace(made, origin=origin)))
    ranked.sort(key=lambda r: r[:2])  # one variant of each input before a second one
    return list(dict.fromkeys(c for *_, c in ranked))[:MAX_BROKEN]


def _placed(text: str, literal: str) -> list[str]:
    """``text`` with ``literal`` at the end of its first line that has content, at the
    start (after the indentation) and the end of its last: where a line-by-line reader
    tests it (``line.startswith("#")``, ``line.endswith("\\")``), which the end of the
    whole text (often a blank line) or its middle (inside a word) is not."""
    rows = text.split("\n")
    full = [i for i, row in enumerate(rows) if row.strip()]
    if not full:
        return []
    out = []
    for i, at_start in ((full[0], False), (full[-1], True), (full[-1], False)):
        row = rows[i]
        indent = len(row) - len(row.lstrip())
        new = row[:indent] + literal + row[indent:] if at_start else row.rstrip() + literal
        out.append("\n".join([*rows[:i], new, *rows[i + 1 :]]))
    return list(dict.fromkeys(v for v in out if v != text))


def placed_in_lines(candidates: list[Candidate], strings: list[str]) -> list[Candidate]:
    """The candidates' multi-line string arguments with each changed string literal
    (not a line break itself) at a line's start and end; one variant of each input
    before a second one."""
    literals = [s for s in strings if s.strip() and "\n" not in s and "\r" not in s]
    ranked: list[tuple[int, Candidate]] = []
    for c in candidates:
        origin = f"{c.origin} (steered)"
        for i, arg in enumerate(c.args):
            found = _text(arg)
            if found is None or "\n" not in found[0].strip():
                continue
            text, written = found
            variants = [v for s in literals for v in _placed(text, s)]
            for n, new in enumerate(variants):
                args = (*c.args[:i], written(new), *c.args[i + 1 :])
                ranked.append((n, replace(c, args=args, origin=origin)))
    ranked.sort(key=lambda r: r[0])
    return list(dict.fromkeys(c for _, c in ranked))[:MAX_PLACED]
