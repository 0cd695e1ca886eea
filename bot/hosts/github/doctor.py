"""``nova doctor``'s GitHub check: the API answers and accepts the token."""

from __future__ import annotations

import httpx

from bot.doctor import describe_failure, http_get
from bot.hosts.base import Check
from bot.hosts.github.settings import GitHubSettings

__all__ = ["check"]


def check(s: GitHubSettings) -> Check:
    api = s.api_url.rstrip("/")
    if not s.token:
        return Check("github", api, None, "not configured (GITHUB_TOKEN)")
    try:
        response = http_get(
            f"{api}/rate_limit",
            {"Authorization": f"Bearer {s.token}", "Accept": "application/vnd.github+json"},
        )
    except httpx.HTTPError as exc:
        return Check("github", api, False, describe_failure(exc))
    if response.status_code == 401:
        return Check("github", api, False, "reachable, but the token was refused (HTTP 401)")
    if response.status_code >= 400:
        return Check("github", api, False, f"answered HTTP {response.status_code}")
    left = (response.json().get("resources", {}).get("core", {}) or {}).get("remaining", "?")
    return Check("github", api, True, f"reachable, token accepted ({left} requests left)")
