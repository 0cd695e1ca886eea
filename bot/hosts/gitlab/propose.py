"""testgen's ``--publish gitlab``: push the branch and open a merge request."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.errors import ConfigError, ServiceError
from bot.hosts.gitlab.client import credentials, gitlab_client, gitlab_error, server_url
from bot.hosts.gitlab.publisher import BODY_LIMIT, inert
from bot.hosts.gitlab.settings import GitLabSettings
from bot.report.testgen import render_testgen_body
from bot.report.untrusted import cap

if TYPE_CHECKING:
    from bot.testgen.report import TestgenResult
    from bot.testgen.workspace import Workspace

__all__ = ["open_merge_request"]


def open_merge_request(
    settings: GitLabSettings, result: TestgenResult, ws: Workspace, branch: str
) -> str:
    project_ref = settings.project_path or settings.project_id
    if not project_ref:
        raise ConfigError("--publish gitlab needs the project (CI_PROJECT_PATH=group/project)")
    if credentials(settings).job_only:
        raise ConfigError(
            "--publish gitlab needs GITLAB_TOKEN (api scope): CI_JOB_TOKEN "
            "cannot open merge requests"
        )
    from gitlab.exceptions import GitlabError
    from requests import RequestException

    if not ws.user.origin:
        raise ServiceError(f"pushing {branch} failed: the repository has no origin remote")
    # from Nova's own store, GITLAB_TOKEN in the push's environment: no token is written
    # into .git/config (where a generated test could read it)
    ws.push(ws.user.origin, branch, ("oauth2", credentials(settings).token))
    what = f"opening a merge request on {project_ref}"
    try:
        project = gitlab_client(settings, server_url(settings)).projects.get(project_ref)
        mr = project.mergerequests.create(
            {
                "source_branch": branch,
                "target_branch": project.default_branch,
                "title": inert(f"Tests for {result.change.title}")[:250],
                "description": cap(inert(render_testgen_body(result)), BODY_LIMIT, where="GitLab"),
                "remove_source_branch": True,
            }
        )
    except (GitlabError, RequestException) as exc:
        raise gitlab_error(exc, what) from exc
    return str(mr.web_url)
