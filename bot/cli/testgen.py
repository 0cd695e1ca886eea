"""``nova testgen``: write unit tests for a change, keep those with evidence, propose them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import click

from bot.cli.common import event_bus, load_from_flags, repo_option, setting_options
from bot.hosts import proposal_choices


@click.command()
@click.argument("change", required=False, default="HEAD")
@repo_option
@click.option(
    "--generator",
    type=click.Choice(["llm", "differential", "ghostwriter"]),
    default=None,
    help="Who writes the tests. Default: llm when a model is configured, else "
    "differential (Python, no model: runs each changed function on inputs from "
    "the tests, docstrings and type hints against the change and its parent, "
    "and pins what changed). ghostwriter: Hypothesis' property tests.",
)
@click.option(
    "--max-iterations",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    help="Test runs the agent may make to fix its tests.",
)
@click.option(
    "--runs",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    help="A kept test must pass this many runs in a row (flaky ones are dropped).",
)
@click.option(
    "--publish",
    "--open-mr",
    "publish",
    type=click.Choice(proposal_choices()),
    default="local",
    show_default=True,
    help="Where the kept tests go (--open-mr is the older spelling). local: a "
    "branch nova/tests/<sha> and nova-tests-<sha>.patch; github: push the "
    "branch and open a pull request (GITHUB_REPOSITORY); gitlab: a merge "
    "request (CI_PROJECT_PATH); phabricator: a revision from the raw diff, "
    "child of the original revision.",
)
@click.option(
    "--patch-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where the .patch file goes.",
)
@click.option(
    "--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option("--output-file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--events-file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@setting_options(
    names=("llm_model", "llm_base_url", "test_python", "test_timeout", "test_memory_mb"),
    helps={
        "llm_model": "Model as provider:model (openai:gpt-4o-mini, "
        "anthropic:claude-sonnet-4-5) for the test-writing agent. "
        "Unset: the differential generator writes the tests, no "
        "model needed."
    },
)
def testgen(
    change: str,
    repo: Path,
    generator: str | None,
    max_iterations: int,
    runs: int,
    publish: str,
    patch_dir: Path,
    output: str,
    output_file: Path | None,
    events_file: Path | None,
    quiet: bool,
    **flags: object,
) -> None:
    """Write unit tests for CHANGE (default HEAD), run them, keep only tests that pass
    every run, execute a changed line and fail on a mutant of it (or on the parent
    commit), run the full suite, and propose them.

    \b
    Tests are written and checked for pytest, unittest and node:test (Node >= 20.18:
    node_modules/.bin, PATH, or `pip install nova-bot[node]`); other frameworks get the
    matrix. Python tests run with the project's interpreter: --test-python, else the
    active virtualenv, else .venv/ or venv/ in the repository, else python on PATH, else
    nova's own; the report says which and why. Every run is a subprocess with no tokens in
    its environment, a timeout per test (--test-timeout), a memory limit
    (--test-memory-mb), and no network where the machine allows. The agent may write only
    new test files under the test directories. Exit codes: 0 tests proposed (or nothing
    to do), 1 tests written but none kept, 2 usage error, 3 a service failed, 4 no test
    could be generated.
    """
    from bot.hosts import resolve
    from bot.taskmanager.backend import tracker_for
    from bot.testgen.pipeline import TestgenJob, run_testgen

    settings = load_from_flags(dict(flags), repo)
    generator = generator or ("llm" if settings.llm_enabled else "differential")
    bus = event_bus(quiet, events_file)
    tracker = tracker_for(settings.task_manager, bus)
    try:
        job = TestgenJob(
            settings=settings,
            source=resolve(change, repo=repo, settings=settings),
            ref=change,
            repo=repo,
            bus=bus,
            tracker=tracker,
            generator=generator,
            max_iterations=max_iterations,
            runs=runs,
            publish=publish,
            patch_dir=patch_dir,
            virtual_env=os.environ.get("VIRTUAL_ENV"),
            path_python=shutil.which("python"),
        )
        result = run_testgen(job)
    finally:
        tracker.close()
        bus.close()
    text = result.format(output)
    if output_file is not None:
        output_file.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    for error in result.errors:
        click.echo(f"nova: error: {error}", err=True)
    click.get_current_context().exit(result.exit_code())
