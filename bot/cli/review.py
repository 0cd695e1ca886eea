"""``nova review``: fetch a change, review it, print or publish the placed comments."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import (
    change_argument,
    change_ref,
    env_epilog,
    event_bus,
    load_from_flags,
    repo_option,
    setting_options,
)
from bot.publishers.local import FORMATS


@click.command(epilog=env_epilog())
@change_argument
@repo_option
@click.option("--output", "-o", "output", type=click.Choice(FORMATS), default="text",
              show_default=True, help="Output format.")
@click.option("--output-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the output to this file instead of stdout.")
@click.option("--events-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write every execution event as a JSON line to this file.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@click.option("--no-llm", is_flag=True, help="Run only the static analyzers.")
@click.option("--publish", type=click.Choice(["local", "github", "phabricator"]),
              default="local", show_default=True,
              help="Where the review goes besides --output: github posts one review and a "
                   "summary comment on the pull request; phabricator posts to the revision "
                   "(lint messages on the build, inline comments with Nova's extension, and "
                   "always a summary comment).")
@click.option("--harbormaster-target", "harbormaster_target", default=None,
              help="Harbormaster build target PHID (PHID-HMBT-…) to report work/pass/fail "
                   "and lint messages to. [env: NOVA_HARBORMASTER_TARGET]")
@click.option("--force", is_flag=True,
              help="Review again a head SHA that was already reviewed (GitHub).")
@click.option("--request-changes", is_flag=True, default=None,
              help="GitHub: submit REQUEST_CHANGES when a finding reaches --fail-on. "
                   "[env: NOVA_REQUEST_CHANGES]")
@setting_options
def review(change: str | None, staged: bool, repo: Path, output: str,
           output_file: Path | None, events_file: Path | None, quiet: bool, no_llm: bool,
           publish: str, force: bool, request_changes: bool | None,
           harbormaster_target: str | None, **flags: object) -> None:
    """Review CHANGE (default HEAD) and print comments placed on NEW-file lines.

    \b
    CHANGE: HEAD, a SHA, A..B, A...B, - (a unified diff on stdin), owner/repo#12
    or a pull request URL, D123 (latest diff) or D123:4567 (Phabricator).
    In GitHub Actions on a pull_request event, no CHANGE means that pull request.
    Exit codes: 0 ok, 1 a finding reaches --fail-on, 2 usage or configuration
    error, 3 an external service (the model, GitHub, Conduit, an analyzer) failed
    or does not know the change.
    """
    from bot.hosts import resolve
    from bot.pipeline import ReviewJob, exit_code_for, run_review
    from bot.taskmanager import tracker_for

    if no_llm:
        flags["llm_review"] = False
    if request_changes:
        flags["request_changes"] = True
    flags["harbormaster_target"] = harbormaster_target
    settings = load_from_flags(dict(flags), repo)
    if change is None and not staged:
        from bot.hosts.github.source import pr_from_event

        change = pr_from_event(settings)
    ref = change_ref(change, staged)
    bus = event_bus(quiet, events_file)
    tracker = tracker_for(settings, bus)
    try:
        source = resolve(ref, repo=repo, settings=settings)
        job = ReviewJob(settings=settings, source=source, ref=ref, repo=repo, bus=bus,
                        tracker=tracker, force=force)
        result = run_review(job, _publishers(settings, source, output, output_file, publish,
                                             force))
    finally:
        tracker.close()
        bus.close()
    code = exit_code_for(result, settings.fail_on)
    for error in result.errors:
        click.echo(f"nova: error: {error}", err=True)
    click.get_current_context().exit(code)


def _publishers(settings, source, output: str, output_file: Path | None, publish: str,
                force: bool) -> list:
    from bot.errors import UsageError
    from bot.publishers.local import LocalPublisher

    publishers: list = [LocalPublisher(output, output_file)]
    github = None
    if publish == "github":
        from bot.hosts.github.publisher import GitHubPublisher
        from bot.hosts.github.source import GitHubSource

        if not isinstance(source, GitHubSource):
            raise UsageError("--publish github needs a GitHub pull request (owner/repo#12, a "
                             "pull request URL, or a pull_request event in Actions)")
        github = GitHubPublisher(source, settings, force=force)
        publishers.append(github)
    if publish == "phabricator":
        from bot.hosts.phabricator.publisher import PhabricatorPublisher
        from bot.hosts.phabricator.source import PhabricatorSource

        if not isinstance(source, PhabricatorSource):
            raise UsageError("--publish phabricator needs a revision (D123 or D123:4567)")
        publishers.append(PhabricatorPublisher(source, settings, force=force))
    if settings.github_step_summary or settings.github_output:
        from bot.hosts.github.actions import ActionsPublisher

        publishers.append(ActionsPublisher(settings, github))
    return publishers
