"""What every Nova process does first: make itself non-dumpable (``nova``'s entry point
calls ``undumpable()`` before anything else, so the server, each job and every Nova
process between them and a test run are covered).

A non-dumpable process's ``/proc/<pid>`` entries (``environ``, ``mem``, ``fd``) belong to
root and it cannot be traced by its own user: a generated test running as the same user
without a PID namespace (isolation ``none``) cannot read the tokens in Nova's environment.
The flag is reset by ``execve``, so each Nova process sets it itself, and Nova's reaper
(``reaper.py``) does too. Standard library only; imported by the CLI before click.
"""

from __future__ import annotations

import contextlib
import ctypes
import re
from collections.abc import Iterable

__all__ = ["secret_names", "set_parent_death_signal", "undumpable"]

# what a variable that holds a credential is called (GITHUB_TOKEN, NOVA_LLM_API_KEY,
# NOVA_GITHUB_WEBHOOK_SECRET, a cloud SDK's ..._ACCESS_KEY, ..._PASSWORD)
_SECRETISH = re.compile(r"TOKEN|SECRET|PASSW|CREDENTIAL|(^|_)(API_?)?KEY(_|$)|ACCESS_KEY", re.I)

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4


try:  # loaded once, here: ``set_parent_death_signal`` runs between fork and exec
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
except OSError:
    _LIBC = None


def _prctl(option: int, value: int) -> bool:
    with contextlib.suppress(AttributeError):
        return _LIBC is not None and int(_LIBC.prctl(option, value, 0, 0, 0)) == 0
    return False


def undumpable() -> bool:
    """Make this process non-dumpable (Linux); False where that is not possible."""
    return _prctl(_PR_SET_DUMPABLE, 0)


def set_parent_death_signal(signum: int) -> bool:
    """Have the kernel send ``signum`` to this process when its parent dies (kept across
    ``execve``): a run never outlives the Nova process that started it."""
    return _prctl(_PR_SET_PDEATHSIG, signum)


def secret_names(names: Iterable[str]) -> list[str]:
    """The variables among ``names`` that hold a credential by their name: a child that
    needs none of them (GitPython's long-lived ``git cat-file``, dumpable again after its
    ``exec``) is started with these blanked."""
    return [n for n in names if _SECRETISH.search(n)]
