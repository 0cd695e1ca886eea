"""One pull request on GitHub as a ``HostSession``: the shared state (``PullState``, in
``client.py``) with its source, publisher and conversation wired to it. Only the host's
``open`` imports this module; the parts import the state, never the session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.hosts.github.client import PullState
from bot.hosts.github.source import GitHubSource

if TYPE_CHECKING:  # imported when asked for: a review that only prints needs neither
    from bot.hosts.github.conversation import GitHubConversation
    from bot.hosts.github.publisher import GitHubPublisher

__all__ = ["GitHubSession"]


@dataclass
class GitHubSession(PullState):
    source: GitHubSource = field(init=False)

    def __post_init__(self) -> None:
        self.source = GitHubSource(self)

    def publisher(self, *, force: bool) -> GitHubPublisher:
        from bot.hosts.github.publisher import GitHubPublisher

        return GitHubPublisher(self, force=force, annotations=self.annotations)

    def conversation(self) -> GitHubConversation:
        """The pull request's threads and comments (``bot.conversation``)."""
        from bot.hosts.github.conversation import GitHubConversation

        return GitHubConversation(self)
