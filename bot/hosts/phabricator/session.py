"""One Differential revision as a ``HostSession``: the shared state (``RevisionState``, in
``conduit.py``) with its source, publisher and conversation wired to it. Only the host's
``open`` imports this module; the parts import the state, never the session."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.hosts.phabricator.conduit import RevisionState
from bot.hosts.phabricator.source import PhabricatorSource

if TYPE_CHECKING:  # imported when asked for: a review that only prints needs neither
    from bot.hosts.phabricator.conversation import PhabricatorConversation
    from bot.hosts.phabricator.publisher import PhabricatorPublisher

__all__ = ["PhabricatorSession"]


@dataclass
class PhabricatorSession(RevisionState):
    source: PhabricatorSource = field(init=False)

    def __post_init__(self) -> None:
        self.source = PhabricatorSource(self)

    def conversation(self) -> PhabricatorConversation:
        """The revision's inline threads and comments (``bot.conversation``)."""
        from bot.hosts.phabricator.conversation import PhabricatorConversation

        return PhabricatorConversation(self)

    def publisher(self, *, force: bool) -> PhabricatorPublisher:
        from bot.hosts.phabricator.publisher import PhabricatorPublisher

        return PhabricatorPublisher(self, force=force, log=self.log or sys.stderr)
