"""Who Nova writes as on GitHub: only comments by this login count as Nova's.

Asked of the API first, for every token kind:

- ``GET /user`` names the user of a classic or fine-grained personal access token (and of
  an OAuth token), on github.com and GitHub Enterprise alike;
- an installation token — the Actions ``GITHUB_TOKEN`` or a GitHub App's (from
  ``actions/create-github-app-token``, or an App used from Jenkins) — gets 403 there, but
  GraphQL's ``viewer`` names its bot: ``github-actions[bot]``, ``<app-slug>[bot]``. (The
  App's slug is also in ``GET /app``, which needs the App's JWT, not the token Nova has.)

Where the API tells nothing (a GitHub Enterprise without GraphQL, a proxy that blocks it),
the configured ``NOVA_GITHUB_LOGIN`` (the Action's ``github-login`` input) says it. Nothing
else is trusted — least of all a marker in a comment, which anyone can write. When nothing
tells, Nova says so in one line and posts nothing (``ConfigError``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.errors import ConfigError

if TYPE_CHECKING:
    from github import Github

__all__ = ["VIEWER_QUERY", "resolve_login", "token_login"]

VIEWER_QUERY = "query { viewer { login } }"
_UNTOLD = (400, 401, 403, 404, 422)  # the API will not say for this token


def token_login(client: Github) -> str | None:
    """The login the token writes as, by the API's own word; None when it will not say."""
    from github import GithubException
    from requests import RequestException

    from bot.hosts.github.client import github_error

    try:
        return str(client.get_user().login)
    except GithubException as exc:
        if exc.status not in _UNTOLD:
            raise github_error(exc, "reading the token's user (GET /user)") from exc
    except RequestException as exc:
        raise github_error(exc, "reading the token's user (GET /user)") from exc
    try:
        _headers, data = client.requester.graphql_query(VIEWER_QUERY, {})
    except GithubException as exc:
        if exc.status not in _UNTOLD:
            raise github_error(exc, "reading the token's login (GraphQL viewer)") from exc
        return None
    except RequestException as exc:
        raise github_error(exc, "reading the token's login (GraphQL viewer)") from exc
    viewer = (data.get("data") or {}).get("viewer") if isinstance(data, dict) else None
    login = viewer.get("login") if isinstance(viewer, dict) else None
    return login if isinstance(login, str) and login else None


def resolve_login(client: Github, configured: str | None) -> tuple[str, list[str]]:
    """(Nova's login, notes): the token's word, else the configured login, else a
    ``ConfigError`` (one line). A configured login the token contradicts is noted, and the
    token's word is kept: it is who really writes."""
    told = token_login(client)
    configured = (configured or "").strip() or None
    if told is not None:
        if configured is not None and configured.lower() != told.lower():
            return told, [
                f"NOVA_GITHUB_LOGIN is {configured!r} but the token writes as {told!r}: "
                f"only {told}'s comments count as Nova's"
            ]
        return told, []
    if configured is not None:
        return configured, []
    kind = "a GitHub App's installation token" if _installation(client) else "this token"
    raise ConfigError(
        f"GitHub does not say which login {kind} writes as (GET /user and GraphQL's "
        "viewer refused), so Nova cannot tell its own comments: set NOVA_GITHUB_LOGIN "
        "(the Action's github-login input), e.g. my-app[bot]; nothing was posted"
    )


def _installation(client: Github) -> bool:
    """Whether the token is an installation's: only one may list the installation's
    repositories. (Its App's slug is in ``GET /app``, which needs the App's JWT.)"""
    from github import GithubException
    from requests import RequestException

    try:
        client.requester.requestJsonAndCheck("GET", "/installation/repositories")
    except (GithubException, RequestException):
        return False
    return True
