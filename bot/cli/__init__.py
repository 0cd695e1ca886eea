"""The ``nova`` command. Only click is imported here; commands load on use (fast --help)."""

from __future__ import annotations

import importlib
import os

import click

from bot import __version__

__all__ = ["cli", "main"]

COMMANDS = {
    "review": ("bot.cli.review", "review", "Review a change and place comments on its lines."),
    "diff": ("bot.cli.diff", "diff", "Print a change as the numbered diff the model sees."),
    "doctor": ("bot.cli.doctor", "doctor", "Check configuration and reachability of services."),
    "mcp": ("bot.cli.mcp", "mcp", "Serve Nova's tools to other agents over MCP."),
    "respond": (
        "bot.cli.respond",
        "respond",
        "Answer what people asked Nova on a change (dismiss, explain, review).",
    ),
    "serve": ("bot.cli.serve", "serve", "Run jobs from GitHub, GitLab and Phorge webhooks."),
    "testgen": (
        "bot.cli.testgen",
        "testgen",
        "Write unit tests for a change and keep those that pass and bite.",
    ),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def invoke(self, ctx: click.Context) -> object:
        """A ``NovaError`` becomes one clear line (no traceback) and its exit code. In GitHub
        Actions stdout and stderr are guarded: no line printed can start a workflow command."""
        from bot.errors import NovaError
        from bot.report.commands import guarded_streams

        with guarded_streams(_in_actions()):
            try:
                return super().invoke(ctx)
            except NovaError as exc:
                click.echo(f"nova: error: {exc}", err=True)
                if exc.hint:
                    click.echo(f"nova: hint: {exc.hint}", err=True)
                ctx.exit(exc.exit_code)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nova")
def cli() -> None:
    """Nova: a CI bot that reviews code changes with an LLM and places every comment on the
    right line of the new file.

    \b
    Quick start (no model needed; ruff findings on the last commit):
      nova review HEAD --repo .
    With a model:
      NOVA_LLM_MODEL=openai:gpt-4o-mini NOVA_LLM_API_KEY=... nova review HEAD
    """


def _in_actions() -> bool:
    """GitHub Actions sets GITHUB_ACTIONS (declared in ``GitHubSettings``); read here, before
    any setting is loaded, because a settings error may already quote untrusted text."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


def main(argv: list[str] | None = None) -> None:
    # first: no generated test may read this process's environment (bot/sandbox/guard.py)
    from bot.sandbox.guard import undumpable

    undumpable()
    if _in_actions():  # the whole process: also a traceback printed at exit
        from bot.report.commands import guard_process

        guard_process()
    cli.main(args=argv, prog_name="nova")
