"""Faithful readers of the commands other programs find in a comment Nova posts, written
from each program's rules (LIBRARY-NOTES "Text that acts"), independently of Nova's code:

- GitLab quick actions: carriage returns deleted, lines split at ``\\n`` only; a line is a
  command when it starts with ``/`` and a name (any case) at column 0; only a fenced block
  opened at column 0 *and closed* hides its lines.
- Prow (``/lgtm``, ``/approve``, ``/hold``…): a line starting with ``/`` and a name after
  optional spaces, quote marks ``>`` or invisible characters; fences hide nothing, and every
  line break any library knows (Python's ``splitlines()`` set) ends a line.
- bors (``bors r+``, ``bors merge``, ``bors try``…): the word ``bors`` and a command word,
  anywhere in a line, any case.
"""

from __future__ import annotations

import re
import unicodedata

from tests.servers.gitlab_threads import quick_actions

__all__ = ["bors_commands", "commands", "gitlab_quick_actions", "prow_commands"]

_NAME = re.compile(r"/([A-Za-z][\w-]*)")
_BORS = re.compile(
    r"(?<![^\W_])bors[\s:,]+(r\+|r-|r=\S*|merge|try|retry|delegate|d\+|d=\S*|d-|ping|p=\S*|"
    r"cancel|single|treeclosed)",
    re.IGNORECASE,
)
_SKIPPED = frozenset(">\u115f\u1160\u2800\u3164\uffa0")


def gitlab_quick_actions(body: str) -> list[str]:
    """The local GitLab server's reading, the one it runs (``tests/servers/gitlab_threads``)."""
    return [name for name, _arg in quick_actions(body)[0]]


def _invisible(char: str) -> bool:
    return (
        char.isspace()
        or char in _SKIPPED
        or unicodedata.category(char) in {"Cc", "Cf", "Cn", "Co", "Cs", "Me", "Mn", "Zs"}
    )


def prow_commands(body: str) -> list[str]:
    found = []
    for line in body.splitlines():
        rest = line
        while rest and _invisible(rest[0]):
            rest = rest[1:]
        m = _NAME.match(rest)
        if m:
            found.append(m.group(1).lower())
    return found


def bors_commands(body: str) -> list[str]:
    return [m.group(1).lower() for line in body.splitlines() for m in _BORS.finditer(line)]


def commands(body: str) -> list[str]:
    """Every command any of the three readers finds in ``body``."""
    return gitlab_quick_actions(body) + prow_commands(body) + bors_commands(body)
