"""One Differential revision: the Conduit client and the fetched revision and diff that the
source and the publisher share."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bot.config import Settings
from bot.hosts.phabricator.conduit import ConduitClient
from bot.hosts.phabricator.settings import PhabricatorSettings
from bot.hosts.phabricator.source import PhabricatorSource

if TYPE_CHECKING:  # the publisher imports this module
    from bot.hosts.phabricator.conversation import PhabricatorConversation
    from bot.hosts.phabricator.publisher import PhabricatorPublisher

__all__ = ["PhabricatorSession"]


@dataclass
class PhabricatorSession:
    settings: Settings
    repo_path: Path | None = None
    revision: dict[str, Any] = field(default_factory=dict)  # differential.revision.search row
    diff_id: int | None = None  # the diff under review, set by fetch
    changesets: dict[str, int] = field(default_factory=dict)  # new path -> changeset ID
    log: IO[str] | None = None  # the job log: where findings go when Nova cannot post
    _conduit: ConduitClient | None = field(default=None, repr=False)
    _me: str | None = field(default=None, repr=False)
    source: PhabricatorSource = field(init=False)

    def __post_init__(self) -> None:
        self.source = PhabricatorSource(self)

    @property
    def phabricator(self) -> PhabricatorSettings:
        return self.settings.section(PhabricatorSettings)

    @property
    def conduit(self) -> ConduitClient:
        if self._conduit is None:
            self._conduit = ConduitClient(self.phabricator)
        return self._conduit

    def whoami(self) -> str:
        """Nova's own user PHID: only its comments count."""
        if self._me is None:
            self._me = str(self.conduit.call("user.whoami").get("phid", ""))
        return self._me

    def conversation(self) -> PhabricatorConversation:
        """The revision's inline threads and comments (``bot.conversation``)."""
        from bot.hosts.phabricator.conversation import PhabricatorConversation

        return PhabricatorConversation(self)

    def publisher(self, *, force: bool) -> PhabricatorPublisher:
        from bot.hosts.phabricator.publisher import PhabricatorPublisher

        return PhabricatorPublisher(self, force=force, log=self.log or sys.stderr)
