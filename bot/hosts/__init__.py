"""Change sources: ``resolve(spec)`` picks one from the change reference.

| reference                                        | source      |
|--------------------------------------------------|-------------|
| ``HEAD`` (default), a SHA, ``A..B``, ``A...B``, ``:staged``, ``-`` (stdin) | git |
| ``D123``, ``D123:4567``                          | Phabricator |
| ``owner/repo#12``, a pull request URL            | GitHub      |
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO

from bot.config import Settings
from bot.hosts.base import Source, TreeReader

__all__ = ["Source", "TreeReader", "classify", "resolve"]

_PHAB = re.compile(r"^D\d+(?::\d+)?$")
_GITHUB = re.compile(r"^[\w.-]+/[\w.-]+#\d+$|^https?://[^/]+/[\w.-]+/[\w.-]+/pull/\d+")


def classify(spec: str) -> str:
    """'phabricator', 'github' or 'git' for a change reference."""
    if _PHAB.match(spec):
        return "phabricator"
    if _GITHUB.match(spec):
        return "github"
    return "git"


def resolve(spec: str, *, repo: Path, settings: Settings | None = None,
            stdin: IO[str] | None = None) -> Source:
    kind = classify(spec)
    if kind == "git":
        from bot.hosts.git.source import GitSource

        return GitSource(repo, stdin=stdin)
    if kind == "github":
        from bot.hosts.github.source import GitHubSource

        return GitHubSource(settings or Settings(), repo)
    from bot.hosts.phabricator.source import PhabricatorSource

    return PhabricatorSource(settings or Settings(), repo)
