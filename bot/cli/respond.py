"""``nova respond``: answer the conversation on a pull / merge request or revision."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import env_epilog, event_bus, load_from_flags, repo_option, setting_options
from bot.config import Settings

HELP = """Answer what people asked Nova on CHANGE: dismissals, questions, `@nova review`.

\b
With --comment ID only that comment is handled (in GitHub Actions: the event's
comment.id, for issue_comment and pull_request_review_comment); without it, every
command not answered yet. Each command gets exactly one answer, also when two runs
meet. In a GitHub Actions comment event, no CHANGE means the event's pull request; a
comment on a plain issue is ignored (exit 0).
\b
Exit codes: 0 ok (or nothing to do), 1 `@nova review` found something reaching
--fail-on, 2 usage or configuration error, 3 the code host or the model failed.
"""


@click.command(help=HELP, epilog=env_epilog())
@click.argument("change", required=False, default=None)
@repo_option
@click.option("--comment", "comment", default=None, metavar="ID", help="Handle this comment only.")
@click.option(
    "--events-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every execution event as a JSON line to this file.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@setting_options(names=("llm_model", "llm_base_url", "fail_on", "extra_instructions"))
def respond(
    change: str | None,
    repo: Path,
    comment: str | None,
    events_file: Path | None,
    quiet: bool,
    **flags: object,
) -> None:
    from bot.conversation.job import RespondJob, run_respond
    from bot.errors import UsageError
    from bot.hosts import open_session
    from bot.taskmanager.backend import tracker_for

    settings = load_from_flags(dict(flags), None)  # .nova.toml: from the base revision
    if change is None:
        change, event_comment = _from_actions(settings)
        if change is None:
            click.echo("nova: no pull request comment in this event: nothing to do", err=True)
            return
        comment = comment or event_comment
    if change in ("HEAD", "-", ":staged"):
        raise UsageError("nova respond needs a pull request, merge request or revision")
    session = open_session(change, repo=repo, settings=settings)
    bus = event_bus(quiet, events_file)
    tracker = tracker_for(settings.task_manager, bus)
    job = RespondJob(settings, session, change, repo, bus, tracker, comment)
    try:
        outcome = run_respond(job)
    finally:
        tracker.close()
        bus.close()
    for note in outcome.notes:
        click.echo(f"nova: {note}", err=True)
    for error in outcome.errors:
        click.echo(f"nova: error: {error}", err=True)
    click.get_current_context().exit(outcome.exit_code)


def _from_actions(settings: Settings) -> tuple[str | None, str | None]:
    """The pull request and comment of a GitHub Actions comment event; elsewhere the CI's
    change (a GitLab merge request pipeline, say) and no comment."""
    from bot.hosts import ref_from_ci
    from bot.hosts.github.conversation import comment_event
    from bot.hosts.github.settings import GitHubSettings

    github = settings.section(GitHubSettings)
    if github.event_path:  # a plain issue's comment, or no comment event: nothing
        return comment_event(github.event_path, github.repository)
    return ref_from_ci(settings), None
