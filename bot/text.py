"""Text that came from outside, made safe to encode again.

Bytes Nova reads (a diff, a file) are decoded as UTF-8 with replacement: a Latin-1 byte
becomes U+FFFD, never an error. Text that arrived already decoded can still hold a lone
surrogate: Python reads stdin with ``surrogateescape`` (a Latin-1 ``é`` is ``'\\udce9'``),
and JSON from a host or a model may spell ``"\\ud800"``. No UTF-8 encoder takes those (the
model client, httpx, a file written as UTF-8), so they become U+FFFD too — the same
character the bytes path gives — before anything is rendered, sent or written.
"""

from __future__ import annotations

import re
from typing import TypeVar, cast

__all__ = ["decode_text", "without_surrogates", "without_surrogates_in"]

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"

T = TypeVar("T")


def decode_text(data: bytes | str) -> str:
    """UTF-8 with replacement for bytes; lone surrogates replaced in text. Never raises."""
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")
    return without_surrogates(data)


def without_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (U+D800–U+DFFF) as U+FFFD: encodable as UTF-8."""
    if text.isascii():
        return text
    try:  # the encoder finds one 4x faster than the regex (4 MB diff: 9 ms vs 40 ms)
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text)
    return text


def without_surrogates_in(value: T) -> T:
    """The same for every string inside JSON-like data (dicts, lists, tuples), keys too."""
    return cast(T, _clean(value))


def _clean(value: object) -> object:
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):  # not a NamedTuple
        return tuple(_clean(v) for v in value)
    return value
