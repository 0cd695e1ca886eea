"""The registry of code hosts: a reference (or the CI environment) finds its host.

| reference                                                            | host        |
|----------------------------------------------------------------------|-------------|
| ``owner/repo#12``, a pull request URL, an Actions ``pull_request``   | github      |
| ``D123``, ``D123:4567``                                              | phabricator |
| ``group/project!12``, a merge request URL, a GitLab CI MR pipeline   | gitlab      |
| ``HEAD`` (default), a SHA, ``A..B``, ``A...B``, ``:staged``, ``-``   | git         |

Adding a host is one package under ``bot/hosts/`` with a ``HOST`` (see ``base.Host``) and one
entry in ``_HOST_MODULES``; the CLI's ``--publish`` / ``--publish`` choices, ``nova doctor``
and the docs' table come from here. Host packages import their clients lazily, so reading the
registry stays cheap (``nova --help``).
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path
from typing import IO

from bot.config import Settings
from bot.errors import UsageError
from bot.hosts.base import Host, HostSession, Proposer, Source, TreeReader

__all__ = [
    "Host",
    "HostSession",
    "Source",
    "TreeReader",
    "classify",
    "host_for",
    "host_named",
    "hosts",
    "open_session",
    "proposer_named",
    "publish_choices",
    "proposal_choices",
    "ref_from_ci",
    "resolve",
]

# Order matters: the first host whose grammar matches a reference takes it; git takes the rest.
_HOST_MODULES = ("bot.hosts.github", "bot.hosts.phabricator", "bot.hosts.gitlab", "bot.hosts.git")


@cache
def hosts() -> tuple[Host, ...]:
    return tuple(importlib.import_module(m).HOST for m in _HOST_MODULES)


def host_for(spec: str) -> Host:
    return next(h for h in hosts() if h.matches(spec))


def host_named(name: str) -> Host:
    for host in hosts():
        if host.name == name:
            return host
    raise UsageError(f"unknown host {name!r}; known: {', '.join(h.name for h in hosts())}")


def classify(spec: str) -> str:
    """The name of the host a change reference belongs to."""
    return host_for(spec).name


def publish_choices() -> list[str]:
    return ["local", *(h.name for h in hosts() if h.publishes)]


def proposal_choices() -> list[str]:
    return ["local", *(h.name for h in hosts() if isinstance(h, Proposer))]


def proposer_named(name: str) -> Proposer:
    host = host_named(name)
    if not isinstance(host, Proposer):
        raise UsageError(f"{host.title} cannot open a pull request for tests")
    return host


def ref_from_ci(settings: Settings) -> str | None:
    """The change of the CI job this runs in (a pull request / merge request event)."""
    for host in hosts():
        ref = host.ref_from_ci(settings)
        if ref:
            return ref
    return None


def open_session(
    spec: str, *, repo: Path, settings: Settings | None = None, stdin: IO[str] | None = None
) -> HostSession:
    return host_for(spec).open(settings or Settings(), repo, stdin=stdin)


def resolve(
    spec: str, *, repo: Path, settings: Settings | None = None, stdin: IO[str] | None = None
) -> Source:
    """The source of a change reference (``nova diff``, the MCP server, testgen)."""
    return open_session(spec, repo=repo, settings=settings, stdin=stdin).source
