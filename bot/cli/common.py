"""Options shared by commands, generated from ``bot.config.all_settings()``."""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

import click

from bot.config import Settings, SettingSpec, all_settings, load_settings

if TYPE_CHECKING:
    from bot.events import EventBus

__all__ = ["change_argument", "env_epilog", "load_from_flags", "repo_option", "setting_options"]

# setting name -> (flag, click type); every other setting is environment / .nova.toml only.
_FLAGS: dict[str, tuple[str, Any]] = {
    "llm_model": ("--model", str),
    "llm_base_url": ("--base-url", str),
    "fail_on": ("--fail-on", None),
    "diff_style": ("--diff-style", None),
    "token_budget": ("--token-budget", int),
    "max_concurrency": ("--max-concurrency", int),
    "extra_instructions": ("--extra-instructions", str),
    "analyzers": ("--analyzers", None),
    "filter_mode": ("--filter-mode", None),
    "test_python": ("--test-python", str),
    "test_timeout": ("--test-timeout", float),
    "test_memory_mb": ("--test-memory-mb", int),
}
REVIEW_SETTINGS = (
    "llm_model",
    "llm_base_url",
    "fail_on",
    "diff_style",
    "token_budget",
    "max_concurrency",
    "extra_instructions",
    "analyzers",
    "filter_mode",
)
_Command = TypeVar("_Command", bound=Callable[..., Any])


def _specs() -> dict[str, SettingSpec]:
    return {s.name: s for s in all_settings()}


@overload
def setting_options(
    func: _Command, *, names: Sequence[str] = ..., helps: Mapping[str, str] | None = ...
) -> _Command: ...


@overload
def setting_options(
    func: None = ..., *, names: Sequence[str] = ..., helps: Mapping[str, str] | None = ...
) -> Callable[[_Command], _Command]: ...


def setting_options(
    func: _Command | None = None,
    *,
    names: Sequence[str] = REVIEW_SETTINGS,
    helps: Mapping[str, str] | None = None,
) -> _Command | Callable[[_Command], _Command]:
    """Flags for the settings ``names`` (default: the review's). ``helps`` replaces a
    setting's help where a command means something else by it (testgen: no model means
    the model-free generator, not "no LLM review"). ``@setting_options`` or
    ``@setting_options(names=..., helps=...)``."""

    def apply(f: _Command) -> _Command:
        for name in reversed(names):
            flag, kind = _FLAGS[name]
            spec = _specs()[name]
            default = f" [default: {spec.default}]" if spec.default not in (None, "", ()) else ""
            kind = click.Choice(spec.choices) if spec.choices else kind
            text = (helps or {}).get(name, spec.help)
            limits = f" {spec.range_text()}" if spec.range_text() else ""
            f = click.option(
                flag,
                name,
                type=kind,
                default=None,
                help=f"{text}{limits} [env: {spec.env}]{default}",
            )(f)
        return f

    return apply if func is None else apply(func)


def repo_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--repo",
        "repo",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path("."),
        show_default=True,
        help="Git repository of the change (its .nova.toml is read at the change's base revision).",
    )(func)


def change_argument(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--staged", is_flag=True, help="Review the staged changes (the index) instead of a commit."
    )(func)
    return click.argument("change", required=False, default=None)(func)


def change_ref(change: str | None, staged: bool) -> str:
    from bot.errors import UsageError

    if staged:
        if change not in (None, ""):
            raise UsageError("give either a CHANGE or --staged, not both")
        return ":staged"
    return change or "HEAD"


def load_from_flags(flags: dict[str, Any], repo: Path | None) -> Settings:
    specs = _specs()
    return load_settings(flags={k: v for k, v in flags.items() if k in specs}, repo=repo)


# A sentence ends at a period before a capital letter or the end, not inside "e.g. x",
# "mcp.json" or "~/.arcrc".
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)\.(?=\s+[A-Z]|\s*$)")


def first_sentence(text: str) -> str:
    m = _SENTENCE_END.search(text)
    return text[: m.end()] if m else text


def env_epilog() -> str:
    rows = "\n".join(
        textwrap.fill(
            first_sentence(s.help) + _limits(s),
            width=88,
            break_on_hyphens=False,
            break_long_words=False,
            initial_indent=f"  {s.env:<26} ",
            subsequent_indent=" " * 29,
        )
        for s in all_settings()
    )
    return "\b\nConfiguration (flags > environment > .nova.toml in the repository):\n" + rows


def _limits(spec: SettingSpec) -> str:
    return f" {spec.range_text()}" if spec.range_text() else ""


def event_bus(quiet: bool, events_file: Path | None) -> EventBus:
    """Progress on stderr (a live line on a terminal, plain lines in CI) and JSON lines."""
    from bot.errors import UsageError
    from bot.events import EventBus, JsonLinesSink, PlainSink, TerminalSink

    bus = EventBus()
    if not quiet:
        bus.add(TerminalSink() if sys.stderr.isatty() else PlainSink())
    if events_file is not None:
        try:
            bus.add(JsonLinesSink(str(events_file)))
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise UsageError(f"cannot write --events-file {events_file}: {reason}") from exc
    return bus
