"""One pull request on GitHub: the client and the fetched objects its source and publisher
share, and Nova's own identity there."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bot.config import Settings
from bot.hosts.github.settings import GitHubSettings
from bot.hosts.github.source import GitHubSource

if TYPE_CHECKING:  # the publisher imports this module
    from github import Github
    from github.PullRequest import PullRequest
    from github.Repository import Repository

    from bot.hosts.github.conversation import GitHubConversation
    from bot.hosts.github.publisher import GitHubPublisher

__all__ = ["GitHubSession"]


@dataclass
class GitHubSession:
    settings: Settings
    repo_path: Path | None = None
    annotations: IO[str] | None = None  # where the read-only fallback prints (stdout)
    client: Github | None = None
    repo: Repository | None = None  # of the pull request
    pull: PullRequest | None = None  # set by fetch
    _login: str | None = field(default=None, repr=False)
    identity_notes: list[str] = field(default_factory=list)  # what the publisher tells
    source: GitHubSource = field(init=False)

    def __post_init__(self) -> None:
        self.source = GitHubSource(self)

    @property
    def github(self) -> GitHubSettings:
        return self.settings.section(GitHubSettings)

    def publisher(self, *, force: bool) -> GitHubPublisher:
        from bot.hosts.github.publisher import GitHubPublisher

        return GitHubPublisher(self, force=force, annotations=self.annotations)

    def conversation(self) -> GitHubConversation:
        """The pull request's threads and comments (``bot.conversation``)."""
        from bot.hosts.github.conversation import GitHubConversation

        return GitHubConversation(self)

    def login(self) -> str:
        """Nova's own login, asked of the API for every token kind, else configured
        (``bot.hosts.github.identity``); a ``ConfigError`` when nothing tells. Only
        comments by this login are Nova's."""
        if self._login is None:
            from bot.hosts.github.identity import resolve_login

            assert self.client is not None, "open the client first"
            self._login, self.identity_notes = resolve_login(self.client, self.github.login)
        return self._login

    def is_mine(self, comment: Any) -> bool:
        user = getattr(comment, "user", None)
        login = getattr(user, "login", None)
        return isinstance(login, str) and login.lower() == self.login().lower()
