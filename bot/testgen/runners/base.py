"""The interface every framework's runner implements, and what they share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from bot.testgen.frameworks import Framework
from bot.testgen.workspace import Workspace

__all__ = ["Lines", "PruneFailed", "Runner", "relative"]

Lines = dict[str, set[int]]  # repo-relative file -> line numbers


class PruneFailed(ValueError):
    """Dropped tests could not be removed from a file without touching the kept ones."""


class Runner(ABC):
    """The interface; ``PytestRunner`` and ``NodeTestRunner`` implement all of it."""

    language = ""

    def __init__(self, fw: Framework, test_timeout: float = 20.0, memory_mb: int = 1024) -> None:
        self.fw = fw
        self.test_timeout = test_timeout
        self.memory_mb = memory_mb
        # node id (``rel::name``) -> why the test hit a limit: it is dropped with this reason
        self.limit_hits: dict[str, str] = {}
        # node id -> what failed in its last failing run (the assertion, the exception);
        # ``rel::*``: why the file's tests did not run at all
        self.failures: dict[str, str] = {}
        self.coverage_failure: str | None = None  # why the last coverage run gave nothing
        self.stopped = False  # the last coverage run reached its run_seconds
        # lines the last per-test coverage run executed outside every test (imports at
        # collection): a module's top-level code runs there (``modstate.import_hits``)
        self.imported: Lines = {}

    run_margin = 60.0  # seconds a run may take beyond its tests' limits (start-up, imports)

    def run_timeout(self, tests: int) -> float:
        """A run of ``tests`` tests ends by then, whatever they do."""
        return min(300.0, self.test_timeout * max(tests, 1) + self.run_margin)

    @abstractmethod
    def collect(self, ws: Workspace, rel: str) -> tuple[list[str], dict[str, bool] | None]:
        """The tests in ``rel`` (their names inside the file; empty when it cannot load),
        and their outcomes when collecting had to run them (that counts as a run)."""

    def outcomes(
        self, ws: Workspace, rel: str, names: list[str], *, failing: bool = False
    ) -> dict[str, bool]:
        """Run the named tests of ``rel`` once: pass/fail per name (absent: did not run).
        A run that left processes behind or wrote outside the workspace is run again one
        test at a time; a test that does it alone fails, and ``ws.escapes`` says why (the
        gates drop it with that reason, whatever else it did).

        ``failing``: a run of code the tests are expected to fail on (the parent's, a
        mutant's). What a project's own failure hook writes outside then (a conftest that
        dumps the compared values to /tmp when an assert fails) is not the test's doing and
        is thrown away with the run's sandbox; processes left and files planted in the
        tree still count."""
        ran, escape = self.run_once(ws, rel, names, outside=not failing)
        if escape is None:
            return ran
        if len(names) == 1:
            ws.escapes[f"{rel}::{names[0]}"] = escape
            return {names[0]: False}
        out: dict[str, bool] = {}
        for name in names:
            out.update(self.outcomes(ws, rel, [name], failing=failing))
        return out

    @abstractmethod
    def run_once(
        self, ws: Workspace, rel: str, names: list[str], *, outside: bool = True
    ) -> tuple[dict[str, bool], str | None]:
        """Run the named tests of ``rel`` together once: pass/fail per name, and why the
        run cannot be trusted (``RunResult.escape``, files written outside counted only
        when ``outside``), or None."""

    @abstractmethod
    def per_test_lines(self, ws: Workspace, rel: str, names: list[str]) -> dict[str, Lines]:
        """Lines each test executes (absent: it could not be measured on its own)."""

    @abstractmethod
    def line_coverage(
        self, ws: Workspace, test_args: list[str], timeout: float = 300.0, run_seconds: float = 0.0
    ) -> tuple[Lines, Lines] | None:
        """(executed, not executed) lines per file while running ``test_args`` (the whole
        suite when empty), or None when the run could not be measured. ``run_seconds``:
        no test starts after that long (what ran until then is measured; ``stopped``
        says so)."""

    @abstractmethod
    def syntax_ok(self, ws: Workspace, rel: str) -> bool:
        """Whether the file as it is now in the workspace parses (mutants that do not are
        skipped: every test would "kill" them)."""

    def unit(self, name: str) -> str:
        """The smallest part of a file that holds this test and can be cut out alone."""
        return name

    @abstractmethod
    def cut(self, ws: Workspace, rel: str, keep: set[str], collected: list[str]) -> str | None:
        """The file's text without the ``collected`` tests not in ``keep``; None when none
        is left."""

    def prune(self, ws: Workspace, rel: str, keep: set[str], collected: list[str]) -> str | None:
        """``cut``, then proved: the new file's tests are exactly ``keep``, or
        ``PruneFailed``."""
        if keep == set(collected):
            return ws.read(rel)  # nothing to cut
        text = self.cut(ws, rel, keep, collected)
        if text is None:
            return None
        with ws.replaced({rel: text}):
            left = set(self.collect(ws, rel)[0])
        if left != keep:
            raise PruneFailed(
                f"after removing the dropped tests the file has {sorted(left)}, not {sorted(keep)}"
            )
        return text


def relative(ws: Workspace, name: str) -> str:
    path = Path(name)
    root = ws.root.resolve()
    if path.is_absolute() and path.resolve().is_relative_to(root):
        return path.resolve().relative_to(root).as_posix()
    return name
