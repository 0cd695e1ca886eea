"""GitLab merge requests: ``group/sub/project!12`` or a merge request URL (a self-managed
server from the URL, or GITLAB_URL / CI_SERVER_URL), or the merge request of a GitLab CI
merge request pipeline (``CI_MERGE_REQUEST_IID``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bot.hosts.base import Check, HostSession
from bot.hosts.gitlab.client import is_mr_ref, mr_from_ci
from bot.hosts.gitlab.settings import GitLabSettings
from bot.sections import Section

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.testgen.report import TestgenResult
    from bot.testgen.workspace import Workspace

__all__ = ["HOST", "GitLabHost"]


class GitLabHost:
    name = "gitlab"
    title = "GitLab"
    noun = "merge request"
    references = "group/project!12 or a merge request URL"
    section: type[Section] | None = GitLabSettings  # its settings (bot.sections)
    publishes = True

    def matches(self, spec: str) -> bool:
        return is_mr_ref(spec)

    def ref_from_ci(self, settings: Settings) -> str | None:
        return mr_from_ci(settings.section(GitLabSettings))

    def open(
        self, settings: Settings, repo: Path | None, *, stdin: IO[str] | None = None
    ) -> HostSession:
        from bot.hosts.gitlab.session import GitLabSession

        return GitLabSession(settings, repo)

    def checks(self, settings: Settings) -> Sequence[Check]:
        from bot.hosts.gitlab.doctor import check

        return [check(settings.section(GitLabSettings))]

    def propose(self, settings: Settings, result: TestgenResult, ws: Workspace, branch: str) -> str:
        from bot.hosts.gitlab.propose import open_merge_request

        return open_merge_request(settings.section(GitLabSettings), result, ws, branch)


HOST = GitLabHost()
