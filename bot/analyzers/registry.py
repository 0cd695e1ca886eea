"""The built-in analyzers, one module each (``ANALYZER`` in it), and what every one shares:
which run (``NOVA_ANALYZERS``, ``NOVA_ANALYZERS_OFF``, and only those whose files the change
touches), all at once within one time budget, each on its files only.

A new analyzer is a module ``bot/analyzers/<name>.py`` whose ``ANALYZER`` is a ``Linter`` or
a ``Check`` (``bot.analyzers.base``), and its name in ``MODULES``.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from bot.analyzers.base import Analyzer, Check, Found, Linter, Workspace
from bot.analyzers.kinds import tags
from bot.analyzers.report import Report
from bot.errors import AnalyzerError, one_line, redact

if TYPE_CHECKING:
    from bot.change import Change, Comment, FileDiff
    from bot.hosts.base import TreeReader

__all__ = ["MODULES", "Ran", "analyzers", "by_name", "run_builtin", "selected"]

# The order is the order of the status lines; a project's own linter comes before the
# default it replaces.
MODULES = (
    "ruff",
    "flake8",
    "eslint",
    "biome",
    "oxlint",
    "shellcheck",
    "actionlint",
    "hadolint",
    "typecheck",
)
LINT_EXTRA = 'pip install "nova-bot[lint]"'
SYMLINK = "120000"  # git's mode for a link: its "content" is the path it points to


@cache
def analyzers() -> tuple[Analyzer, ...]:
    found: list[Analyzer] = []
    for name in MODULES:
        module = importlib.import_module(f"bot.analyzers.{name}")
        found.append(module.ANALYZER)
    return tuple(found)


def by_name(name: str) -> Analyzer | None:
    return next((a for a in analyzers() if a.name == name), None)


def selected(wanted: str, off: Sequence[str]) -> list[Analyzer]:
    """The analyzers ``NOVA_ANALYZERS`` names (``auto``: every default one; ``none``: none)
    less those ``NOVA_ANALYZERS_OFF`` names."""
    if wanted == "none":
        return []
    names = {n.strip() for n in wanted.split(",")}
    return [
        a
        for a in analyzers()
        if (a.name in names or ("auto" in names and a.default)) and a.name not in off
    ]


@dataclass
class Ran:
    """What the built-in analyzers did."""

    sources: list[tuple[str, list[Report]]] = field(default_factory=list)  # linters' reports
    comments: list[Comment] = field(default_factory=list)  # checks' findings
    outside: set[str] = field(default_factory=set)  # checks whose other-file findings stay
    covered: set[str] = field(default_factory=set)  # paths an analyzer checked
    notes: list[str] = field(default_factory=list)
    status: list[str] = field(default_factory=list)


def _wanted_files(
    chosen: list[Analyzer], files: Sequence[FileDiff], read: Callable[[str], str | None]
) -> dict[str, list[FileDiff]]:
    """Each analyzer's files: the change's added or modified text files it applies to."""
    candidates = [
        f
        for f in files
        if f.status != "deleted" and not f.is_binary and f.added_count and f.new_mode != SYMLINK
    ]
    kinds = {f.path: tags(f.path, read(f.path)) for f in candidates}
    return {a.name: [f for f in candidates if a.wants(f.path, kinds[f.path])] for a in chosen}


def run_builtin(
    chosen: list[Analyzer],
    change: Change,
    head: TreeReader | None,
    base: TreeReader | None,
    root: Path | None,
    budget: float,
    own: Callable[[str], bool] = lambda path: False,
) -> Ran:
    """Every analyzer of ``chosen`` that has files in the change, at once, within
    ``budget`` seconds. The project's own linters come first: a ``Linter`` leaves the files
    ``own`` says the project checks (results files, declared analyzers) to them, and a
    default leaves its files to the project's linter that ``replaces`` it."""
    ran = Ran()
    cache: dict[str, str | None] = {}

    def read(path: str) -> str | None:
        if path not in cache:
            cache[path] = head.read_text(path) if head is not None else None
        return cache[path]

    wanted = _wanted_files(chosen, change.files, read)
    todo: list[tuple[Analyzer, str, list[FileDiff]]] = []
    taken: dict[str, set[str]] = {}  # default analyzer -> paths a project's linter took
    for a in chosen:
        skip = taken.get(a.name, set())
        mine = [
            f
            for f in wanted[a.name]
            if f.path not in skip and not (isinstance(a, Linter) and own(f.path))
        ]
        if isinstance(a, Linter) and a.project:  # its config and install are the checkout's
            mine = [f for f in mine if _in_checkout(root, f.path, read)]
        if not mine and not (isinstance(a, Check) and a.applies and a.applies(change)):
            continue
        program = a.find(root)
        if program is None:
            if isinstance(a, Linter) and not a.project:
                ran.notes.append(
                    f"{a.name} did not run on {len(mine)} file(s): it is not installed "
                    f"({LINT_EXTRA})"
                )
            continue
        if isinstance(a, Linter) and a.replaces:
            taken.setdefault(a.replaces, set()).update(f.path for f in mine)
        todo.append((a, program, mine))
    deadline = time.monotonic() + budget
    with ThreadPoolExecutor(max_workers=max(1, min(len(todo), 4))) as pool:
        futures = [
            pool.submit(_one, a, program, mine, change, head, base, root, read, deadline)
            for a, program, mine in todo
        ]
        for (a, _, mine), future in zip(todo, futures, strict=True):
            _record(ran, a, mine, future.result())
    return ran


def _in_checkout(root: Path | None, path: str, read: Callable[[str], str | None]) -> bool:
    from bot.analyzers.running import Target, on_disk

    text = read(path)
    return text is not None and on_disk(root, Target(path, text))


def _one(
    a: Analyzer,
    program: str,
    mine: list[FileDiff],
    change: Change,
    head: TreeReader | None,
    base: TreeReader | None,
    root: Path | None,
    read: Callable[[str], str | None],
    deadline: float,
) -> list[Report] | list[Comment] | Found | str:
    """A linter's reports, a check's findings, or why it failed (one line)."""
    from bot.analyzers.running import Target, run_linter

    if isinstance(a, Check):
        left = deadline - time.monotonic()
        ws = Workspace(change, tuple(mine), head, base, root, left)
        try:
            return a.run(ws)
        except AnalyzerError as exc:
            return one_line(redact(str(exc)))
    targets = [Target(f.path, text) for f in mine if (text := read(f.path)) is not None]
    if not targets:
        return "the changed files' head content is not available"
    outcome = run_linter(a, program, targets, root, read, deadline)
    if outcome.failure:
        return one_line(redact(outcome.failure))
    return outcome.reports


def _record(
    ran: Ran,
    a: Analyzer,
    mine: list[FileDiff],
    result: list[Report] | list[Comment] | Found | str,
) -> None:
    if isinstance(result, str):
        ran.notes.append(f"{a.name} did not run: {result}")
        ran.status.append(f"{a.name}: did not run ({result})")
        return
    ran.covered.update(f.path for f in mine)
    if isinstance(result, Found):
        ran.notes += result.notes
        result = result.comments
    if isinstance(a, Check):
        comments = [replace(c, origin=a.name) for c in result if not isinstance(c, Report)]
        ran.comments += comments
        if a.outside:
            ran.outside.add(a.name)
        ran.status.append(f"{a.name}: {len(comments)} findings on {len(mine)} file(s)")
        return
    ran.sources.append((a.name, [r for r in result if isinstance(r, Report)]))


def doctor_lines(wanted: str, off: Sequence[str]) -> list[tuple[str, str, bool | None, str]]:
    """``nova doctor``'s line per analyzer: (name, where, ok, detail); ok is None when it
    is not installed or turned off (never an error: each runs only when it can)."""
    from bot.analyzers.base import version_of

    on = {a.name for a in selected(wanted, off)}
    lines: list[tuple[str, str, bool | None, str]] = []
    for a in analyzers():
        if isinstance(a, Linter) and a.project:
            lines.append((a.name, "the project's own", None, _project_note(a, on)))
            continue
        found = a.find(None)
        if found is None:
            hint = LINT_EXTRA if isinstance(a, Linter) else "not installed"
            lines.append((a.name, a.name, None, f"not installed ({hint})"))
            continue
        state = "" if a.name in on else "; turned off (NOVA_ANALYZERS, NOVA_ANALYZERS_OFF)"
        if isinstance(a, Check):
            lines.append((a.name, a.name, True, f"{found}{state}"))
            continue
        version = version_of(found, a.version_args) or "installed"
        lines.append((a.name, found, True, f"{version}{state}"))
    return lines


def _project_note(a: Linter, on: set[str]) -> str:
    state = "" if a.name in on else "; turned off (NOVA_ANALYZERS, NOVA_ANALYZERS_OFF)"
    instead = f" instead of {a.replaces}" if a.replaces else ""
    return f"runs{instead} when the checkout has its config and install, in the sandbox{state}"
