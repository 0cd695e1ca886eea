"""``nova diff``: the numbered rendering, or the parsed structure as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bot.cli.common import change_argument, change_ref, repo_option


@click.command()
@change_argument
@repo_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: the numbered diff the model sees; json: the "
    "parsed files, hunks and lines with old and new numbers.",
)
@click.option(
    "--style",
    type=click.Choice(["compact", "labeled"]),
    default=None,
    help="Rendering style of --format text; the review's diff_style setting. "
    "[env: NOVA_DIFF_STYLE] [default: compact]",
)
def diff(change: str | None, staged: bool, repo: Path, fmt: str, style: str | None) -> None:
    """Print CHANGE (default HEAD) as Nova shows it to the model.

    \b
    CHANGE: HEAD, a SHA, A..B, A...B, - (a diff on stdin), owner/repo#12, D123.
    """
    from bot.cli.common import load_from_flags
    from bot.diff.render import diff_to_dict, render_files
    from bot.hosts import resolve

    ref = change_ref(change, staged)
    settings = load_from_flags({"diff_style": style}, repo)  # flag > env > .nova.toml
    source = resolve(ref, repo=repo, settings=settings)
    result = source.fetch(ref)
    if fmt == "json":
        click.echo(json.dumps(diff_to_dict(result.files), ensure_ascii=False))
    else:
        click.echo(render_files(result.files, settings.review.diff_style), nl=False)
