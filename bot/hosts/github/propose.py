"""testgen's ``--publish github``: push the branch and open a pull request."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.errors import ConfigError, ServiceError
from bot.hosts.github.client import github_client, github_error
from bot.hosts.github.settings import GitHubSettings
from bot.report.testgen import render_testgen_body
from bot.report.untrusted import clean_text

if TYPE_CHECKING:
    from bot.testgen.report import TestgenResult
    from bot.testgen.workspace import Workspace

__all__ = ["open_pull"]


def open_pull(settings: GitHubSettings, result: TestgenResult, ws: Workspace, branch: str) -> str:
    if not settings.repository:
        raise ConfigError("--publish github needs the repository (GITHUB_REPOSITORY=owner/repo)")
    from github import GithubException

    if not ws.user.origin:
        raise ServiceError(f"pushing {branch} failed: the repository has no origin remote")
    # from Nova's own store, the token in the push's environment (never in a file)
    ws.push(ws.user.origin, branch, ("x-access-token", settings.token) if settings.token else None)
    try:
        repo = github_client(settings).get_repo(settings.repository)
        pull = repo.create_pull(
            title=clean_text(f"Tests for {result.change.title}")[:250],
            body=clean_text(render_testgen_body(result)),
            head=branch,
            base=repo.default_branch,
        )
    except GithubException as exc:
        raise github_error(exc, f"opening a pull request on {settings.repository}") from exc
    return str(pull.html_url)
