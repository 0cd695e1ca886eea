"""The order of the stages. Only this module knows it; the CLI and MCP server call in."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Protocol

from bot.analyzers.ruff import run_ruff
from bot.config import Settings
from bot.diff.anchor import anchor
from bot.errors import AnalyzerError, ModelError, NovaError, UsageError
from bot.events import DoneEvent, EventBus
from bot.models import Change, Comment, ReviewResult, severity_rank
from bot.sources.base import Source
from bot.taskmanager.tracker import StepTracker

if TYPE_CHECKING:
    from bot.testgen.report import TestgenResult
    from bot.testgen.runners import Runner
    from bot.testgen.workspace import Workspace

__all__ = ["Publisher", "ReviewJob", "TestgenJob", "exit_code_for", "run_review", "run_testgen"]

LLM_OFF_NOTE = ("LLM review is off: no model is configured, so only static analyzers ran. "
                "Turn it on with NOVA_LLM_MODEL=provider:model (e.g. openai:gpt-4o-mini, plus "
                "NOVA_LLM_API_KEY; or NOVA_LLM_BASE_URL for an OpenAI-compatible server).")


class Publisher(Protocol):
    def publish(self, result: ReviewResult) -> None: ...


@dataclass
class ReviewJob:
    settings: Settings
    source: Source
    ref: str
    repo: Path | None
    bus: EventBus
    tracker: StepTracker
    session_id: str = field(default_factory=lambda: f"nova-{uuid.uuid4().hex[:12]}")
    force: bool = False  # review again a change a publisher says was already reviewed


def _analyze(job: ReviewJob, change: Change, tree, notes: list[str]) -> list[Comment]:
    with job.tracker.step("analyze") as step:
        if job.settings.analyzers == "none":
            step.skip("analyzers disabled (NOVA_ANALYZERS=none)")
            return []
        if tree is None:
            step.skip("repository files are not available")
            notes.append("ruff did not run: the repository files are not available")
            return []
        try:
            found = run_ruff(change.files, tree, getattr(tree, "root", job.repo))
        except AnalyzerError as exc:
            notes.append(f"ruff did not run: {exc}")
            step.skip(str(exc))
            return []
        step.note(f"ruff: {len(found)} findings on added lines")
        return found


def _llm_review(job: ReviewJob, change: Change, tree, findings: list[Comment],
                result: ReviewResult) -> list[Comment]:
    with job.tracker.step("review") as step:
        if not job.settings.llm_enabled:
            step.skip("no model configured" if not job.settings.llm_model else "disabled")
            result.notes.append(LLM_OFF_NOTE if not job.settings.llm_model
                                else "LLM review is disabled (NOVA_LLM_REVIEW=false).")
            return []
        if tree is None:
            result.notes.append("repository files are not available: the model reviewed the "
                                "diff alone")
        from bot.agents.review import review_change
        from bot.llm.loop import run_coroutine

        outcome = run_coroutine(review_change(change, tree, findings, job.settings, job.bus,
                                            result.stats))
        result.notes += outcome.notes
        result.errors += outcome.errors
        result.summary = "\n\n".join(outcome.summaries)
        step.note(f"{len(outcome.comments)} comments from the model")
        if outcome.errors and not outcome.comments and not outcome.summaries:
            raise ModelError("; ".join(outcome.errors))
        return outcome.comments


def _already_reviewed(job: ReviewJob, change: Change,
                      publishers: Sequence[Publisher]) -> str | None:
    """A publisher's word that this exact change was reviewed before (optional capability,
    e.g. the head SHA in a pull request's summary comment)."""
    if job.force:
        return None
    for publisher in publishers:
        check = getattr(publisher, "already_reviewed", None)
        if check is not None and check(change):
            return (f"{change.id} at {(change.head_ref or '')[:12]} was already reviewed; "
                    "nothing was posted (use --force to review it again)")
    return None


def run_review(job: ReviewJob, publishers: Sequence[Publisher]) -> ReviewResult:
    """fetch-change → analyze → review → anchor → publish."""
    started = time.monotonic()
    job.tracker.start(job.session_id, str(job.repo.resolve()) if job.repo else None)
    with job.tracker.step("fetch-change") as step:
        change = job.source.fetch(job.ref)
        step.note(f"{len(change.files)} files")
        seen = _already_reviewed(job, change, publishers)
    result = ReviewResult(change=change, summary="", notes=list(change.notes))
    if seen:
        result.notes.append(seen)
        for name in ("analyze", "review", "anchor", "publish"):
            with job.tracker.step(name) as skipped:
                skipped.skip("already reviewed")
        publishers[0].publish(result)
        return result
    for publisher in publishers:  # optional capability: e.g. a build reports "working"
        begin = getattr(publisher, "begin", None)
        if begin is not None:
            begin(change)
    try:
        _review_and_publish(job, change, result, publishers, started)
    except Exception as exc:  # tell a waiting build the run died, then let it propagate
        for publisher in publishers:
            abort = getattr(publisher, "abort", None)
            if abort is not None:
                with suppress(NovaError):  # the original error matters more
                    abort(str(exc))
        raise
    return result


def _review_and_publish(job: ReviewJob, change: Change, result: ReviewResult,
                        publishers: Sequence[Publisher], started: float) -> None:
    tree = job.source.tree(change)
    if not change.files:
        result.notes.append("the change is empty: nothing to review")
    findings = _analyze(job, change, tree, result.notes) if change.files else []
    try:
        llm_comments = _llm_review(job, change, tree, findings, result) if change.files else []
    except ModelError:
        llm_comments = []  # already in result.errors; the analyzers' findings still publish
    with job.tracker.step("anchor") as step:
        result.placements = anchor(findings + llm_comments, change.files)
        step.note(f"{len(result.placed)} placed, {len(result.unplaced)} in the summary")
    result.stats.seconds = round(time.monotonic() - started, 3)
    with job.tracker.step("publish"):
        for publisher in publishers:
            publisher.publish(result)
    job.bus.emit(DoneEvent(token_usage={
        "llm_calls": result.stats.llm_calls, "prompt_tokens": result.stats.prompt_tokens,
        "completion_tokens": result.stats.completion_tokens}))


def exit_code_for(result: ReviewResult, fail_on: str) -> int:
    """3 when a service failed, 1 when a finding reaches ``fail_on``, else 0."""
    if result.errors:
        return 3
    if fail_on != "never":
        threshold = severity_rank(fail_on)
        if any(severity_rank(p.comment.severity) >= threshold for p in result.placements):
            return 1
    return 0


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
    open_mr: str = "local"  # local | github | phabricator
    patch_dir: Path = Path(".")
    session_id: str = field(default_factory=lambda: f"nova-{uuid.uuid4().hex[:12]}")
    virtual_env: str | None = None  # VIRTUAL_ENV of the caller (the CLI reads it)
    path_python: str | None = None  # `python` on the caller's PATH


def run_testgen(job: TestgenJob) -> TestgenResult:
    """fetch-change → detect-test-framework → analyze-test-matrix → generate-tests →
    check-tests → run-full-suite → propose."""
    from bot.sources.git import GitSource
    from bot.testgen.frameworks import detect_framework
    from bot.testgen.report import TestgenResult
    from bot.testgen.workspace import Workspace

    started = time.monotonic()
    job.tracker.start(job.session_id, str(job.repo.resolve()))
    with job.tracker.step("fetch-change") as step:
        if not isinstance(job.source, GitSource):
            raise UsageError("testgen works on a local commit: check the change out and give "
                             "HEAD, a SHA or A..B with --repo")
        change = job.source.fetch(job.ref)
        if change.head_ref in (None, ":staged"):
            raise UsageError("testgen needs a commit (HEAD, a SHA or A..B)")
        step.note(f"{len(change.files)} files")
    result = TestgenResult(change=change)
    with Workspace(job.repo, change.head_ref or "HEAD", None,
                   memory_limit=job.settings.test_memory_mb * 2**20) as ws:
        with job.tracker.step("detect-test-framework") as step:
            ws.framework = result.framework = detect_framework(ws.root)
            if ws.framework is None:
                step.skip("no test framework found")
                result.notes.append("no test framework was detected: nothing was generated")
                return result
            _test_environment(job, ws, result)
            step.note(f"{ws.framework.name}, {result.environment.get('why')}")
        _testgen_stages(job, ws, result)
    result.stats.seconds = round(time.monotonic() - started, 3)
    job.bus.emit(DoneEvent(token_usage={
        "llm_calls": result.stats.llm_calls, "prompt_tokens": result.stats.prompt_tokens,
        "completion_tokens": result.stats.completion_tokens}))
    return result


def _test_environment(job: TestgenJob, ws: Workspace, result: TestgenResult) -> None:
    """The project's interpreter runs its tests (see ``bot.testgen.environment``)."""
    from bot.testgen.environment import python_environment
    from bot.testgen.frameworks import node_why, with_python

    fw = ws.framework
    assert fw is not None
    if fw.language == "python":
        env = python_environment(job.repo, job.settings.test_python, job.virtual_env,
                                 job.path_python)
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
    modules = sorted({_module_name(t.path) for t in result.matrix if t.path.endswith(".py")
                      and PurePosixPath(t.path).name not in _NOT_MODULES
                      and not t.path.startswith(("docs/", "doc/"))})
    failed = import_failures(ws.run, ws.framework.run_files[0], modules)
    if not failed:
        return True
    python = result.environment.get("python", ws.framework.run_files[0])
    first = next(iter(failed.items()))
    which = "the project" if len(failed) == len(modules) else f"{len(failed)} changed module(s)"
    result.notes.append(
        f"{which} cannot be imported with {python} ({result.environment.get('why')}): "
        f"{first[0]}: {first[1]}. Install the project in it ({python} -m pip install -e .) "
        "or choose the interpreter with --test-python / NOVA_TEST_PYTHON.")
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
            runner = runner_for(fw, job.settings.test_timeout, job.settings.test_memory_mb)
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
            result.notes.append("the full suite fails with the kept tests: nothing is "
                                f"proposed\n{suite.output[-1500:]}")
            for case in result.kept:
                case.reason = "the full suite failed with it"
            result.dropped += result.kept
            result.kept = []
            step.skip("the full suite failed")
            return
    with job.tracker.step("propose"):
        from bot.testgen.propose import propose

        propose(result, ws, job.settings, job.open_mr, job.patch_dir)


def _generate(job: TestgenJob, ws: Workspace, result: TestgenResult) -> None:
    assert ws.framework is not None
    if job.generator in ("ghostwriter", "differential"):
        if ws.framework.language != "python":
            result.notes.append(f"the {job.generator} generator writes Python tests only: "
                                "configure a model (NOVA_LLM_MODEL) to write tests for "
                                f"{ws.framework.name}")
            return
        if job.generator == "ghostwriter":
            from bot.testgen.ghostwriter import generate_with_ghostwriter

            result.notes += generate_with_ghostwriter(ws, ws.framework, result.matrix)
            return
        from bot.testgen.differential import generate_differential

        result.notes += generate_differential(ws, ws.framework, result.matrix,
                                              result.change.base_ref)
        return
    from bot.llm.loop import run_coroutine
    from bot.testgen.agent import generate_with_llm

    try:
        summary = run_coroutine(generate_with_llm(
            result.change, ws, ws.framework, result.matrix, job.settings, job.bus,
            result.stats, job.max_iterations))
    except ModelError as exc:
        result.errors.append(str(exc))
        return
    if summary:
        result.notes.append(f"model: {summary[:500]}")


def _check_tests(job: TestgenJob, ws: Workspace, runner: Runner, result: TestgenResult
                 ) -> None:
    from bot.testgen.gates import TestCase, evaluate, keep_whole_units
    from bot.testgen.runners import PruneFailed

    parent = result.change.base_ref
    for rel in sorted(ws.written):
        names, first_run = runner.collect(ws, rel)
        if not names:
            result.dropped.append(TestCase(rel, "*", reason="no test could be collected "
                                                           "(import or syntax error?)"))
            ws.remove_test(rel)
            continue
        twins = {n for n in names if names.count(n) > 1}
        result.dropped += [TestCase(rel, n, reason="another test in the file has the same "
                                                   "name") for n in sorted(twins)]
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
