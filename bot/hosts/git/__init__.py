"""Local git: ``HEAD``, a SHA, ``A..B``, ``A...B``, ``:staged``, ``-`` (a diff on stdin).
It takes every reference no other host claims, and publishes nowhere."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bot.config import Settings
from bot.hosts.base import Check, HostSession
from bot.sections import Section

if TYPE_CHECKING:
    from bot.hosts.git.source import GitSource

__all__ = ["HOST", "GitHost", "GitSession"]


@dataclass
class GitSession:
    settings: Settings
    repo: Path
    stdin: IO[str] | None = None
    source: GitSource = field(init=False)

    def __post_init__(self) -> None:
        from bot.hosts.git.source import GitSource

        self.source = GitSource(self.repo, stdin=self.stdin)

    def publisher(self, *, force: bool) -> None:
        return None


class GitHost:
    name = "git"
    title = "git"
    noun = "commit"
    references = "HEAD, a SHA, A..B, A...B, - (a unified diff on stdin)"
    section: type[Section] | None = None  # no settings of its own
    publishes = False

    def matches(self, spec: str) -> bool:
        return True

    def ref_from_ci(self, settings: Settings) -> str | None:
        return None

    def open(
        self, settings: Settings, repo: Path | None, *, stdin: IO[str] | None = None
    ) -> HostSession:
        return GitSession(settings, repo or Path("."), stdin)

    def checks(self, settings: Settings) -> Sequence[Check]:
        return ()


HOST = GitHost()
