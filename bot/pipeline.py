"""The order of the stages. Only this module knows it; the CLI and MCP server call in."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bot.analyzers.ruff import run_ruff
from bot.config import Settings
from bot.diff.anchor import anchor
from bot.errors import AnalyzerError, ModelError, NovaError
from bot.events import DoneEvent, EventBus
from bot.models import Change, Comment, ReviewResult, severity_rank
from bot.sources.base import Source
from bot.taskmanager.tracker import StepTracker

__all__ = ["Publisher", "ReviewJob", "exit_code_for", "run_review"]

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
