"""What an analyzer is: a few declared fields, the way a pre-commit hook is.

- ``Linter``: a command-line linter. What it applies to (``wants``: a path and its
  ``identify`` tags), how it is run (``program`` and ``args``, the files appended), how its
  output is read (``parse``: bytes to ``Finding``s, paths as the tool wrote them). The
  runner (``bot.analyzers.running``) does the rest: choosing the files, running them in the
  checkout or on a copy of the head, in parallel, within the time budget, inside the
  sandbox when ``sandboxed`` (a project's own configuration that can run code).
- ``Check``: a function over the change and its head and base trees that returns
  ``Comment``s (the differential type check is one). Its findings on changed files are
  kept to the added lines like every other analyzer's; with ``outside`` its findings in
  files the change did not touch are kept too, and go to the summary (the anchor cannot
  place them on the diff).

A new analyzer is one module with one of these and one entry in ``bot.analyzers.registry``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.analyzers.report import Finding
    from bot.change import Change, Comment, FileDiff
    from bot.hosts.base import GrepHit, Source, TreeReader

__all__ = [
    "Analyzer",
    "BaseFiles",
    "Check",
    "Found",
    "Linter",
    "Workspace",
    "base_tree",
    "bin_dirs",
    "find_program",
    "version_of",
]

Wants = Callable[[str, frozenset[str]], bool]


@dataclass(frozen=True)
class Workspace:
    """What a ``Check`` is given: the change (the files the review covers), its head and
    base revisions' files, and the checkout of the head when there is one on disk."""

    change: Change
    files: tuple[FileDiff, ...]  # the changed files this analyzer wants
    head: TreeReader | None
    base: TreeReader | None
    root: Path | None
    timeout: float  # seconds left of the analyzers' time budget


@dataclass(frozen=True)
class Linter:
    name: str
    wants: Wants
    program: str  # the executable, beside Nova's Python first, then on PATH
    args: tuple[str, ...]  # before the file names
    parse: Callable[[bytes], list[Finding]]
    package: str  # what installs it (the doctor's hint)
    version_args: tuple[str, ...] = ("--version",)
    configs: tuple[str, ...] = ()  # config files it reads by itself (copied to a staged run)
    locate: Callable[[Path | None], str | None] | None = None  # where else to look for it
    project: bool = False  # the project's own linter: runs only when the checkout has it
    sandboxed: bool = False  # its configuration can run code: bot.sandbox, no tokens
    replaces: str | None = None  # the default analyzer it takes precedence over
    default: bool = True  # runs under NOVA_ANALYZERS=auto

    def find(self, root: Path | None) -> str | None:
        """The executable to run, or None when it is not installed."""
        return self.locate(root) if self.locate else find_program(self.program)


@dataclass(frozen=True)
class Found:
    """What a check may return besides its findings: notes for the summary."""

    comments: list[Comment]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Check:
    name: str
    wants: Wants
    run: Callable[[Workspace], list[Comment] | Found]
    available: Callable[[], str | None]  # its version; None: not installed
    outside: bool = False  # findings in files the change did not touch go to the summary
    default: bool = True
    # whether it runs on this change, when ``wants`` (on the added or modified files) is not
    # the whole story (deleting a module breaks its importers): then ``files`` may be empty
    applies: Callable[[Change], bool] | None = None

    def find(self, root: Path | None) -> str | None:
        return self.available()


Analyzer = Linter | Check


def bin_dirs() -> tuple[str, ...]:
    """Where pip put the linters' executables: beside the running Python (a venv's bin)."""
    dirs = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    return tuple(dict.fromkeys(d for d in dirs if d and os.path.isdir(d)))


def find_program(name: str) -> str | None:
    path = os.pathsep.join([*bin_dirs(), os.environ.get("PATH", "")])
    return shutil.which(name, path=path)


@lru_cache(maxsize=32)
def version_of(program: str, args: tuple[str, ...]) -> str:
    """The version ``program --version`` prints (``1.89.0``; '' when it names none)."""
    try:
        out = subprocess.run(
            [program, *args], capture_output=True, text=True, timeout=20, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    found = re.search(r"\d+(?:\.\d+)+", out)
    return found.group(0) if found else ""


class BaseFiles:
    """The base revision's files, read one by one through ``Source.read_base`` (a host
    with no checkout): it cannot list or search them."""

    def __init__(self, read: Callable[[str], bytes | None]) -> None:
        self._read = read

    def read_text(self, path: str) -> str | None:
        from bot.diff import decode_diff

        data = self._read(path)
        return None if data is None or b"\x00" in data[:8192] else decode_diff(data)

    def list_files(self) -> list[str]:
        return []

    def grep(self, pattern: str, *, regex: bool = False, limit: int = 50) -> list[GrepHit]:
        return []


def base_tree(source: Source, change: Change) -> TreeReader | None:
    """A reader of the change's base revision: git's tree at the base commit when the
    source is a repository, else the host's ``read_base``."""
    from bot.errors import SourceError
    from bot.hosts.git.source import GitSource, GitTree

    if change.base_ref is None or change.source == "stdin":
        return None
    if isinstance(source, GitSource):
        try:
            return GitTree(source.repo, source.commit(change.base_ref).hexsha)
        except SourceError:  # not in this repository (a shallow clone): no base tree
            return None
    return BaseFiles(lambda path: source.read_base(change, path))
