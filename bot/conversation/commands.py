"""``@nova`` commands, parsed once for every host from untrusted text.

Grammar (one command per comment: the first line, outside quotes and code, that starts with
a mention of Nova — ``@nova`` or ``NOVA_HANDLE``, or Nova's own login on the host)::

    @nova dismiss [reason]          also: ignore, false positive  (take the finding out of
    @nova dismiss always [reason]   the gate; "always": answer an [[ignore]] entry too)
    @nova explain                   or any other text: a question about the finding
    @nova review                    review the new commits
    @nova help                      this list

Not a command: a mention inside a ``>`` quote, a fenced or inline code span, an HTML comment,
or past the first ``SCAN_LIMIT`` characters (a 100 kB body costs nothing). Who wrote the
comment (a bot, Nova itself, an edited or deleted comment) is the caller's concern
(``bot.conversation.ledger``); this module sees text only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["SCAN_LIMIT", "Command", "mention_names", "parse_command"]

Kind = Literal["dismiss", "explain", "review", "help"]
SCAN_LIMIT = 8_000  # characters of a comment read for a command
TEXT_LIMIT = 2_000  # characters of a question or reason kept
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_HTML_COMMENT = re.compile(r"<!--.*?(-->|$)", re.DOTALL)
_DISMISS = re.compile(r"^(dismiss|ignore|false[ -]positive)\b[\s:,.!-]*", re.IGNORECASE)
_ALWAYS = re.compile(r"^always\b[\s:,.!-]*", re.IGNORECASE)
_WORD = re.compile(r"^(explain|review|help)\b[\s:,.!?-]*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Command:
    kind: Kind
    text: str = ""  # the reason (dismiss) or the question (explain)
    always: bool = False  # dismiss always: also answer a ready [[ignore]] entry


def mention_names(handle: str, login: str | None) -> tuple[str, ...]:
    """The names Nova answers to: the handle and its login on the host (an app's login
    ``nova[bot]`` is mentioned as ``@nova``)."""
    names = [handle.strip().lstrip("@")]
    if login:
        names.append(login.removesuffix("[bot]"))
    return tuple(dict.fromkeys(n.lower() for n in names if n))


def _visible_lines(text: str) -> Iterable[str]:
    """The lines a reader sees as the author's own words: no quotes, code or comments."""
    text = _HTML_COMMENT.sub("", text[:SCAN_LIMIT].replace("\r\n", "\n").replace("\r", "\n"))
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith(">"):
            continue
        yield _INLINE_CODE.sub("", line).strip()


def parse_command(text: str, names: Iterable[str]) -> Command | None:
    """The command in a comment's ``text`` addressed to one of ``names``, or None."""
    wanted = tuple(names)
    lines = list(_visible_lines(text))
    for i, line in enumerate(lines):
        m = re.match(r"^@([A-Za-z0-9][A-Za-z0-9_.-]*)(?![A-Za-z0-9_.-])[\s:,]*", line)
        if not m or m.group(1).lower().rstrip(".") not in wanted:
            continue
        rest = line[m.end() :].strip()
        more = "\n".join(lines[i + 1 :]).strip()
        return _command(rest, more)
    return None


def _command(rest: str, more: str) -> Command:
    dismiss = _DISMISS.match(rest)
    if dismiss:
        rest = rest[dismiss.end() :]
        always = _ALWAYS.match(rest)
        if always:
            rest = rest[always.end() :]
        reason = " ".join(rest.split())[: TEXT_LIMIT // 4]
        return Command("dismiss", reason, always=always is not None)
    word = _WORD.match(rest)
    if word:
        kind = word.group(1).lower()
        if kind == "explain":
            question = (rest[word.end() :] + "\n" + more).strip()
            return Command("explain", question[:TEXT_LIMIT])
        if kind == "review" and not rest[word.end() :].strip(" .!"):
            return Command("review")
        if kind == "help":
            return Command("help")
    question = (rest + "\n" + more).strip()
    return Command("explain", question[:TEXT_LIMIT]) if question else Command("help")
