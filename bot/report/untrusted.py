"""Model output is untrusted: what publishers do to it before a platform renders it.

A prompt-injected diff can make the model write text that notifies people (``@org/team``),
or that forges Nova's own hidden markers (``<!-- nova:head:… -->``, ``nova:diff:…``) so a
later run believes a change was reviewed. Publishers pass every model-written text through
``clean_text`` and every suggestion through ``clean_suggestion``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.errors import redact

__all__ = ["cap", "clean_suggestion", "clean_text", "rule_label"]

_MENTION = re.compile(r"(?<![\w@`])@(?=[A-Za-z0-9_-])")
_MARKER = re.compile(r"nova:(?=fp|head|diff|line|summary)", re.IGNORECASE)
ZWSP = "\u200b"
_LINK = re.compile(r"https?://[^\s()<>\[\]\"'`\\@]{1,500}")  # no "@": no mention


def clean_text(text: str) -> str:
    """Secrets hidden, mentions inert, no HTML comments, no Nova marker syntax."""
    text = redact(text)
    text = text.replace("<!--", "&lt;!--")
    text = _MARKER.sub("nova" + ZWSP + ":", text)
    return _MENTION.sub("@" + ZWSP, text)


def clean_suggestion(suggestion: str | None) -> str | None:
    """A suggestion is code and stays exact, unless it could close its fence (then none)."""
    if suggestion is None or "```" in suggestion or "<!--" in suggestion:
        return None
    return redact(suggestion)


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
