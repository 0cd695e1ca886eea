"""GitHub pull requests: ``owner/repo#12`` or a pull request URL (GitHub Enterprise through
``GITHUB_API_URL``), or the pull request of a GitHub Actions ``pull_request`` event."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bot.hosts.base import Check, HostSession
from bot.hosts.github.client import is_pr_ref, pr_from_event
from bot.hosts.github.settings import GitHubSettings
from bot.sections import Section

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.testgen.report import TestgenResult
    from bot.testgen.workspace import Workspace

__all__ = ["HOST", "GitHubHost"]


class GitHubHost:
    name = "github"
    title = "GitHub"
    noun = "pull request"
    references = "owner/repo#12 or a pull request URL"
    section: type[Section] | None = GitHubSettings  # its settings (bot.sections)
    publishes = True

    def matches(self, spec: str) -> bool:
        return is_pr_ref(spec)

    def ref_from_ci(self, settings: Settings) -> str | None:
        return pr_from_event(settings.section(GitHubSettings))

    def open(
        self, settings: Settings, repo: Path | None, *, stdin: IO[str] | None = None
    ) -> HostSession:
        from bot.hosts.github.session import GitHubSession

        return GitHubSession(settings, repo)

    def checks(self, settings: Settings) -> Sequence[Check]:
        from bot.hosts.github.doctor import check

        return [check(settings.section(GitHubSettings))]

    def propose(self, settings: Settings, result: TestgenResult, ws: Workspace, branch: str) -> str:
        from bot.hosts.github.propose import open_pull

        return open_pull(settings.section(GitHubSettings), result, ws, branch)


HOST = GitHubHost()
