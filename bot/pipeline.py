"""The order of the stages. Only this module knows it; the CLI and MCP server call in."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Protocol

from bot.analyzers.ruff import run_ruff
from bot.analyzers.secrets import scan_secrets
from bot.config import Settings, with_repo_config
from bot.diff.anchor import FileIndex, anchor, anchor_one, build_index
from bot.errors import AnalyzerError, ModelError, NovaError, UsageError, one_line, redact
from bot.events import DoneEvent, EventBus
from bot.hosts.base import (
    BuildStatus,
    HostSession,
    IncrementalSource,
    LocalTree,
    Publisher,
    RerunGuard,
    ReviewHistory,
    Source,
    TreeReader,
)
from bot.models import Change, Comment, PriorReview, ReviewResult, exit_code_for
from bot.review_filter import select_files, skip_notes
from bot.taskmanager.tracker import StepTracker

if TYPE_CHECKING:
    from bot.agents.review.output import ParsedAnswer
    from bot.testgen.report import TestgenResult
    from bot.testgen.runners import Runner
    from bot.testgen.workspace import Workspace

__all__ = ["Output", "ReviewJob", "TestgenJob", "exit_code_for", "run_review", "run_testgen"]

CONFIG_FILE = ".nova.toml"
LLM_OFF_NOTE = ("LLM review is off: no model is configured, so only static analyzers ran. "
                "Turn it on with NOVA_LLM_MODEL=provider:model (e.g. openai:gpt-4o-mini, plus "
                "NOVA_LLM_API_KEY; or NOVA_LLM_BASE_URL for an OpenAI-compatible server).")


class Output(Protocol):
    """Where the review is written after the hosts published (stdout, a file, the Actions job
    summary): always written, also when a stage failed."""

    def publish(self, result: ReviewResult) -> None: ...


@dataclass
class ReviewJob:
    settings: Settings  # flags > environment; the base revision's .nova.toml is added later
    session: HostSession
    ref: str
    repo: Path | None
    bus: EventBus
    tracker: StepTracker
    session_id: str = field(default_factory=lambda: f"nova-{uuid.uuid4().hex[:12]}")
    force: bool = False  # review again a change a publisher says was already reviewed
    full: bool = False  # review the whole change even when an earlier push was reviewed
    confirm: Callable[[ReviewResult], bool] | None = None  # asked before hosts publish

    @property
    def source(self) -> Source:
        return self.session.source


def _analyze(job: ReviewJob, change: Change, tree: TreeReader | None,
             notes: list[str]) -> list[Comment]:
    with job.tracker.step("analyze") as step:
        if job.settings.analyzers == "none":
            step.skip("analyzers disabled (NOVA_ANALYZERS=none)")
            return []
        if tree is None:
            step.skip("repository files are not available")
            notes.append("ruff did not run: the repository files are not available")
            return []
        root = tree.root if isinstance(tree, LocalTree) else job.repo
        try:
            found = run_ruff(change.files, tree, root)
        except AnalyzerError as exc:
            notes.append(f"ruff did not run: {exc}")
            step.skip(str(exc))
            return []
        step.note(f"ruff: {len(found)} findings on added lines")
        return found


def _llm_review(job: ReviewJob, change: Change, tree: TreeReader | None,
                findings: list[Comment], result: ReviewResult,
                later: Future[list[Comment]] | None = None) -> list[Comment]:
    with job.tracker.step("review") as step:
        if not job.settings.llm_enabled:
            step.skip("no model configured" if not job.settings.llm_model else "disabled")
            result.notes.append(LLM_OFF_NOTE if not job.settings.llm_model
                                else "LLM review is disabled (NOVA_LLM_REVIEW=false).")
            return []
        if tree is None:
            result.notes.append("repository files are not available: the model reviewed the "
                                "diff alone")
        from bot.llm.loop import preloaded, run_coroutine

        preloaded()
        from bot.agents.review import review_change

        outcome = run_coroutine(review_change(change, tree, findings, job.settings, job.bus,
                                              result.stats, later, _streamer(result)))
        result.notes += outcome.notes
        result.errors += outcome.errors
        result.summary = "\n\n".join(outcome.summaries)
        step.note(f"{len(outcome.comments)} comments from the model")
        if outcome.errors and not outcome.comments and not outcome.summaries:
            raise ModelError("; ".join(outcome.errors))
        return outcome.comments


def _streamer(result: ReviewResult) -> Callable[[ParsedAnswer], None]:
    """Anchor each batch's comments as it finishes (on the agent loop, while this thread
    waits): a run cut short still outputs what was found. The anchor step redoes it whole."""
    index: dict[str, FileIndex] = {}

    def on_batch(answer: ParsedAnswer) -> None:
        if not index:
            index.update(build_index(result.change.files))
        result.placements += [anchor_one(c, index) for c in answer.comments]
        if answer.summary:
            result.summary = "\n\n".join(filter(None, (result.summary, answer.summary)))

    return on_batch


def _analyze_while_reviewing(job: ReviewJob, change: Change, reviewed: Change,
                             tree: TreeReader | None, result: ReviewResult
                             ) -> tuple[list[Comment], list[Comment]]:
    """The model's batches start as soon as the diff is rendered; the analyzers (the secret
    scan of every file, then ``_analyze``) run in a thread meanwhile (ruff is subprocesses).
    Their findings are shown to the batches that start after they are known, placed as soon
    as they are known (a run cut short keeps them), and merged with the model's before the
    anchor step."""
    notes: list[str] = []
    at = len(result.notes)  # the analyzers' notes go first, as when they ran first

    def analyze() -> list[Comment]:
        found = scan_secrets(change.files)  # every file: keys are excluded, not harmless
        found += _analyze(job, reviewed, tree, notes)
        result.placements += anchor(found, result.change.files)
        return found

    with ThreadPoolExecutor(1, thread_name_prefix="nova-analyze") as pool:
        analysis = pool.submit(analyze)
        try:
            llm_comments = _llm_review(job, reviewed, tree, [], result, analysis)
        except ModelError:
            llm_comments = []  # already in result.errors; the analyzers' findings still publish
        found = analysis.result()
    result.notes[at:at] = notes
    return found, llm_comments


def _repo_config(job: ReviewJob, change: Change) -> list[str]:
    """Apply the repository's ``.nova.toml`` from the change's BASE revision: a change must
    not configure its own review (it could turn the analyzers off). Say when it edits it."""
    base = job.source.read_base(change, CONFIG_FILE)
    if base is not None:
        job.settings = with_repo_config(job.settings, base, f"{CONFIG_FILE} (base)")
        job.session.settings = job.settings
    if not any(f.path == CONFIG_FILE or f.old_path == CONFIG_FILE for f in change.files):
        return []
    return [f"this change edits {CONFIG_FILE}; its settings apply to later changes once it is "
            f"merged: this review used the base revision's "
            f"{CONFIG_FILE if base is not None else '(none)'}"]


def _prior_review(job: ReviewJob, change: Change,
                  publishers: Sequence[Publisher]) -> PriorReview | None:
    """A host's word (from Nova's own summary) that this exact head was reviewed before."""
    if job.force:
        return None
    for publisher in publishers:
        if isinstance(publisher, RerunGuard):
            prior = publisher.prior_review(change)
            if prior is not None:
                return prior
    return None


def run_review(job: ReviewJob, publishers: Sequence[Publisher],
               outputs: Sequence[Output] = ()) -> ReviewResult:
    """fetch-change → analyze → review → anchor → publish (hosts) → outputs."""
    started = time.monotonic()
    if job.settings.llm_enabled:  # the model client loads while the change is fetched
        from bot.llm.loop import preload

        preload(job.settings.provider)
    job.tracker.start(job.session_id, str(job.repo.resolve()) if job.repo else None)
    try:
        with job.tracker.step("fetch-change") as step:
            change = job.source.fetch(job.ref)
            step.note(f"{len(change.files)} files")
            config_notes = _repo_config(job, change)
            prior = _prior_review(job, change, publishers)
    except NovaError as exc:
        write_error_outputs(outputs, job.ref, exc)
        raise
    result = ReviewResult(change=change, summary="", notes=[*change.notes, *config_notes])
    try:
        if prior is not None:
            _skip_reviewed(job, result, prior, publishers)
        else:
            _review_and_publish(job, result, publishers, started)
    except NovaError as exc:  # the output (e.g. -o json) still says what happened
        result.errors.append(str(exc))
        for output in outputs:
            output.publish(result)
        raise
    except (Exception, KeyboardInterrupt) as exc:  # a crash: what was found is still output
        result.errors.append(f"the review stopped early ({type(exc).__name__}: "
                             f"{one_line(redact(str(exc)))[:300]}); this is what was found")
        for output in outputs:
            with suppress(NovaError):
                output.publish(result)
        raise
    for output in outputs:
        output.publish(result)
    return result


def write_error_outputs(outputs: Sequence[Output], ref: str, exc: NovaError) -> None:
    """The run ended before a review existed: the output (e.g. -o json) still says why."""
    result = ReviewResult(change=Change(id=ref, source="?"), summary="", errors=[str(exc)])
    for output in outputs:
        with suppress(NovaError):
            output.publish(result)


def _skip_reviewed(job: ReviewJob, result: ReviewResult, prior: PriorReview,
                   publishers: Sequence[Publisher]) -> None:
    """Skip the model, post nothing, and exit as the first review of this head did."""
    result.prior = prior
    failing = prior.reaches(job.settings.fail_on)
    result.notes.append(
        f"{result.change.id} at {prior.head[:12]} was already reviewed; nothing was posted "
        f"(use --force to review it again). That review had {len(prior.severities)} "
        f"finding(s){'; some reach --fail-on ' + job.settings.fail_on if failing else ''}.")
    for name in ("analyze", "review", "anchor", "publish"):
        with job.tracker.step(name) as skipped:
            skipped.skip("already reviewed")
    for publisher in publishers:
        if isinstance(publisher, BuildStatus):
            try:
                publisher.finish(not failing, "already reviewed: "
                                 f"{len(prior.severities)} finding(s) in the first review")
            except NovaError as exc:
                result.errors.append(f"reporting the build status failed: {exc}")


def _review_and_publish(job: ReviewJob, result: ReviewResult,
                        publishers: Sequence[Publisher], started: float) -> None:
    builds = [p for p in publishers if isinstance(p, BuildStatus)]
    for build in builds:  # reporting status never stops the review
        try:
            build.begin(result.change)
        except NovaError as exc:
            result.notes.append(f"could not tell the build it started: {exc}")
    try:
        _review(job, result, publishers)
        result.stats.seconds = round(time.monotonic() - started, 3)
        if publishers and job.confirm is not None and not job.confirm(result):
            result.notes.append("publishing was declined (--confirm): nothing was posted")
            publishers = []
        with job.tracker.step("publish"):
            for publisher in publishers:
                try:
                    report = publisher.publish(result)
                except NovaError as exc:
                    result.errors.append(str(exc))
                    if isinstance(publisher, BuildStatus):  # a waiting build hears of it
                        with suppress(NovaError):
                            publisher.abort(str(exc))
                    continue
                result.reports.append(report)
                result.notes += report.notes
                result.errors += report.errors
    except Exception as exc:  # tell a waiting build the run died, then let it propagate
        for build in builds:
            with suppress(NovaError):  # the original error matters more
                build.abort(str(exc))
        raise
    job.bus.emit(DoneEvent(token_usage={
        "llm_calls": result.stats.llm_calls, "prompt_tokens": result.stats.prompt_tokens,
        "completion_tokens": result.stats.completion_tokens}))


def _scope(job: ReviewJob, result: ReviewResult, publishers: Sequence[Publisher]) -> Change:
    """What the analyzers and the model see: the whole change, or, when Nova reviewed an
    earlier push of it, only what the pushes since then changed (placement still uses the
    whole change's diff: a comment must land on a line the pull request shows)."""
    change = result.change
    history = next((p for p in publishers if isinstance(p, ReviewHistory)), None)
    if job.full or history is None or not isinstance(job.source, IncrementalSource):
        return change
    last = history.last_reviewed_head(change)
    if not last or last == change.head_ref:
        return change
    since = job.source.changes_since(change, last)
    if since is None:
        result.notes.append(f"the last reviewed head {last[:12]} is no longer in this branch "
                            "(a rebase or force-push?): the whole change was reviewed")
        return change
    result.since = last
    result.notes.append(f"incremental review: only what changed since {last[:12]} "
                        f"({len(since.files)} file(s)); earlier findings still stand "
                        "(--full reviews the whole change)")
    return since


def _review(job: ReviewJob, result: ReviewResult, publishers: Sequence[Publisher]) -> None:
    change = _scope(job, result, publishers)
    tree = job.source.tree(result.change)
    prefetch = getattr(tree, "prefetch", None)
    if prefetch is not None:  # the filter, the analyzers and the model read these
        prefetch([f.path for f in change.files if f.status != "deleted" and not f.is_binary])
    if not change.files:
        result.notes.append("the change is empty: nothing to review")
    selection = select_files(change.files, job.settings.exclude,
                             tree.read_text if tree is not None else None)
    result.notes += skip_notes(selection.skipped)
    reviewed = replace(change, files=tuple(selection.kept))  # what the model and ruff see
    llm_comments: list[Comment] = []
    if change.files and job.settings.llm_enabled:
        findings, llm_comments = _analyze_while_reviewing(job, change, reviewed, tree, result)
    else:
        findings = scan_secrets(change.files)  # every file: keys are excluded, not harmless
        findings += _analyze(job, reviewed, tree, result.notes) if change.files else []
        try:
            if change.files:
                llm_comments = _llm_review(job, reviewed, tree, findings, result)
        except ModelError:
            pass  # already in result.errors; the analyzers' findings still publish
    with job.tracker.step("anchor") as step:
        result.placements = anchor(findings + llm_comments, result.change.files)
        step.note(f"{len(result.placed)} placed, {len(result.unplaced)} in the summary")


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
    from bot.extras import require_extra, testgen_modules
    from bot.hosts.git.source import GitSource
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
            require_extra("testgen", "nova testgen", *testgen_modules(ws.framework.language,
                                                                      job.generator))
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
