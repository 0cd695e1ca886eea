"""Test generation for callers other than ``nova testgen`` (the MCP server): the same job
and ``run_testgen``, stopped after a stage (``until``) or given the caller's tests to check
instead of generating (``given``), and each checked test's verdict as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.events import EventBus
    from bot.testgen.gates import TestCase
    from bot.testgen.report import TestgenResult

__all__ = ["Interpreter", "run_stages", "verdict"]


@dataclass(frozen=True)
class Interpreter:
    """What the CLI reads from its own environment to choose the project's Python."""

    virtual_env: str | None = None
    path_python: str | None = None


def run_stages(
    settings: Settings,
    ref: str,
    repo: Path,
    bus: EventBus,
    interpreter: Interpreter,
    *,
    until: str | None = None,
    given: dict[str, str] | None = None,
    publish: str = "local",
    patch_dir: Path = Path("."),
    runs: int = 3,
) -> TestgenResult:
    """``nova testgen REF`` up to stage ``until`` (all of them when None)."""
    from bot.hosts import resolve
    from bot.steps import StepTracker
    from bot.testgen.pipeline import TestgenJob, run_testgen

    job = TestgenJob(
        settings=settings,
        source=resolve(ref, repo=repo, settings=settings),
        ref=ref,
        repo=repo,
        bus=bus,
        tracker=StepTracker(bus),
        generator="llm" if settings.llm_enabled else "differential",
        runs=runs,
        publish=publish,
        patch_dir=patch_dir,
        virtual_env=interpreter.virtual_env,
        path_python=interpreter.path_python,
        given=given,
        until=until,
    )
    return run_testgen(job)


def verdict(case: TestCase, runs: int) -> dict[str, Any]:
    """One checked test as an agent reads it: did it pass every run, fail, or flip; does it
    fail on the parent commit (it catches the change, or it only uses a name the change
    added); kept, or dropped with the reason."""
    e = case.evidence
    passed = e.get("runs")
    status = (
        None
        if passed is None  # never ran: not collected, or not written
        else "passed"
        if passed == runs
        else "failed"
        if passed == 0
        else "flaky"
    )
    return {
        "path": case.path,
        "name": case.name,
        "status": status,
        "runs_passed": passed,
        "runs": runs,
        "fails_on_parent": e.get("fails_on_parent"),
        "catches_change": bool(e.get("catches_change")),
        "new_name_only": bool(e.get("new_name")),
        "mutant_killed": e.get("mutant_killed"),
        "changed_lines": e.get("changed_lines", {}),
        "targets": case.targets,
        "kept": case.reason is None,
        "reason": case.reason,
    }
