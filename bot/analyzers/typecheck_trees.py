"""The two revisions a differential type check compares, and the errors new at the head.

A revision is written out of git's object store (not the work tree, which may hold other
edits) into a directory of its own: only the Python files (``.py``, ``.pyi``) and the
project's type checker configuration (``pyproject.toml``, ``ty.toml`` at the root), so a
repository of many assets costs little. Both trees get the BASE revision's configuration: the
check runs with the same settings on both sides, and a change cannot reconfigure its own
check (the same rule as ``.nova.toml``).

Diagnostics are matched between the two trees by file, rule, message and the text of their
line, never by line number, so code that only moved is not new; a renamed file is matched
under its new path. What is left at the head is what the change newly breaks.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bot.errors import AnalyzerError

__all__ = [
    "CONFIG_FILES",
    "PYTHON_SUFFIXES",
    "STAGED",
    "Diagnostic",
    "first_party",
    "has_revision",
    "line_text",
    "materialize",
    "new_in_head",
    "python_paths",
    "renames",
]

STAGED = ":staged"  # bot.hosts.git.source.STAGED: the index is the head
CONFIG_FILES = ("pyproject.toml", "ty.toml", "pyrightconfig.json")
PYTHON_SUFFIXES = (".py", ".pyi")
GIT_TIMEOUT = 60.0
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One type error: ``path`` relative to the tree, ``line`` 1-based, ``text`` the line."""

    path: str
    line: int
    rule: str
    message: str
    text: str = ""


def _git(repo: Path, *args: str, index: Path | None = None, stdin: bytes | None = None) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=repo,
            env=env,
            input=stdin,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AnalyzerError(f"git {args[0]} failed: {exc}") from exc
    if proc.returncode != 0:
        detail = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["?"])[-1]
        raise AnalyzerError(f"git {args[0]} failed: {detail[:200]}")
    return proc.stdout


def has_revision(repo: Path, rev: str) -> bool:
    """Whether ``repo`` holds ``rev`` (a shallow CI clone may lack the base)."""
    if rev == STAGED:
        return True
    try:
        _git(repo, "cat-file", "-e", f"{rev}^{{tree}}")
    except AnalyzerError:
        return False
    return True


def _wanted(path: str, mode: str) -> bool:
    """A regular file (no link, no submodule) that is Python source or root configuration."""
    return mode in ("100644", "100755") and (path.endswith(PYTHON_SUFFIXES) or path in CONFIG_FILES)


def python_paths(repo: Path, rev: str) -> list[str]:
    """The Python files and root configuration files of ``rev`` (``STAGED``: the index)."""
    if rev == STAGED:
        out = _git(repo, "ls-files", "-s", "-z")  # <mode> <sha> <stage>\t<path>
    else:
        out = _git(repo, "ls-tree", "-r", "-z", "--full-tree", rev)  # <mode> <type> <sha>\t
    paths = []
    for entry in out.split(b"\0"):
        meta, sep, raw = entry.partition(b"\t")
        if not sep:
            continue
        path = raw.decode("utf-8", "surrogateescape")
        if _wanted(path, meta.split(b" ", 1)[0].decode()):
            paths.append(path)
    return sorted(set(paths))


def materialize(repo: Path, rev: str, dest: Path, paths: Sequence[str], scratch: Path) -> None:
    """Write ``paths`` of revision ``rev`` under ``dest`` (git's own checkout, through an
    index of our own in ``scratch``: the repository's index and work tree are untouched)."""
    dest.mkdir(parents=True, exist_ok=True)
    if not paths:
        return
    index = scratch / f"{dest.name}.index"
    try:
        if rev == STAGED:
            real = Path(_git(repo, "rev-parse", "--git-path", "index").decode().strip())
            shutil.copyfile(real if real.is_absolute() else repo / real, index)
        else:
            _git(repo, "read-tree", rev, index=index)
        prefix = str(dest.resolve()) + os.sep
        listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
        _git(repo, "checkout-index", "-f", "-z", "--stdin", f"--prefix={prefix}", index=index,
             stdin=listing)  # fmt: skip
    except OSError as exc:
        raise AnalyzerError(f"could not write revision {rev[:12]}: {exc}") from exc
    finally:
        index.unlink(missing_ok=True)


def renames(repo: Path, base: str, head: str) -> dict[str, str]:
    """Old path -> new path of the files git sees renamed from ``base`` to ``head`` (all
    of them: the review may have left some out of the change)."""
    args = ["--cached", base] if head == STAGED else [base, head]
    out = _git(repo, "diff", "-M", "--name-status", "-z", *args)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, str] = {}
    i = 0
    while i < len(fields) - 1:
        status = fields[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                found[fields[i + 1]] = fields[i + 2]
            i += 3
        else:
            i += 2
    return found


def first_party(paths: Iterable[str]) -> set[str]:
    """Names a top-level import of the project's own code may start with: every directory
    and module name in the tree (``src/pkg/a.py`` gives ``src``, ``pkg``, ``a``)."""
    names: set[str] = set()
    for path in paths:
        p = PurePosixPath(path)
        if p.suffix in PYTHON_SUFFIXES:
            names.update(p.parent.parts)
            names.add(p.stem)
    return names


def line_text(tree: Path, path: str, line: int, cache: dict[str, list[str]]) -> str:
    """The text of ``line`` in ``tree/path``; '' when there is none."""
    if path not in cache:
        try:
            cache[path] = (tree / path).read_text("utf-8", "replace").split("\n")
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1].rstrip("\r") if 0 < line <= len(lines) else ""


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def new_in_head(
    base: Sequence[Diagnostic], head: Sequence[Diagnostic], renamed: dict[str, str]
) -> list[Diagnostic]:
    """The head's diagnostics the base does not have. First matched exactly (file under its
    head name, rule, message, the stripped text of the line, each base diagnostic used
    once); then a base diagnostic left over matches a head one of the same file, rule and
    message whose line was edited. Line numbers never take part: moved code is not new."""

    def exact(d: Diagnostic, path: str) -> tuple[str, str, str, str]:
        return (path, d.rule, _norm(d.message), _norm(d.text))

    before = Counter(exact(d, renamed.get(d.path, d.path)) for d in base)
    left: list[Diagnostic] = []
    for d in head:
        key = exact(d, d.path)
        if before[key] > 0:
            before[key] -= 1
        else:
            left.append(d)
    loose: Counter[tuple[str, str, str]] = Counter()
    for key, n in before.items():
        if n > 0:
            loose[key[:3]] += n
    new = []
    for d in left:
        key3 = exact(d, d.path)[:3]
        if loose[key3] > 0:
            loose[key3] -= 1
        else:
            new.append(d)
    return new
