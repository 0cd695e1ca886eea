"""Phabricator / Phorge Differential revisions: ``D123`` (latest diff) or ``D123:4567``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bot.hosts.base import Check, HostSession
from bot.hosts.phabricator.conduit import is_revision_ref
from bot.hosts.phabricator.settings import PhabricatorSettings
from bot.sections import Section

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.testgen.report import TestgenResult
    from bot.testgen.workspace import Workspace

__all__ = ["HOST", "PhabricatorHost"]


class PhabricatorHost:
    name = "phabricator"
    title = "Phabricator"
    noun = "revision"
    references = "D123 (the latest diff) or D123:4567 (a given diff)"
    section: type[Section] | None = PhabricatorSettings  # its settings (bot.sections)
    publishes = True

    def matches(self, spec: str) -> bool:
        return is_revision_ref(spec)

    def ref_from_ci(self, settings: Settings) -> str | None:
        return None  # Harbormaster passes D123 on the command line

    def open(
        self, settings: Settings, repo: Path | None, *, stdin: IO[str] | None = None
    ) -> HostSession:
        from bot.hosts.phabricator.session import PhabricatorSession

        return PhabricatorSession(settings, repo)

    def checks(self, settings: Settings) -> Sequence[Check]:
        from bot.hosts.phabricator.doctor import check

        return [check(settings.section(PhabricatorSettings))]

    def propose(self, settings: Settings, result: TestgenResult, ws: Workspace, branch: str) -> str:
        from bot.hosts.phabricator.propose import open_revision

        return open_revision(settings.section(PhabricatorSettings), result, ws.head_diff())


HOST = PhabricatorHost()
