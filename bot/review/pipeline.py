"""The order of the review's stages. Only this module knows it; the CLI calls in.

Test generation has its own order: ``bot.testgen.pipeline``.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot.analyzers.merge import combine
from bot.analyzers.secrets import scan_secrets
from bot.change import Change, Comment
from bot.config import Settings, check_repo_config, with_base_config
from bot.diff.anchor import FileIndex, anchor, anchor_one, build_index
from bot.errors import ModelError, NovaError, one_line, redact
from bot.events import DecisionEvent, DoneEvent, EventBus
from bot.hosts.base import (
    BuildStatus,
    HostSession,
    IncrementalSource,
    LocalTree,
    PrefetchingTree,
    Publisher,
    RerunGuard,
    ReviewHistory,
    Source,
    TreeReader,
)
from bot.review.filter import select_files, skip_notes
from bot.review.result import PriorReview, ReviewResult
from bot.steps import StepTracker

if TYPE_CHECKING:
    from bot.conversation.listen import Listening
    from bot.review.agent.output import ParsedAnswer

__all__ = ["Output", "ReviewJob", "run_review", "write_error_outputs"]

CONFIG_FILE = ".nova.toml"
LLM_OFF_NOTE = (
    "LLM review is off: no model is configured, so only static analyzers ran. "
    "Turn it on with NOVA_LLM_MODEL=provider:model (e.g. openai:gpt-4o-mini, plus "
    "NOVA_LLM_API_KEY; or NOVA_LLM_BASE_URL for an OpenAI-compatible server)."
)


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
    listening: Listening | None = None  # the host's conversation (bot.conversation)

    @property
    def source(self) -> Source:
        return self.session.source


def _analyze(
    job: ReviewJob, change: Change, tree: TreeReader | None, notes: list[str]
) -> list[Comment]:
    """The built-in analyzers, --analyzer-results files and the repository's [[analyzer]]s
    (bot.analyzers)."""
    from bot.analyzers.base import base_tree
    from bot.analyzers.collect import analyze

    with job.tracker.step("analyze") as step:
        settings = job.settings
        if settings.review.analyzers == "none" and not settings.review.analyzer_results:
            step.skip("analyzers disabled (NOVA_ANALYZERS=none)")
            return []
        root = tree.root if isinstance(tree, LocalTree) else job.repo
        base = base_tree(job.source, change)
        found = analyze(settings.review, change, tree, root, notes, base)
        if not found.status:
            step.skip("no analyzer ran")
            return []
        step.note("; ".join(found.status))
        return found.comments


def _llm_review(
    job: ReviewJob,
    change: Change,
    tree: TreeReader | None,
    findings: list[Comment],
    result: ReviewResult,
    later: Future[list[Comment]] | None = None,
) -> list[Comment]:
    with job.tracker.step("review") as step:
        if not job.settings.llm_enabled:
            step.skip("no model configured" if not job.settings.llm.model else "disabled")
            result.notes.append(
                LLM_OFF_NOTE
                if not job.settings.llm.model
                else "LLM review is disabled (NOVA_LLM_REVIEW=false)."
            )
            return []
        if tree is None:
            result.notes.append(
                "repository files are not available: the model reviewed the diff alone"
            )
        from bot.llm.loop import preloaded, run_coroutine

        preloaded()
        from bot.review.agent import review_change

        outcome = run_coroutine(
            review_change(
                change,
                tree,
                findings,
                job.settings.llm,
                job.settings.review,
                job.bus,
                result.stats,
                later,
                _streamer(result),
            )
        )
        result.notes += outcome.notes
        result.errors += outcome.errors
        result.summary = "\n\n".join(outcome.summaries)
        result.walkthrough, result.model = outcome.walkthrough, job.settings.llm.model or ""
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


def _find(
    job: ReviewJob, change: Change, reviewed: Change, tree: TreeReader | None, notes: list[str]
) -> list[Comment]:
    """The secret scan of every changed file (an excluded key is still a key), then the
    analyzers on the files the review filter kept."""
    return scan_secrets(change.files) + _analyze(job, reviewed, tree, notes)


def _analyze_while_reviewing(
    job: ReviewJob, change: Change, reviewed: Change, tree: TreeReader | None, result: ReviewResult
) -> tuple[list[Comment], list[Comment]]:
    """The model's batches start as soon as the diff is rendered; the analyzers (the secret
    scan of every file, then ``_analyze``) run in a thread meanwhile (ruff is subprocesses).
    Their findings are shown to the batches that start after they are known, placed as soon
    as they are known (a run cut short keeps them), and merged with the model's before the
    anchor step."""
    notes: list[str] = []
    at = len(result.notes)  # the analyzers' notes go first, as when they ran first

    def analyze() -> list[Comment]:
        found = _find(job, change, reviewed, tree, notes)
        # the same placement as the final step: a finding the analyzers keep off the diff
        # (a broken caller elsewhere) goes to the summary, never to the nearest line
        to_anchor, held = combine(found, [], result.change.files)
        result.placements += anchor(to_anchor, result.change.files) + held
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
    not configure its own review (it could turn the analyzers off). Say when it edits it.
    A broken base file is reported here and in the job log, and the review goes on without
    it (``with_base_config``): it never blocks the change that repairs it."""
    base = job.source.read_base(change, CONFIG_FILE)
    job.settings, broken = with_base_config(job.settings, base, f"{CONFIG_FILE} (base)")
    job.session.settings = job.settings
    notes = [broken] if broken else []
    if broken:
        print(f"nova: warning: {one_line(broken)}", file=sys.stderr, flush=True)
    if any(f.path == CONFIG_FILE or f.old_path == CONFIG_FILE for f in change.files):
        used = "(none)" if base is None or broken else CONFIG_FILE
        notes.append(
            f"this change edits {CONFIG_FILE}; its settings apply to later changes once it "
            f"is merged: this review used the base revision's {used}"
            + _head_config_check(job, change)
        )
    return notes


def _head_config_check(job: ReviewJob, change: Change) -> str:
    """What the change's own ``.nova.toml`` would do once merged: checked, never applied
    (so a broken one is caught before it lands, and a repair is seen to work)."""
    edited = next((f for f in change.files if f.path == CONFIG_FILE), None)
    tree = job.source.tree(change) if edited is not None and edited.status != "deleted" else None
    if tree is None:
        return ""
    why = check_repo_config(tree.read_text(CONFIG_FILE), f"this change's {CONFIG_FILE}")
    return (
        f"; {why}: merged, it would be reported and ignored"
        if why
        else (f"; this change's {CONFIG_FILE} is valid")
    )


def _prior_review(
    job: ReviewJob, change: Change, publishers: Sequence[Publisher], notes: list[str]
) -> PriorReview | None:
    """A host's word (from Nova's own summary) that this exact head was reviewed before.
    A degraded review (a service failed in it) is done again, to complete it. Every guard
    is asked, also with --force: it settles who Nova is before the model runs."""
    for publisher in publishers:
        if isinstance(publisher, RerunGuard):
            prior = publisher.prior_review(change)
            if prior is None or job.force:
                continue
            if prior.complete:
                return prior
            notes.append(
                f"an earlier review of this head was incomplete ({prior.errors} service(s) "
                "failed): reviewed again to post what is missing, nothing twice"
            )
    return None


def run_review(
    job: ReviewJob, publishers: Sequence[Publisher], outputs: Sequence[Output] = ()
) -> ReviewResult:
    """fetch-change → analyze → review → anchor → publish (hosts) → outputs."""
    started = time.monotonic()
    if job.settings.llm_enabled:  # the model client loads while the change is fetched
        from bot.llm.loop import preload

        preload(job.settings.llm.provider)
    job.tracker.start(job.session_id, str(job.repo.resolve()) if job.repo else None)
    try:
        with job.tracker.step("fetch-change") as step:
            change = job.source.fetch(job.ref)
            step.note(f"{len(change.files)} files")
            config_notes = _repo_config(job, change)
            prior = _prior_review(job, change, publishers, config_notes)
    except NovaError as exc:
        write_error_outputs(outputs, job.ref, exc)
        raise
    result = ReviewResult(change=change, summary="", notes=[*change.notes, *config_notes])
    result.fail_on = job.settings.review.fail_on  # the .nova.toml of the base may set it
    if publishers:  # the host's conversation: dismissals, answers (bot.conversation)
        from bot.conversation.listen import listen_for_review

        prior = listen_for_review(job, result, publishers, prior)
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
        result.errors.append(
            f"the review stopped early ({type(exc).__name__}: "
            f"{one_line(redact(str(exc)))[:300]}); this is what was found"
        )
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


def _skip_reviewed(
    job: ReviewJob, result: ReviewResult, prior: PriorReview, publishers: Sequence[Publisher]
) -> None:
    """Skip the model, post nothing, and exit as the first review of this head did."""
    result.prior = prior
    failing = prior.reaches(job.settings.review.fail_on)
    result.notes.append(
        f"{result.change.id} at {prior.head[:12]} was already reviewed; nothing was posted "
        f"(use --force to review it again). That review had {len(prior.severities)} "
        f"finding(s){'; some reach --fail-on ' + job.settings.review.fail_on if failing else ''}."
    )
    for name in ("analyze", "review", "anchor", "publish"):
        with job.tracker.step(name) as skipped:
            skipped.skip("already reviewed")
    if job.listening is not None:  # a refused dismissal, a question: answered all the same
        job.listening.finish(result, reviewed=False)
    for publisher in publishers:
        if isinstance(publisher, BuildStatus):
            try:
                publisher.finish(
                    not failing,
                    f"already reviewed: {len(prior.severities)} finding(s) in the first review",
                )
            except NovaError as exc:
                result.errors.append(f"reporting the build status failed: {exc}")


def _review_and_publish(
    job: ReviewJob, result: ReviewResult, publishers: Sequence[Publisher], started: float
) -> None:
    builds = [p for p in publishers if isinstance(p, BuildStatus)]
    for build in builds:  # reporting status never stops the review
        try:
            build.begin(result.change)
        except NovaError as exc:
            result.notes.append(f"could not tell the build it started: {exc}")
    try:
        _review(job, result, publishers)
        if job.settings.review.ignore_rules:  # [[ignore]] of the base .nova.toml
            from bot.conversation.ignore import apply_ignores

            apply_ignores(result, job.settings.review.ignore_rules)
        if job.listening is not None:  # dismissed findings leave the gate before publishing
            job.listening.apply(result)
        result.stats.seconds = round(time.monotonic() - started, 3)
        if publishers and job.confirm is not None:  # human in the loop: the terminal handler
            approved = job.confirm(result)
            job.bus.emit(
                DecisionEvent(
                    handler="terminal",
                    action="publish",
                    allowed=approved,
                    outcome="approved" if approved else "declined",
                )
            )
            if not approved:
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
        if job.listening is not None and publishers:
            job.listening.finish(result, reviewed=True)
    except Exception as exc:  # tell a waiting build the run died, then let it propagate
        for build in builds:
            with suppress(NovaError):  # the original error matters more
                build.abort(str(exc))
        raise
    job.bus.emit(DoneEvent(token_usage=result.stats.token_usage()))


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
        result.notes.append(
            f"the last reviewed head {last[:12]} is no longer in this branch "
            "(a rebase or force-push?): the whole change was reviewed"
        )
        return change
    result.since = last
    result.notes.append(
        f"incremental review: only what changed since {last[:12]} "
        f"({len(since.files)} file(s)); earlier findings still stand "
        "(--full reviews the whole change)"
    )
    return since


def _review(job: ReviewJob, result: ReviewResult, publishers: Sequence[Publisher]) -> None:
    change = _scope(job, result, publishers)
    tree = job.source.tree(result.change)
    if isinstance(tree, PrefetchingTree):  # the filter, the analyzers and the model read these
        tree.prefetch([f.path for f in change.files if f.status != "deleted" and not f.is_binary])
    if not change.files:
        result.notes.append("the change is empty: nothing to review")
    selection = select_files(
        change.files, job.settings.review.exclude, tree.read_text if tree is not None else None
    )
    result.notes += skip_notes(selection.skipped)
    reviewed = replace(change, files=tuple(selection.kept))  # what the model and ruff see
    findings: list[Comment] = []
    llm_comments: list[Comment] = []
    if change.files and job.settings.llm_enabled:
        findings, llm_comments = _analyze_while_reviewing(job, change, reviewed, tree, result)
    elif change.files:  # no model: the analyzers, then the review step says how to add one
        findings = _find(job, change, reviewed, tree, result.notes)
        llm_comments = _llm_review(job, reviewed, tree, findings, result)
    with job.tracker.step("anchor") as step:
        comments, held = combine(findings, llm_comments, result.change.files)
        result.placements = anchor(comments, result.change.files) + held
        step.note(f"{len(result.placed)} placed, {len(result.unplaced)} in the summary")
