"""What kind of file a path is, the way pre-commit tells it: by name (``identify``'s table of
extensions and file names: ``Dockerfile``, ``.tsx``, ``.bashrc``) and, for a file whose name
says nothing, by its shebang (``#!/usr/bin/env bash`` is a shell script). Read from the
head revision's text, never from the disk, so a review of any range sees what the change
holds."""

from __future__ import annotations

import io
from functools import lru_cache
from pathlib import PurePosixPath

__all__ = ["tags"]


@lru_cache(maxsize=4096)
def _by_name(name: str) -> frozenset[str]:
    from identify.identify import tags_from_filename

    return frozenset(tags_from_filename(name))


def _by_shebang(text: str) -> frozenset[str]:
    from identify.identify import parse_shebang, tags_from_interpreter

    if not text.startswith("#!"):
        return frozenset()
    first = text.split("\n", 1)[0].encode("utf-8", "replace")
    command = parse_shebang(io.BytesIO(first + b"\n"))
    return frozenset(tags_from_interpreter(command[0])) if command else frozenset()


def tags(path: str, text: str | None) -> frozenset[str]:
    """``identify``'s tags for ``path`` whose head content is ``text`` (None: unknown):
    ``{"text", "shell", "bash"}`` for ``bin/setup`` starting ``#!/bin/bash``."""
    found = _by_name(PurePosixPath(path).name)
    if text is not None and not (found - {"text"}):
        found = found | _by_shebang(text)
    return found
