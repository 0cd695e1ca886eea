r"""Model output is untrusted: what publishers do to it before a platform renders it.

A prompt-injected diff can make the model write text that notifies people (``@org/team``),
that forges Nova's own hidden markers (``<!-- nova:head:… -->``, ``nova:diff:…``) so a
later run believes a change was reviewed, or that a host or another bot reads as a command
run in Nova's name: a GitLab quick action (``/approve``, ``/merge`` — a line starting with
``/``, any case, after GitLab deleted carriage returns), Prow's ``/lgtm`` ``/approve``
``/hold`` (a line starting with ``/`` after spaces or ``>``), bors' ``bors r+``. Publishers
pass every model-written or linter text through ``clean_text`` and every suggestion through
``clean_suggestion``.

The rule for commands (``disarm``), the same on every host: every line break any reader
knows (``\r``, ``\v``, ``\f``, U+0085, U+2028…; Python's ``splitlines()`` set) becomes
``\n``, so each reader sees the same lines; a line whose first visible character (after
spaces, invisible characters and quote marks) is ``/`` and a letter gets a backslash before
it — Markdown shows ``\/`` as ``/``, and no reader takes ``\/approve`` for a command (a
``//`` comment is left alone); and the word ``bors`` before a space, ``:`` or ``,`` gets an
invisible space after its ``b`` wherever it stands.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from bot.errors import redact

__all__ = ["acts", "cap", "clean_suggestion", "clean_text", "disarm", "plain_code", "rule_label"]

_MENTION = re.compile(r"(?<![\w@`])@(?=[A-Za-z0-9_-])")
_MARKER = re.compile(r"nova:(?=fp|head|diff|line|summary)", re.IGNORECASE)
ZWSP = "\u200b"
_LINK = re.compile(r"https?://[^\s()<>\[\]\"'`\\@]{1,500}")  # no "@": no mention


# every character some reader ends a line at (str.splitlines()'s set; GitLab deletes \r)
_BREAK = re.compile("\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_BORS = re.compile(r"(?<![^\W_])(b)(?=ors(?:[\s:,]|$))", re.IGNORECASE | re.MULTILINE)
_SLASH = re.compile(r"/[^\W\d]")  # "/approve", "/lgtm"; not "//", "/*", "/ 2"
_BLANK = frozenset("\u115f\u1160\u2800\u3164\uffa0>")  # shown as nothing, or a quote


def _skipped(char: str) -> bool:
    """A character a reader may pass over before a command: space, invisible, a quote."""
    return (
        char.isspace()
        or char in _BLANK
        or unicodedata.category(char) in {"Cc", "Cf", "Cn", "Co", "Cs", "Me", "Mn", "Zs"}
    )


def _lead(line: str) -> int:
    i = 0
    while i < len(line) and _skipped(line[i]):
        i += 1
    return i


def acts(text: str) -> bool:
    """Some line of ``text`` could be read as a command (``/word`` first, or ``bors``)."""
    for line in _BREAK.sub("\n", text).split("\n"):
        if _SLASH.match(line, _lead(line)):
            return True
    return bool(_BORS.search(_BREAK.sub("\n", text)))


def disarm(text: str) -> str:
    """``text`` as every reader sees the same lines, none of them a command (see above)."""
    lines = _BREAK.sub("\n", text).split("\n")
    for n, line in enumerate(lines):
        i = _lead(line)
        if _SLASH.match(line, i):
            lines[n] = line[:i] + "\\" + line[i:]
    return _BORS.sub("\\1" + ZWSP, "\n".join(lines))


def clean_text(text: str) -> str:
    """Secrets hidden, mentions inert, no HTML comments, no Nova marker syntax, no line any
    host or bot reads as a command."""
    text = redact(text)
    text = text.replace("<!--", "&lt;!--")
    text = _MARKER.sub("nova" + ZWSP + ":", text)
    return disarm(_MENTION.sub("@" + ZWSP, text))


def clean_suggestion(suggestion: str | None) -> str | None:
    """A suggestion is code and stays exact, unless it could close its fence or carry a
    command (a Prow or bors reader does not skip fences): then none."""
    if suggestion is None or "```" in suggestion or "<!--" in suggestion or acts(suggestion):
        return None
    return redact(suggestion)


_FENCE = re.compile(r"^([^\S\n]*(?:>[^\S\n]*)*)(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)


def plain_code(text: str) -> str:
    """``text`` with no code fence a host turns into a change to commit (GitHub's and
    GitLab's ```` ```suggestion ````): the fence kind is dropped, the code stays shown."""
    return _FENCE.sub(
        lambda m: m.group(1) + m.group(2) if "suggestion" in m.group(3).lower() else m.group(0),
        text,
    )


def cap(text: str, limit: int, *, where: str) -> str:
    """``text`` cut to at most ``limit`` characters, saying so (hosts reject longer bodies,
    and one oversized model answer must not take every other finding down with it)."""
    if len(text) <= limit:
        return text
    note = f"\n\n… (cut: {len(text) - limit:,}+ characters over {where}'s limit)"
    return text[: max(0, limit - len(note))] + note


def rule_label(rule: str | None, url: str | None, clean: Callable[[str], str] = clean_text) -> str:
    """`` (rule)`` after a finding's severity, linked to the rule's documentation when
    ``url`` is a plain http(s) address; '' without a rule. Both come from a linter's results
    file or the model (untrusted): the rule is cleaned like any text, and a URL that could
    break out of the Markdown link (spaces, brackets, quotes) is left out."""
    if not rule:
        return ""
    text = clean(rule).replace("[", "\\[").replace("]", "\\]")
    if url and _LINK.fullmatch(url) and redact(url) == url and "nova:" not in url.lower():
        return f" ([{text}]({url}))"
    return f" ({text})"
