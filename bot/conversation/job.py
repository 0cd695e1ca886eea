"""``nova respond``: answer the conversation on one change, outside a review.

With a comment id (in Actions, the event's ``comment.id``) only that comment is handled;
without, every command not answered yet. ``@nova review`` runs the review pipeline itself
(incremental where the host supports it), and that run answers the rest.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from bot.config import Settings, with_base_config
from bot.conversation.listen import Listening
from bot.errors import NovaError, UsageError, one_line
from bot.events import EventBus
from bot.hosts.base import HostSession
from bot.review.result import ReviewResult, exit_code_for
from bot.steps import StepTracker

__all__ = ["RespondJob", "run_respond"]

CONFIG_FILE = ".nova.toml"


@dataclass
class RespondJob:
    settings: Settings
    session: HostSession
    ref: str
    repo: Path | None
    bus: EventBus
    tracker: StepTracker
    comment: str | None = None  # handle only this comment


@dataclass(frozen=True)
class RespondOutcome:
    exit_code: int
    notes: tuple[str, ...]
    errors: tuple[str, ...]


def run_respond(job: RespondJob) -> RespondOutcome:
    """Read the conversation, answer what is pending (or the one comment), review on
    ``@nova review``. Exit code: the review's when one ran, 3 when the host failed, else 0."""
    with job.tracker.step("fetch-change") as step:
        change = job.session.source.fetch(job.ref)
        base = job.session.source.read_base(change, CONFIG_FILE)
        # the base revision's settings (the handle, the model); a broken file is reported
        # and left out, as in a review (bot.config.with_base_config)
        job.settings, broken = with_base_config(job.settings, base, f"{CONFIG_FILE} (base)")
        job.session.settings = job.settings
        if broken:
            print(f"nova: warning: {one_line(broken)}", file=sys.stderr, flush=True)
        step.note(change.id)
    listening = Listening.open(job.session, change, job.settings, job.bus, job.tracker)
    if listening is None:
        raise UsageError(f"{job.session.source.name} cannot read a conversation yet")
    listening.tree = job.session.source.tree(change)
    todo = listening.ledger.pending()
    if job.comment is not None:
        todo = [d for d in todo if d.note.id == job.comment]
        if not todo:
            return RespondOutcome(0, (_ignored(listening, job.comment),), ())
    if any(d.outcome == "review" for d in todo):
        return _review(job, listening)
    result = ReviewResult(change=change, summary="")
    listening.finish(result, reviewed=False, only=job.comment)
    code = 3 if result.errors else 0
    return RespondOutcome(
        code, (f"{listening.responder.posted} answer(s) posted",), tuple(result.errors)
    )


def _ignored(listening: Listening, comment: str) -> str:
    if comment in listening.ledger.answered:
        return f"comment {comment} was answered already"
    return (
        f"comment {comment} is no command for Nova (none in it, an edited comment, a bot's, "
        "or not on this change)"
    )


def _review(job: RespondJob, listening: Listening) -> RespondOutcome:
    """``@nova review``: the review pipeline, which also answers every pending command."""
    from bot.review.pipeline import ReviewJob, run_review

    publisher = job.session.publisher(force=False)
    if publisher is None:
        raise UsageError(f"{job.session.source.name} does not publish reviews")
    review_job = ReviewJob(
        settings=job.settings,
        session=job.session,
        ref=job.ref,
        repo=job.repo,
        bus=job.bus,
        tracker=job.tracker,
        listening=listening,
    )
    try:
        result = run_review(review_job, [publisher])
    except NovaError as exc:
        return RespondOutcome(exc.exit_code, (), (str(exc),))
    code = exit_code_for(result, review_job.settings.review.fail_on)
    return RespondOutcome(code, tuple(result.notes[-3:]), tuple(result.errors))
