"""``nova doctor``'s GitLab check: the API answers and accepts the token (``GET /user``)."""

from __future__ import annotations

import httpx

from bot.doctor import describe_failure, http_get
from bot.hosts.base import Check
from bot.hosts.gitlab.client import server_url
from bot.hosts.gitlab.settings import GitLabSettings

__all__ = ["check"]


def check(s: GitLabSettings) -> Check:
    api = f"{server_url(s)}/api/v4"
    if not s.token:
        if s.job_token:
            return Check(
                "gitlab",
                api,
                None,
                "only CI_JOB_TOKEN: reviews go to the job log and "
                "the Code Quality report; set GITLAB_TOKEN (api "
                "scope) to post threads",
            )
        return Check("gitlab", api, None, "not configured (GITLAB_TOKEN, GITLAB_URL)")
    try:
        response = http_get(f"{api}/user", {"PRIVATE-TOKEN": s.token})
    except httpx.HTTPError as exc:
        return Check("gitlab", api, False, describe_failure(exc))
    if response.status_code == 401:
        return Check("gitlab", api, False, "reachable, but the token was refused (HTTP 401)")
    if response.status_code >= 400:
        return Check("gitlab", api, False, f"answered HTTP {response.status_code}")
    try:
        user = response.json().get("username", "?")
    except (ValueError, AttributeError):
        return Check("gitlab", api, False, "answered, but not with GitLab's JSON")
    return Check("gitlab", api, True, f"reachable, token accepted (user {user})")
