"""The order of test generation's stages: fetch-change → detect-test-framework →
analyze-test-matrix → generate-tests → check-tests → run-full-suite → propose.

Only this module knows that order; the CLI calls in. Heavy parts (the extras' libraries, the
model) are imported inside the stages, after ``require_extra`` said they are installed.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.errors import ModelError, UsageError
from bot.events import DoneEvent, EventBus
from bot.hosts.base import Source
from bot.steps import StepTracker

if TYPE_CHECKING:
    from bot.testgen.report import TestgenResult
    from bot.testgen.runners import Runner
    from bot.testgen.workspace import Workspace

__all__ = ["TestgenJob", "run_testgen"]


@dataclass
class TestgenJob:
    settings: Settings
    source: Source
    ref: str
    repo: Path
    bus: EventBus
    tracker: StepTracker
    generator: str = "llm"  # llm | differential | ghostwriter
    max_iterations: int = 3
    runs: int = 3
    publish: str = "local"  # local | github | phabricator
    patch_dir: Path = Path(".")
    session_id: str = field(default_factory=lambda: f"nova-{uuid.uuid4().hex[:12]}")
    virtual_env: str | None = None  # VIRTUAL_ENV of the caller (the CLI reads it)
    path_python: str | None = None  # `python` on the caller's PATH


def run_testgen(job: TestgenJob) -> TestgenResult:
    """fetch-change → detect-test-framework → analyze-test-matrix → generate-tests →
    check-tests → run-full-suite → propose."""
    from bot.extras import require_extra, testgen_modules
    from bot.hosts.git.source import GitSource
    from bot.testgen.frameworks import detect_framework
    from bot.testgen.report import TestgenResult
    from bot.testgen.sandbox import choose_isolation
    from bot.testgen.workspace import Workspace

    started = time.monotonic()
    job.tracker.start(job.session_id, str(job.repo.resolve()))
    with job.tracker.step("fetch-change") as step:
        if not isinstance(job.source, GitSource):
            raise UsageError(
                "testgen works on a local commit: check the change out and give "
                "HEAD, a SHA or A..B with --repo"
            )
        change = job.source.fetch(job.ref)
        if change.head_ref in (None, ":staged"):
            raise UsageError("testgen needs a commit (HEAD, a SHA or A..B)")
        step.note(f"{len(change.files)} files")
    result = TestgenResult(change=change)
    with Workspace(
        job.repo,
        change.head_ref or "HEAD",
        None,
        memory_limit=job.settings.testgen.memory_mb * 2**20,
        isolation=choose_isolation(job.settings.testgen.isolation),
    ) as ws:
        result.isolation = ws.isolation.to_dict() if ws.isolation else {}
        with job.tracker.step("detect-test-framework") as step:
            ws.framework = result.framework = detect_framework(ws.root)
            if ws.framework is None:
                step.skip("no test framework found")
                result.notes.append("no test framework was detected: nothing was generated")
                return result
            require_extra(
                "testgen", "nova testgen", *testgen_modules(ws.framework.language, job.generator)
            )
            _test_environment(job, ws, result)
            step.note(f"{ws.framework.name}, {result.environment.get('why')}")
        _testgen_stages(job, ws, result)
    result.stats.seconds = round(time.monotonic() - started, 3)
    job.bus.emit(DoneEvent(token_usage=result.stats.token_usage()))
    return result


def _test_environment(job: TestgenJob, ws: Workspace, result: TestgenResult) -> None:
    """The project's interpreter runs its tests (see ``bot.testgen.environment``)."""
    from bot.testgen.environment import python_environment
    from bot.testgen.frameworks import node_why, with_python

    fw = ws.framework
    assert fw is not None
    if fw.language == "python":
        env = python_environment(
            job.repo, job.settings.testgen.python, job.virtual_env, job.path_python
        )
        ws.framework = result.framework = with_python(fw, env.python)
        ws.bin_dirs = env.bin_dirs
        result.environment = env.to_dict()
        if env.note:
            result.notes.append(env.note)
    elif fw.name == "node-test":
        node = fw.run_files[0]
        result.environment = {"node": node, "why": node_why(ws.root, node)}
        local = ws.root / "node_modules" / ".bin"
        ws.bin_dirs = ((str(local),) if local.is_dir() else ()) + (str(Path(node).parent),)


_NOT_MODULES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "__main__.py"}


def _importable(ws: Workspace, result: TestgenResult) -> bool:
    """Whether the changed Python modules import with the project's interpreter; when
    none does, one note says how to fix it (not one per file)."""
    from bot.testgen.environment import import_failures
    from bot.testgen.ghostwriter import _module_name

    assert ws.framework is not None
    modules = sorted(
        {
            _module_name(t.path)
            for t in result.matrix
            if t.path.endswith(".py")
            and PurePosixPath(t.path).name not in _NOT_MODULES
            and not t.path.startswith(("docs/", "doc/"))
        }
    )
    failed = import_failures(ws.run, ws.framework.run_files[0], modules)
    if not failed:
        return True
    python = result.environment.get("python", ws.framework.run_files[0])
    first = next(iter(failed.items()))
    which = "the project" if len(failed) == len(modules) else f"{len(failed)} changed module(s)"
    result.notes.append(
        f"{which} cannot be imported with {python} ({result.environment.get('why')}): "
        f"{first[0]}: {first[1]}. Install the project in it ({python} -m pip install -e .) "
        "or choose the interpreter with --test-python / NOVA_TEST_PYTHON."
    )
    return len(failed) < len(modules)


def _testgen_stages(job: TestgenJob, ws: Workspace, result: TestgenResult) -> None:
    from bot.testgen.matrix import build_matrix, measure_baseline
    from bot.testgen.runners import RunnerUnavailable, runner_for

    fw = ws.framework
    assert fw is not None
    runner: Runner | None = None
    with job.tracker.step("analyze-test-matrix") as step:
        result.matrix = build_matrix(result.change, ws, fw)
        try:
            runner = runner_for(fw, job.settings.testgen.timeout, job.settings.testgen.memory_mb)
        except RunnerUnavailable as exc:
            result.notes.append(str(exc))
        if runner is not None and result.matrix:
            note, result.coverage_before = measure_baseline(result.matrix, ws, runner)
            if note:
                result.notes.append(note)
        step.note(f"{len(result.matrix)} changed targets")
    if not result.matrix:
        result.notes.append("nothing to test: the change adds no lines to source files")
        return
    if runner is None:
        return
    with job.tracker.step("generate-tests") as step:
        if fw.language == "python" and not _importable(ws, result):
            step.skip("the project cannot be imported")
            return
        _generate(job, ws, result)
        step.note(f"{len(ws.written)} test files written")
    with job.tracker.step("check-tests") as step:
        _check_tests(job, ws, runner, result)
        step.note(f"{len(result.kept)} kept, {len(result.dropped)} dropped")
    with job.tracker.step("run-full-suite") as step:
        if not result.kept:
            step.skip("no test was kept")
            return
        # the project's own suite: the memory limit is for generated tests
        suite = ws.run(list(fw.run_suite), timeout=1800, limit_memory=False)
        result.suite_passed = suite.passed
        if not suite.passed:
            result.notes.append(
                "the full suite fails with the kept tests: nothing is "
                f"proposed\n{suite.output[-1500:]}"
            )
            for case in result.kept:
                case.reason = "the full suite failed with it"
            result.dropped += result.kept
            result.kept = []
            step.skip("the full suite failed")
            return
    with job.tracker.step("propose"):
        from bot.testgen.propose import propose

        propose(result, ws, job.settings, job.publish, job.patch_dir)


def _generate(job: TestgenJob, ws: Workspace, result: TestgenResult) -> None:
    assert ws.framework is not None
    if job.generator in ("ghostwriter", "differential"):
        if ws.framework.language != "python":
            result.notes.append(
                f"the {job.generator} generator writes Python tests only: "
                "configure a model (NOVA_LLM_MODEL) to write tests for "
                f"{ws.framework.name}"
            )
            return
        if job.generator == "ghostwriter":
            from bot.testgen.ghostwriter import generate_with_ghostwriter

            result.notes += generate_with_ghostwriter(ws, ws.framework, result.matrix)
            return
        from bot.testgen.differential import generate_differential

        result.notes += generate_differential(
            ws, ws.framework, result.matrix, result.change.base_ref
        )
        return
    from bot.llm.loop import run_coroutine
    from bot.testgen.agent import generate_with_llm

    try:
        summary = run_coroutine(
            generate_with_llm(
                result.change,
                ws,
                ws.framework,
                result.matrix,
                job.settings.llm,
                job.settings.testgen,
                job.bus,
                result.stats,
                job.max_iterations,
            )
        )
    except ModelError as exc:
        result.errors.append(str(exc))
        return
    if summary:
        result.notes.append(f"model: {summary[:500]}")


def _check_tests(job: TestgenJob, ws: Workspace, runner: Runner, result: TestgenResult) -> None:
    from bot.testgen.gates import TestCase, evaluate, keep_whole_units
    from bot.testgen.runners import PruneFailed

    parent = result.change.base_ref
    for rel in sorted(ws.written):
        names, first_run = runner.collect(ws, rel)
        if not names:
            result.dropped.append(
                TestCase(rel, "*", reason="no test could be collected (import or syntax error?)")
            )
            ws.remove_test(rel)
            continue
        twins = {n for n in names if names.count(n) > 1}
        result.dropped += [
            TestCase(rel, n, reason="another test in the file has the same name")
            for n in sorted(twins)
        ]
        cases = [TestCase(rel, name) for name in dict.fromkeys(names) if name not in twins]
        evaluate(ws, runner, rel, cases, result.matrix, job.runs, parent, first_run)
        keep_whole_units(cases, runner.unit)
        keep = {c.name for c in cases if not c.reason}
        try:
            pruned = runner.prune(ws, rel, keep, names) if keep else None
        except PruneFailed as exc:
            for c in cases:
                c.reason = c.reason or f"the dropped tests could not be cut out of the file: {exc}"
            pruned = None
        for case in cases:
            (result.dropped if case.reason else result.kept).append(case)
        if pruned is None:
            ws.remove_test(rel)
        else:
            from bot.testgen.render import MARKER, tidy

            ws.write_test(rel, tidy(pruned) if pruned.startswith(MARKER) else pruned)
    if result.kept and result.coverage_before is not None:
        from bot.testgen.matrix import covered_count

        measured = runner.line_coverage(ws, [])
        if measured:
            result.coverage_after = covered_count(result.matrix, measured[0])
