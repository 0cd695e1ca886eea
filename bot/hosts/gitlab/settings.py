"""GitLab's settings. The ``CI_*`` variables keep the names GitLab CI sets, and their keys."""

from __future__ import annotations

from dataclasses import dataclass

from bot.sections import Section, setting

__all__ = ["GitLabSettings"]


@dataclass(frozen=True)
class GitLabSettings(Section):
    prefix = "gitlab_"
    env_prefixes = ("GITLAB_", "CI_")

    token: str | None = setting(
        "GITLAB_TOKEN",
        "GitLab personal, project or group access token (api scope): reads the merge "
        "request and posts Nova's threads and summary note.",
        secret=True,
    )
    url: str | None = setting(
        "GITLAB_URL",
        "Base URL of the GitLab server; else CI_SERVER_URL, then the host of a merge "
        "request URL, then the public GitLab. Example: https://gitlab.example.com.",
    )
    code_quality: str | None = setting(
        "NOVA_GITLAB_CODE_QUALITY",
        "Path of a GitLab Code Quality report to write every finding to, shown in the "
        "merge request widget; with only CI_JOB_TOKEN one is written anyway. Default "
        "then: gl-code-quality-report.json.",
    )
    timeout: float = setting(
        "NOVA_GITLAB_TIMEOUT",
        "Seconds per GitLab request; a write that times out is read back, never posted twice.",
        30.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    dismiss_level: int = setting(
        "NOVA_GITLAB_DISMISS_LEVEL",
        "The least access level a member needs to dismiss a finding with `@nova dismiss` "
        "(30 Developer, 40 Maintainer, 50 Owner).",
        30,
        parse=int,
        min=10,
    )
    job_token: str | None = setting(
        "CI_JOB_TOKEN",
        "Set by GitLab CI: the job's token, used read-only when GITLAB_TOKEN is not "
        "set (findings then go to the job log and the Code Quality report).",
        secret=True,
        key="ci_job_token",
    )
    server_url: str | None = setting(
        "CI_SERVER_URL", "Set by GitLab CI: the server's base URL.", key="ci_server_url"
    )
    api_v4_url: str | None = setting(
        "CI_API_V4_URL", "Set by GitLab CI: the server's API URL (…/api/v4).", key="ci_api_v4_url"
    )
    merge_request_iid: str | None = setting(
        "CI_MERGE_REQUEST_IID",
        "Set by GitLab CI in merge request pipelines: the merge request reviewed when "
        "no CHANGE is given.",
        key="ci_merge_request_iid",
    )
    merge_request_project_path: str | None = setting(
        "CI_MERGE_REQUEST_PROJECT_PATH",
        "Set by GitLab CI in merge request pipelines: group/project of the merge "
        "request (the target project, also for a fork's merge request).",
        key="ci_merge_request_project_path",
    )
    merge_request_diff_base_sha: str | None = setting(
        "CI_MERGE_REQUEST_DIFF_BASE_SHA",
        "Set by GitLab CI in merge request pipelines: the base of the merge request's "
        "diff; with CI_COMMIT_SHA it lets Nova diff the checkout when CI_JOB_TOKEN "
        "cannot read the merge request.",
        key="ci_merge_request_diff_base_sha",
    )
    commit_sha: str | None = setting(
        "CI_COMMIT_SHA", "Set by GitLab CI: the commit the job runs on.", key="ci_commit_sha"
    )
    project_id: str | None = setting(
        "CI_PROJECT_ID", "Set by GitLab CI: the project's id.", key="ci_project_id"
    )
    project_path: str | None = setting(
        "CI_PROJECT_PATH",
        "Set by GitLab CI: group/project of the pipeline; `nova testgen --publish "
        "gitlab` opens its merge request there.",
        key="ci_project_path",
    )
