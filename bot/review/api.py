"""The review for callers other than ``nova review`` (the MCP server): the same job, the same
``run_review``, built from a reference and a host name instead of click options."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.events import EventBus
    from bot.hosts.base import HostSession, Publisher
    from bot.review.result import ReviewResult

__all__ = ["publishers_for", "review_ref"]


def publishers_for(session: HostSession, publish: str, force: bool) -> list[Publisher]:
    """The host publisher ``--publish`` names (none for ``local``); a reference of another
    host is a usage error."""
    from bot.hosts import host_named

    if publish == "local":
        return []
    host = host_named(publish)
    publisher: Publisher | None = session.publisher(force=force)
    if publisher is None or session.source.name != host.name:
        raise UsageError(
            f"--publish {publish} needs a {host.title} {host.noun} ({host.references})"
        )
    return [publisher]


def review_ref(
    settings: Settings,
    ref: str,
    repo: Path,
    bus: EventBus,
    publish: str = "local",
    force: bool = False,
) -> ReviewResult:
    """Review ``ref`` as ``nova review REF --publish PUBLISH`` does (no outputs, no
    confirmation: the caller has the result); the steps go to ``bus``."""
    from bot.hosts import open_session
    from bot.review.pipeline import ReviewJob, run_review
    from bot.steps import StepTracker

    if settings.llm_enabled:  # a missing provider extra or key: one line, nothing fetched
        from bot.llm.fallback import check_models

        check_models(settings.llm)
    session = open_session(ref, repo=repo, settings=settings)
    publishers = publishers_for(session, publish, force)
    job = ReviewJob(
        settings=settings,
        session=session,
        ref=ref,
        repo=repo,
        bus=bus,
        tracker=StepTracker(bus),
        force=force,
        full=force,
    )
    return run_review(job, publishers)
