"""``nova doctor``'s GitHub check: the API answers, accepts the token, and says who the
token writes as (``bot.hosts.github.identity`` has the rules)."""

from __future__ import annotations

from typing import Any

import httpx

from bot.doctor import TIMEOUT, describe_failure, http_get
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
    detail = f"reachable, token accepted ({left} requests left)"
    try:
        who = _who(api, s)
    except httpx.HTTPError as exc:
        return Check("github", api, False, f"{detail}; its login: {describe_failure(exc)}")
    if who is None:
        return Check(
            "github",
            api,
            False,
            f"{detail}, but GitHub does not say which login it writes as: "
            "set NOVA_GITHUB_LOGIN (the Action's github-login)",
        )
    return Check("github", api, True, f"{detail}; writes as {who}")


def _who(api: str, s: GitHubSettings) -> str | None:
    """The token's login and how it is known: GET /user, GraphQL's viewer (installation
    tokens), else NOVA_GITHUB_LOGIN; None when nothing tells."""
    from bot.hosts.github.identity import VIEWER_QUERY

    headers = {"Authorization": f"Bearer {s.token}", "Accept": "application/vnd.github+json"}
    login = _json(http_get(f"{api}/user", headers)).get("login")
    if isinstance(login, str):
        return f"{login} (GET /user)"
    graphql = f"{api.removesuffix('/v3')}/graphql"
    answer = httpx.post(graphql, json={"query": VIEWER_QUERY}, headers=headers, timeout=TIMEOUT)
    viewer = (_json(answer).get("data") or {}).get("viewer") or {}
    if isinstance(viewer, dict) and isinstance(viewer.get("login"), str):
        return f"{viewer['login']} (GraphQL viewer)"
    return f"{s.login} (NOVA_GITHUB_LOGIN)" if s.login else None


def _json(response: httpx.Response) -> dict[str, Any]:
    """The answer's JSON object, or {} for an error or anything else."""
    if response.status_code != 200:
        return {}
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
