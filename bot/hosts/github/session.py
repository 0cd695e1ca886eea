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

__all__ = ["ACTIONS_BOT", "GitHubSession"]

ACTIONS_BOT = "github-actions[bot]"  # who the Actions GITHUB_TOKEN writes as


@dataclass
class GitHubSession:
    settings: Settings
    repo_path: Path | None = None
    annotations: IO[str] | None = None  # where the read-only fallback prints (stdout)
    client: Github | None = None
    repo: Repository | None = None  # of the pull request
    pull: PullRequest | None = None  # set by fetch
    _login: str | None = field(default=None, repr=False)
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
        """Nova's own login: the token's user, or the Actions bot for an installation token
        (GET /user answers 403 for it). Only comments by this login are Nova's."""
        if self._login is None:
            from github import GithubException

            assert self.client is not None, "open the client first"
            try:
                self._login = str(self.client.get_user().login)
            except GithubException as exc:
                if exc.status not in (401, 403, 404):
                    from bot.hosts.github.client import github_error

                    raise github_error(exc, "reading the token's user") from exc
                self._login = ACTIONS_BOT
        return self._login

    def is_mine(self, comment: Any) -> bool:
        user = getattr(comment, "user", None)
        return user is not None and user.login == self.login()
