"""Just enough JavaScript lexing to find where a call's parentheses close: strings, template
literals (with ``${...}``), comments and regex literals are skipped. Used to remove dropped
top-level tests from a generated file and to negate a condition for a mutant. It is not a
parser: every file it edits is checked afterwards by running it (see ``NodeTestRunner``)."""

from __future__ import annotations

__all__ = ["JsScanError", "matching_close", "statement_end"]

_PAIRS = {"(": ")", "[": "]", "{": "}"}
# after these a "/" starts a regex literal, otherwise it divides
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^")
_REGEX_WORDS = {
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
    "instanceof",
}


class JsScanError(ValueError):
    """The text is not balanced as far as this scanner can tell."""


def _end_string(text: str, i: int) -> int:
    quote = text[i]
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i
        if c == "\n":
            break
        i += 1
    raise JsScanError("unterminated string")


def _end_template(text: str, i: int) -> int:
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "`":
            return i
        elif text.startswith("${", i):
            i = _close(text, i + 2, "}") + 1
        else:
            i += 1
    raise JsScanError("unterminated template literal")


def _end_regex(text: str, i: int) -> int:
    i += 1
    in_class = False
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "\n":
            break
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            return i
        i += 1
    raise JsScanError("unterminated regex literal")


def _close(text: str, i: int, closer: str, depth: int = 0) -> int:
    """Index of ``closer`` that ends the bracket group starting at ``i``."""
    if depth > 200:
        raise JsScanError("nested too deeply")
    prev = "("
    n = len(text)
    while i < n:
        c = text[i]
        if c == closer:
            return i
        if c in ")]}":
            raise JsScanError(f"unbalanced {c!r}")
        if c in _PAIRS:
            i = _close(text, i + 1, _PAIRS[c], depth + 1) + 1
            prev = _PAIRS[c]
        elif c in "'\"":
            i, prev = _end_string(text, i) + 1, "a"
        elif c == "`":
            i, prev = _end_template(text, i) + 1, "a"
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise JsScanError("unterminated comment")
            i = end + 2
        elif c == "/" and (prev in _REGEX_AFTER or prev in _REGEX_WORDS):
            i, prev = _end_regex(text, i) + 1, "a"
        elif c.isspace():
            i += 1
        elif c.isalnum() or c in "_$":
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            i, prev = j, text[i:j]
        else:
            i, prev = i + 1, c
    raise JsScanError(f"no closing {closer!r}")


def matching_close(text: str, open_at: int) -> int:
    """Index of the bracket closing the one at ``open_at``."""
    opener = text[open_at]
    if opener not in _PAIRS:
        raise JsScanError(f"{opener!r} is not an opening bracket")
    return _close(text, open_at + 1, _PAIRS[opener])


def statement_end(text: str, start: int) -> int:
    """For a call statement whose callee starts at ``start`` (``test(...)``,
    ``describe.skip(...)``, ``test("x", fn).then(...)``), the index just after it: past
    the last ``)`` of the call chain and an optional ``;``."""
    i = start
    n = len(text)
    while i < n and (text[i].isalnum() or text[i] in "_$."):
        i += 1
    while i < n and text[i] in " \t":
        i += 1
    if i >= n or text[i] != "(":
        raise JsScanError("not a call")
    end = matching_close(text, i) + 1
    while True:  # a chained call: test(...).then(...)
        j = end
        while j < n and text[j] in " \t":
            j += 1
        if j < n and text[j] == ".":
            k = j + 1
            while k < n and (text[k].isalnum() or text[k] in "_$"):
                k += 1
            if k < n and text[k] == "(":
                end = matching_close(text, k) + 1
                continue
        break
    if end < n and text[end] == ";":
        end += 1
    return end
