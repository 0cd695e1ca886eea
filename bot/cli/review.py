"""``nova review``: fetch a change, review it, print or publish the placed comments."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

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
from bot.config import Settings
from bot.errors import NovaError
from bot.hosts import hosts, publish_choices
from bot.report.formats import FORMATS

if TYPE_CHECKING:
    from bot.review.pipeline import Output
    from bot.review.result import ReviewResult

HELP = """Review CHANGE (default HEAD) and print comments placed on NEW-file lines.

\b
CHANGE, one of:
{references}
In a CI job for a pull / merge request, no CHANGE means that one.
\b
Exit codes: 0 ok, 1 a finding reaches --fail-on (a re-run on a reviewed head
exits as its first review did), 2 usage or configuration error, 3 an external
service (the model, the code host, an analyzer) failed or does not know the change.
""".format(references="\n".join(f"  {h.references} ({h.title})" for h in hosts()))


@click.command(help=HELP, epilog=env_epilog())
@change_argument
@repo_option
@click.option(
    "--output",
    "-o",
    "output",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--output-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the output to this file instead of stdout.",
)
@click.option(
    "--sarif-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the review as SARIF 2.1.0 to this file, beside --output (for "
    "GitHub code scanning: github/codeql-action/upload-sarif).",
)
@click.option(
    "--events-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every execution event as a JSON line to this file.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@click.option("--no-llm", is_flag=True, help="Run only the static analyzers.")
@click.option(
    "--publish",
    type=click.Choice(publish_choices()),
    default="local",
    show_default=True,
    help="Where the review goes besides --output: github posts one review and a "
    "summary comment on the pull request; gitlab one thread per finding and a "
    "summary note on the merge request; phabricator posts to the revision "
    "(lint messages on the build, inline comments with Nova's extension, and "
    "always a summary comment).",
)
@click.option(
    "--confirm",
    is_flag=True,
    help="On a terminal, show what will be posted (counts, the summary, each inline "
    "location) and ask before publishing. Never asks in CI; declined: nothing "
    "is posted, exit 0.",
)
@click.option(
    "--harbormaster-target",
    "harbormaster_target",
    default=None,
    help="Harbormaster build target PHID (PHID-HMBT-…) to report work/pass/fail "
    "and lint messages to. [env: NOVA_HARBORMASTER_TARGET]",
)
@click.option(
    "--force",
    is_flag=True,
    help="Review the whole change again, also a head that was already reviewed (a "
    "re-run otherwise posts nothing and exits as the first review did).",
)
@click.option(
    "--full",
    is_flag=True,
    help="Review the whole change even when Nova reviewed an earlier push of it (by "
    "default only what the new pushes changed is reviewed).",
)
@click.option(
    "--request-changes",
    is_flag=True,
    default=None,
    help="GitHub: submit REQUEST_CHANGES when a finding reaches --fail-on. "
    "[env: NOVA_REQUEST_CHANGES]",
)
@click.option(
    "--analyzer-results",
    "analyzer_results",
    multiple=True,
    metavar="FILE[:FORMAT]",
    help="A linter's results to put on the diff with the model's findings "
    "(repeatable): sarif, rdjson, rdjsonl, checkstyle or eslint (-f json); "
    "the format is detected when omitted. [env: NOVA_ANALYZER_RESULTS, "
    "comma-separated]",
)
@setting_options
def review(
    change: str | None,
    staged: bool,
    repo: Path,
    output: str,
    output_file: Path | None,
    events_file: Path | None,
    quiet: bool,
    no_llm: bool,
    publish: str,
    confirm: bool,
    force: bool,
    full: bool,
    request_changes: bool | None,
    harbormaster_target: str | None,
    analyzer_results: tuple[str, ...],
    sarif_file: Path | None = None,
    **flags: object,
) -> None:
    from bot.hosts import open_session, ref_from_ci
    from bot.review.api import publishers_for
    from bot.review.pipeline import ReviewJob, run_review
    from bot.review.result import exit_code_for
    from bot.taskmanager.backend import tracker_for

    if no_llm:
        flags["llm_review"] = False
    if request_changes:
        flags["request_changes"] = True
    flags["harbormaster_target"] = harbormaster_target
    flags["analyzer_results"] = analyzer_results or None
    settings = load_from_flags(dict(flags), None)  # .nova.toml: from the base revision
    if settings.llm_enabled:  # a missing provider extra or key: one line, nothing fetched
        from bot.llm.fallback import check_models

        check_models(settings.llm)
    if change is None and not staged:
        change = ref_from_ci(settings)
    ref = change_ref(change, staged)
    outputs = _outputs(settings, output, output_file, sarif_file)
    try:
        session = open_session(ref, repo=repo, settings=settings)
        publishers = publishers_for(session, publish, force)
    except NovaError as exc:
        _error_output(outputs, ref, exc)
        raise
    bus = event_bus(quiet, events_file)
    tracker = tracker_for(settings.task_manager, bus)
    job = ReviewJob(
        settings=settings,
        session=session,
        ref=ref,
        repo=repo,
        bus=bus,
        tracker=tracker,
        force=force,
        full=full or force,
        confirm=_ask if confirm and _can_ask(settings) else None,
    )
    try:
        result = run_review(job, publishers, outputs)
    finally:
        tracker.close()
        bus.close()
    code = exit_code_for(result, job.settings.review.fail_on)
    for error in result.errors:
        click.echo(f"nova: error: {error}", err=True)
    click.get_current_context().exit(code)


def _outputs(
    settings: Settings, output: str, output_file: Path | None, sarif_file: Path | None = None
) -> list[Output]:
    from bot.hosts.github.settings import GitHubSettings
    from bot.report.local import LocalPublisher

    github = settings.section(GitHubSettings)  # in GitHub Actions: its job summary, outputs
    outputs: list[Output] = [LocalPublisher(output, output_file, fence=github.actions)]
    if sarif_file is not None:
        outputs.append(LocalPublisher("sarif", sarif_file, option="--sarif-file"))
    if github.step_summary or github.output:
        from bot.hosts.github.actions import ActionsOutput

        outputs.append(ActionsOutput(github))
    return outputs


def _error_output(outputs: list[Output], ref: str, exc: NovaError) -> None:
    from bot.review.pipeline import write_error_outputs

    write_error_outputs(outputs, ref, exc)


def _can_ask(settings: Settings) -> bool:
    return not settings.ci and sys.stdin.isatty() and sys.stderr.isatty()


def _ask(result: ReviewResult) -> bool:
    """Show what will be posted and ask (``--confirm``)."""
    from bot.report.digest import build_digest
    from bot.report.formats import summary_text

    digest = build_digest(result, local=True)
    click.echo(
        f"About to publish the review of {result.change.id}: "
        f"{len(result.placed)} inline, {len(result.unplaced)} in the summary only.\n"
        f"  {digest.verdict()}\n  {digest.counts()}",
        err=True,
    )
    for p in result.placed:
        click.echo(
            f"  {p.path}:{p.line} [{p.comment.severity}] "
            f"{p.comment.body.splitlines()[0][:100] if p.comment.body else ''}",
            err=True,
        )
    summary = summary_text(result)
    if summary:
        click.echo("Summary:\n  " + "\n  ".join(summary.splitlines()[:20]), err=True)
    return click.confirm("Publish?", default=False, err=True)
