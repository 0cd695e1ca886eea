"""One merge request on GitLab as a ``HostSession``: the shared state (``MergeState``, in
``client.py``) with its source, publisher and conversation wired to it. Only the host's
``open`` imports this module; the parts import the state, never the session."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.hosts.gitlab.client import MergeState
from bot.hosts.gitlab.source import GitLabSource

if TYPE_CHECKING:  # imported when asked for: a review that only prints needs neither
    from bot.hosts.gitlab.conversation import GitLabConversation
    from bot.hosts.gitlab.publisher import GitLabPublisher

__all__ = ["GitLabSession"]


@dataclass
class GitLabSession(MergeState):
    source: GitLabSource = field(init=False)

    def __post_init__(self) -> None:
        self.source = GitLabSource(self)

    def publisher(self, *, force: bool) -> GitLabPublisher:
        from bot.hosts.gitlab.publisher import GitLabPublisher

        return GitLabPublisher(self, force=force, log=self.log or sys.stderr)

    def conversation(self) -> GitLabConversation:
        """The merge request's discussions and notes (``bot.conversation``)."""
        from bot.hosts.gitlab.conversation import GitLabConversation

        return GitLabConversation(self)
