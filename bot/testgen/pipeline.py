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
    from collections.abc import Callable

    from bot.testgen.gates import TestCase
    from bot.testgen.matrix import Target
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
    # tests written by the caller (path -> text; MCP's run_tests / propose_tests): written
    # in place of generated ones, then through the same gates
    given: dict[str, str] | None = None
    until: str | None = None  # the last stage to run (MCP: an answer before the rest)
    started: float = field(default_factory=time.monotonic)  # run_testgen sets it again
    # the existing tests that name the change were stopped under coverage: too slow to
    # stand in for a suite that does not finish either
    nearby_slow: bool = False
    # seconds the existing tests that name the change took under coverage (analyze-test-
    # matrix), None when not measured: the full suite's time is estimated from it
    nearby_took: float | None = None

    @property
    def deadline(self) -> float:
        """When the job's budget (``NOVA_TEST_JOB_SECONDS``) ends (``time.monotonic``)."""
        return self.started + self.settings.testgen.job_seconds

    def left(self) -> float:
        """Seconds left of the job's budget (negative: overrun)."""
        return self.deadline - time.monotonic()


def run_testgen(job: TestgenJob) -> TestgenResult:
    """fetch-change → detect-test-framework → analyze-test-matrix → generate-tests →
    check-tests → run-full-suite → propose."""
    from bot.extras import require_extra, testgen_modules
    from bot.hosts.git.source import GitSource
    from bot.sandbox.run import choose_isolation
    from bot.testgen.frameworks import detect_framework
    from bot.testgen.report import TestgenResult
    from bot.testgen.workspace import Workspace

    started = job.started = time.monotonic()
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
        if ws.generated:
            result.notes.append(ws.generated_note())
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
        if job.until != "detect-test-framework":
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
            job.repo,
            job.settings.testgen.python,
            job.virtual_env,
            job.path_python,
            ws.isolation,
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
    from bot.testgen.matrix import (
        BASELINE_SECONDS,
        build_matrix,
        measure_baseline,
        version_stamps,
    )
    from bot.testgen.runners import RunnerUnavailable, runner_for

    fw = ws.framework
    assert fw is not None
    runner: Runner | None = None
    with job.tracker.step("analyze-test-matrix") as step:
        result.matrix = build_matrix(result.change, ws, fw)
        stamped = sorted(f.path for f in result.change.files if version_stamps(f))
        if stamped:
            result.notes.append(
                "not tested: lines that only stamp the release's version (number, commit, "
                f"date) in {', '.join(stamped[:5])}"
            )
        try:
            runner = runner_for(fw, job.settings.testgen.timeout, job.settings.testgen.memory_mb)
        except RunnerUnavailable as exc:
            result.notes.append(str(exc))
        if runner is not None and result.matrix:
            share = BASELINE_SHARE * job.settings.testgen.job_seconds
            began = time.monotonic()
            note, result.coverage_before = measure_baseline(
                result.matrix, ws, runner, min(BASELINE_SECONDS, share)
            )
            job.nearby_slow = runner.stopped
            job.nearby_took = time.monotonic() - began
            if note:
                result.notes.append(note)
        step.note(f"{len(result.matrix)} changed targets")
    if job.until == "analyze-test-matrix":
        return
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
    if job.until == "check-tests":
        return
    with job.tracker.step("run-full-suite") as step:
        if not result.kept:
            step.skip("no test was kept")
            return
        if not _suite_gate(job, ws, runner, result):
            step.skip("the full suite failed with the kept tests")
            return
    with job.tracker.step("propose"):
        from bot.testgen.propose import propose

        propose(result, ws, job.settings, job.publish, job.patch_dir)


def _generate(job: TestgenJob, ws: Workspace, result: TestgenResult) -> None:
    assert ws.framework is not None
    if job.given is not None:
        _write_given(ws, job.given, result)
        return
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
        from bot.testgen.amplify import amplifiable
        from bot.testgen.differential import generate_differential

        # its runs share what is left of the job but the check-tests share (a run that
        # blocks is ended past its share: the job stays near its budget), and, when the
        # project has tests amplification would run, the share kept for amplification
        until = differential_until(
            job.deadline,
            job.settings.testgen.job_seconds,
            amplifiable(ws, ws.framework, result.matrix),
        )
        result.notes += generate_differential(
            ws, ws.framework, result.matrix, result.change.base_ref, result.facts, until
        )
        # the module-level state first (a few seconds); its facts join after amplification,
        # whose budget depends only on what the differential generator pinned
        states: dict[str, dict[str, list[dict[str, object]]]] = {}
        _modstate(job, ws, result, states)
        _amplify(job, ws, result)
        result.facts.update(states)
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


# the job's budget (NOVA_TEST_JOB_SECONDS) in shares: the existing tests under coverage
# (analyze-test-matrix: the report's coverage before and the full suite's plan) get at most
# BASELINE_SHARE of it; after generation, CHECK_SHARE is kept for check-tests and
# SUITE_SHARE for the full suite (what generation may not use)
BASELINE_SHARE = 0.15
CHECK_SHARE = 0.2
SUITE_SHARE = 0.2
AMPLIFY_LEAST = 8.0  # seconds: less does not pay for a run of the tests on each side
# the share of the job the differential generator leaves to amplification when the project
# has tests that name a changed module: on a slow or busy machine its search of inputs
# would otherwise spend the time the project's own tests need
AMPLIFY_SHARE = 0.15


def differential_until(deadline: float, job_seconds: float, amplifiable: bool) -> float:
    """When the differential generator's runs must end (``time.monotonic``) in a job of
    ``job_seconds`` ending at ``deadline``: before the check-tests share, and, when
    amplification has tests to run, early enough to leave it ``AMPLIFY_SHARE`` of the job
    (at least ``AMPLIFY_LEAST``)."""
    until = deadline - CHECK_SHARE * job_seconds
    if amplifiable:
        keep = max(AMPLIFY_LEAST, AMPLIFY_SHARE * job_seconds)
        until = min(until, deadline - (CHECK_SHARE + SUITE_SHARE) * job_seconds - keep)
    return until


def amplify_seconds(deadline: float, job_seconds: float, now: float) -> float:
    """Seconds amplification may take from ``now``: what is left of the job but the share
    kept for checking the tests and the full suite, at most its own ``SECONDS``."""
    from bot.testgen.amplify import SECONDS

    return min(SECONDS, deadline - now - (CHECK_SHARE + SUITE_SHARE) * job_seconds)


def _reserved(job: TestgenJob) -> float:
    """Seconds of the job kept for check-tests and the full suite."""
    return (CHECK_SHARE + SUITE_SHARE) * job.settings.testgen.job_seconds


# when the differential generator pins a change, the targets it pins nothing of are
# amplified only if the job has spent no more than this before (of its two minutes: the
# gates of both generators' tests and the full suite follow)
PINNED_BY = 30.0


def amplify_plan(
    matrix: list[Target],
    facts: dict[str, dict[str, list[dict[str, object]]]],
    spent: float,
    seconds: float,
) -> tuple[list[Target], float, str | None]:
    """Which changed targets amplification runs for, in how many seconds, and the note
    that says why: all of them in ``seconds`` when the differential generator pinned
    nothing; otherwise those it pinned nothing of, in half the time, and only if the job
    has spent at most ``PINNED_BY`` seconds (its gates and the full suite still run)."""
    from bot.testgen.amplify import pins_behaviour, unpinned

    pinned = sum(pins_behaviour(f) for rows in facts.values() for row in rows.values() for f in row)
    if not pinned:
        return matrix, seconds, None
    targets = unpinned(matrix, facts)
    if not targets:  # its runs would add tests of a change already pinned
        return (
            [],
            0.0,
            (
                f"amplify: skipped: the differential generator pins {pinned} changed behaviour(s)"
                " of every changed target"
            ),
        )
    if spent > PINNED_BY:
        return (
            [],
            0.0,
            (
                f"amplify: skipped: the differential generator pins {pinned} changed behaviour(s), "
                f"and {spent:.0f} s of the job are spent (the rest is left to its checks)"
            ),
        )
    return (
        targets,
        seconds / 2,
        (
            f"amplify: the differential generator pins {pinned} changed behaviour(s); "
            f"{len(targets)} changed target(s) it pins none of are amplified "
            f"({spent:.0f} s of the job spent)"
        ),
    )


def _amplify(job: TestgenJob, ws: Workspace, result: TestgenResult) -> None:
    """The project's own tests that run the changed lines, observed on both sides: a
    value they got that differs becomes a test (``bot.testgen.amplify``)."""
    from bot.testgen.amplify import TEST_SECONDS, generate_amplified

    assert ws.framework is not None
    now = time.monotonic()
    spent = now - job.started
    most = amplify_seconds(job.deadline, job.settings.testgen.job_seconds, now)
    if most < AMPLIFY_LEAST:
        result.notes.append(
            f"amplify: skipped: {spent:.0f} s of the job's {job.settings.testgen.job_seconds:g} s"
            f" are spent, and {_reserved(job):.0f} s are kept for checking the tests and the "
            "full suite (NOVA_TEST_JOB_SECONDS gives it more)"
        )
        return
    targets, budget, note = amplify_plan(result.matrix, result.facts, spent, most)
    if note:
        result.notes.append(note)
    if not targets:
        return
    parent_files = _parent_files(ws, result, result.change.base_ref)
    seconds = min(TEST_SECONDS, job.settings.testgen.timeout)
    result.notes += generate_amplified(
        ws, ws.framework, targets, parent_files, result.facts, seconds, budget
    )


def _modstate(
    job: TestgenJob,
    ws: Workspace,
    result: TestgenResult,
    facts: dict[str, dict[str, list[dict[str, object]]]],
) -> None:
    """The module-level state of the changed targets neither generator pinned, observed
    after import on both sides (``bot.testgen.modstate``)."""
    from bot.testgen.amplify import unpinned
    from bot.testgen.modstate import generate_modstate

    assert ws.framework is not None
    # module-level code, and top-level functions (their decorators: modstate._wanted)
    left = unpinned(result.matrix, result.facts)
    targets = [t for t in left if t.data is not None or "." not in t.qualname]
    if not targets:
        return
    # only while the time kept for its tests' gates and the full suite is left
    if job.left() < _reserved(job):
        spent = time.monotonic() - job.started
        result.notes.append(f"modstate: skipped: {spent:.0f} s of the job are spent")
        return
    parent_files = _parent_files(ws, result, result.change.base_ref)
    result.notes += generate_modstate(
        ws, ws.framework, targets, parent_files, facts, pinned=result.facts
    )


def _write_given(ws: Workspace, files: dict[str, str], result: TestgenResult) -> None:
    """The caller's test files, under the same write guard as a generator's."""
    from bot.testgen.gates import TestCase
    from bot.testgen.workspace import WriteRefused

    for path, text in files.items():
        try:
            ws.write_test(path, text)
        except WriteRefused as exc:
            result.dropped.append(TestCase(path, "*", reason=f"not written: {exc}"))


NOT_CHECKED = (
    "not checked: the job's time budget (NOVA_TEST_JOB_SECONDS, less the full suite's share) "
    "ran out before its turn, and an unchecked test is never kept"
)


def _check_tests(job: TestgenJob, ws: Workspace, runner: Runner, result: TestgenResult) -> None:
    from bot.testgen.gates import TestCase, evaluate, keep_whole_units
    from bot.testgen.runners import PruneFailed

    parent = result.change.base_ref
    parent_files = _parent_files(ws, result, parent)
    # the generators' own files first, then amplification's (the project's tests, cut)
    from bot.testgen.amplify import AMPLIFIED
    from bot.testgen.amplify_warns import differing_first

    # the job's budget less the full suite's share: no file's check starts after it (but
    # the first: the generators' own tests), no mutant runs after it
    until = job.deadline - SUITE_SHARE * job.settings.testgen.job_seconds
    order = sorted(ws.written, key=lambda r: (PurePosixPath(r).name.startswith(AMPLIFIED), r))
    order = differing_first(order, result.facts)  # (amplify_warns)
    late: list[str] = []
    for i, rel in enumerate(order):
        if i and time.monotonic() > until:
            # never kept unchecked: dropped, said
            result.dropped.append(TestCase(rel, "*", reason=NOT_CHECKED))
            ws.remove_test(rel)
            late.append(rel)
            continue
        names, first_run = runner.collect(ws, rel)
        if not names:
            why = runner.failures.get(f"{rel}::*") or "the runner listed none"
            result.dropped.append(TestCase(rel, "*", reason=f"no test could be collected: {why}"))
            ws.remove_test(rel)
            continue
        twins = {n for n in names if names.count(n) > 1}
        result.dropped += [
            TestCase(rel, n, reason="another test in the file has the same name")
            for n in sorted(twins)
        ]
        cases = [TestCase(rel, name) for name in dict.fromkeys(names) if name not in twins]
        evaluate(
            ws, runner, rel, cases, result.matrix, job.runs, parent, first_run, parent_files, until
        )
        keep_whole_units(cases, runner.unit)
        keep = {c.name for c in cases if not c.reason}
        try:
            pruned = runner.prune(ws, rel, keep, names) if keep else None
        except PruneFailed as exc:
            for c in cases:
                c.reason = c.reason or f"the dropped tests could not be cut out of the file: {exc}"
            pruned = None
        _attach_facts(cases, names, result, runner.unit)
        for case in cases:
            (result.dropped if case.reason else result.kept).append(case)
        if pruned is None:
            ws.remove_test(rel)
        else:
            from bot.testgen.render import MARKER, tidy

            ws.write_test(rel, tidy(pruned) if pruned.startswith(MARKER) else pruned)
    if late:
        result.notes.append(
            f"{len(late)} test file(s) not checked ({', '.join(late[:5])}): {NOT_CHECKED}"
        )
    blind = {
        str(c.evidence["coverage_unmeasured"])
        for c in [*result.kept, *result.dropped]
        if c.evidence.get("coverage_unmeasured")
    }
    if blind:
        result.notes.append(
            "coverage recorded nothing for the generated tests "
            f"({'; '.join(sorted(blind))[:300]}): they were judged on the parent and the "
            "mutants alone, not dropped for running no changed line"
        )
    if result.kept and result.coverage_before is not None:
        # the suite's changed lines (measured once, before) and the kept tests' own: no
        # second coverage run of the whole suite
        ran = {(t.path, n) for t in result.matrix for n in t.lines if n not in (t.uncovered or [])}
        for case in result.kept:
            lines = case.evidence.get("changed_lines")
            if isinstance(lines, dict):
                ran |= {(p, n) for p, ns in lines.items() for n in ns}
        result.coverage_after = len(ran)


# the full suite gets what is left of the job's budget, and at least the floor
SUITE_FLOOR = 20.0


def _suite_seconds(job: TestgenJob, nearby: list[str]) -> float:
    """How long the project's whole suite may run (and, when it does not finish, the
    test files ``nearby``): the setting, else what is left of the job's budget (at
    least ``SUITE_FLOOR``), halved when the nearby files may have to run too."""
    given = job.settings.testgen.suite_timeout
    if given is not None:
        return float(given)
    left = max(SUITE_FLOOR, job.left())
    return left / 2 if nearby else left


def _too_slow(job: TestgenJob, ws: Workspace, nearby: list[str]) -> str:
    """Why the whole suite is not started (the test files ``nearby`` run in its place,
    with all its time), or "": it would not finish in the time left, by the time those
    files took under coverage in analyze-test-matrix, per file, times the suite's files."""
    fw = ws.framework
    if job.nearby_took is None or not nearby or fw is None:
        return ""
    if job.settings.testgen.suite_timeout is not None:
        return ""  # the time the suite may take is the user's
    every = sum(fw.is_test_name(p) for p in ws.files())
    estimate = job.nearby_took * every / len(nearby)
    seconds = _suite_seconds(job, nearby)
    if estimate <= seconds:
        return ""
    return (
        f"the whole suite ({every} test files) would take about {estimate:.0f} s, more than "
        f"the {seconds:.0f} s left (its {len(nearby)} test file(s) that name the changed code "
        f"took {job.nearby_took:.0f} s under coverage)"
    )


def _suite_gate(job: TestgenJob, ws: Workspace, runner: Runner, result: TestgenResult) -> bool:
    """The project's suite with the kept tests; failures it had without them (the
    baseline) are named, never blamed on the kept tests. False: nothing is proposed."""
    from bot.testgen.suite import judge_suite, test_id_module

    assert ws.framework is not None
    files = sorted({c.path for c in result.kept})
    nearby = [] if job.nearby_slow else sorted({p for t in result.matrix for p in t.existing_tests})
    too_slow = _too_slow(job, ws, nearby)
    seconds = _suite_seconds(job, [] if too_slow else nearby)
    verdict = judge_suite(ws, ws.framework, files, seconds, nearby, too_slow)
    if verdict.unjudged:
        result.suite_scope = verdict.unjudged
        result.notes.append(
            f"{verdict.unjudged}: it was not judged; the kept tests passed on their own "
            "(NOVA_TEST_SUITE_TIMEOUT gives it longer)"
        )
        return True
    if verdict.scope:
        result.suite_scope = verdict.scope
        result.notes.append(verdict.scope)
    result.suite_passed = verdict.passed and not verdict.preexisting and not verdict.nova_failed
    result.suite_preexisting = verdict.preexisting
    if verdict.preexisting:
        result.notes.append(
            f"{len(verdict.preexisting)} test(s) of the project's suite already fail without "
            f"Nova's tests (not caused by them): {', '.join(verdict.preexisting[:10])}"
        )
    if not verdict.passed:
        result.suite_blamed = verdict.blamed
        result.notes.append(
            "the full suite fails with the kept tests and passes without them "
            f"({', '.join(verdict.blamed[:10])}): nothing is proposed\n{verdict.output[-1500:]}"
        )
        for case in result.kept:
            case.reason = "the full suite failed with it (it passes without Nova's tests)"
        result.dropped += result.kept
        result.kept = []
        return False
    if verdict.nova_failed:
        failed = set(verdict.nova_failed)
        gone = [c for c in result.kept if f"{test_id_module(c.path)}::{c.name}" in failed]
        for case in gone:
            case.reason = "fails when the whole suite runs (it passes on its own)"
        _cut(ws, runner, result, gone)
    return bool(result.kept)


def _cut(ws: Workspace, runner: Runner, result: TestgenResult, gone: list[TestCase]) -> None:
    """Drop ``gone`` from the kept tests and from their files."""
    from bot.testgen.runners import PruneFailed

    result.kept = [c for c in result.kept if c not in gone]
    result.dropped += gone
    for rel in sorted({c.path for c in gone}):
        keep = {c.name for c in result.kept if c.path == rel}
        names, _ = runner.collect(ws, rel)
        try:
            pruned = runner.prune(ws, rel, keep, names) if keep else None
        except PruneFailed:
            pruned = None
        if pruned is None:
            for case in [c for c in result.kept if c.path == rel]:
                case.reason = "its file could not be cut down to the tests that pass in the suite"
                result.kept.remove(case)
                result.dropped.append(case)
            ws.remove_test(rel)
        else:
            ws.write_test(rel, pruned)


def _attach_facts(
    cases: list[TestCase], names: list[str], result: TestgenResult, unit: Callable[[str], str]
) -> None:
    """What each test calls and what head and parent did (from the generator, when it
    knows), and what its run on the parent shows: a behaviour the change altered, or
    only a name the parent did not have."""
    from bot.testgen.gates import attribute_missing, names_missing

    added = {f"{t.path}::{t.qualname}" for t in result.matrix if t.kind == "added"}
    facts = result.facts.get(cases[0].path, {}) if cases else {}
    order: dict[str, list[str]] = {}
    for name in dict.fromkeys(names):
        order.setdefault(unit(name), []).append(name)
    for c in cases:
        rows = facts.get(unit(c.name), [])
        index = order.get(unit(c.name), []).index(c.name) if c.name in names else 0
        mine = [rows[index]] if len(rows) > 1 and index < len(rows) else rows
        if mine:
            # an amplified test's call is one of the project's own test, not a replay
            amplified = any("amplifies" in f for f in mine)
            c.evidence["amplified" if amplified else "calls"] = mine
        fails = bool(c.evidence.get("fails_on_parent"))
        if mine:
            new = any(bool(f.get("new_name")) for f in mine)
        else:
            new = bool(c.targets) and all(t in added for t in c.targets)
        new = new or bool(c.evidence.get("parent_error"))
        failure = str(c.evidence.get("parent_failure") or "")
        new = new or names_missing(failure)
        c.evidence["new_name"] = fails and new
        unsure = fails and not new and attribute_missing(failure)
        if unsure:
            c.evidence["unclaimed"] = (
                "fails on the parent because an object lacks an attribute, which may be a "
                "name new in this change: not claimed as a catch"
            )
        c.evidence["catches_change"] = fails and not new and not unsure


def _parent_files(
    ws: Workspace, result: TestgenResult, parent: str | None
) -> dict[str, str | None] | None:
    """Every source file the change touched, as the parent had it (None: absent there),
    so a test runs on the parent's whole version of the code, renames included."""
    if parent is None or ws.framework is None:
        return None
    out: dict[str, str | None] = {}
    for f in result.change.files:
        if f.is_binary or ws.framework.is_test_name(f.path):
            continue
        if f.new_path:
            out[f.new_path] = None
        if f.old_path:
            out[f.old_path] = ws.parent_text(f.old_path, parent)
    return out
