"""Paths in results files, made repository-relative — or refused, never guessed.

Tools write paths relative to where they ran, absolute (``/home/runner/work/app/app/x.js``)
or as ``file://`` URIs. A path is accepted only when it is inside the repository: relative
to the directory the tool ran in, or absolute under the repository's root (as given or
with symlinks resolved). A path under another root (a container's ``/src``) is refused:
mapping it onto a changed file by its suffix would be a guess.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["Roots", "repo_relative"]

_DRIVE = re.compile(r"^[A-Za-z]:/")


class Roots:
    """The repository root as given and as resolved (symlinks), as POSIX strings."""

    def __init__(self, root: Path | None) -> None:
        forms = []
        if root is not None:
            absolute = os.path.abspath(root)
            forms = [absolute, os.path.realpath(absolute)]
        self.forms = [f.replace("\\", "/").rstrip("/") for f in dict.fromkeys(forms)]


def _from_uri(text: str) -> str | None:
    parts = urlsplit(text)
    if parts.scheme != "file":
        return None
    if parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    return path[1:] if _DRIVE.match(path[1:]) else path  # file:///C:/x → C:/x


def repo_relative(raw: str, roots: Roots, base: str = "") -> str | None:
    """``raw`` as a path relative to the repository root, or None when it is not inside it.
    ``base``: the repository-relative directory the tool ran in ('' for the root)."""
    text = raw.strip()
    if not text or "\x00" in text:
        return None
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.\-]*://", text) or text.startswith("file:"):
        found = _from_uri(text)
        if found is None:
            return None
        text = found
    text = text.replace("\\", "/")
    if text.startswith("/") or _DRIVE.match(text):
        absolute = posixpath.normpath(text)
        for root in roots.forms:
            if absolute.startswith(root + "/"):
                return _clean(absolute[len(root) + 1 :])
        return None
    return _clean(posixpath.join(base, text))


def _clean(rel: str) -> str | None:
    rel = posixpath.normpath(rel)
    if rel in (".", "") or rel == ".." or rel.startswith("../") or rel.startswith("/"):
        return None
    return rel
