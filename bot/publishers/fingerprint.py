"""Identities that let re-runs recognise what Nova already posted, whatever the wording."""

from __future__ import annotations

import hashlib

from bot.diff.anchor import normalize_code
from bot.models import Change, Placement

__all__ = ["fingerprint", "line_key", "line_texts"]


def fingerprint(p: Placement, line_text: str) -> str:
    """File + the text of the line + origin + rule: never the model's words."""
    key = "\0".join([p.path or "", normalize_code(line_text), p.comment.origin,
                     p.comment.rule or ""])
    return hashlib.sha1(key.encode()).hexdigest()[:16]


def line_key(path: str, line_text: str) -> str:
    """Identity of a line by its content: stays the same when lines above it move."""
    return hashlib.sha1(f"{path}\0{normalize_code(line_text)}".encode()).hexdigest()[:12]


def line_texts(change: Change) -> dict[tuple[str | None, int | None], str]:
    """(path, new line) -> text, for every line of the change that is in the new file."""
    return {(f.path, ln.new_no): ln.text for f in change.files for h in f.hunks
            for ln in h.lines if ln.new_no is not None}
