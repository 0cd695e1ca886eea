"""``nova doctor``'s Phabricator check: Conduit answers ``user.whoami`` with the token."""

from __future__ import annotations

from bot.config import Settings
from bot.doctor import TIMEOUT
from bot.errors import NovaError
from bot.hosts.base import Check

__all__ = ["check"]


def check(s: Settings) -> Check:
    if not s.phabricator_url or not s.phabricator_token:
        return Check(
            "phabricator",
            s.phabricator_url or "PHABRICATOR_URL",
            None,
            "not configured (PHABRICATOR_URL + PHABRICATOR_API_TOKEN, or ~/.arcrc)",
        )
    from bot.hosts.phabricator.conduit import ConduitClient, api_url

    target = api_url(s.phabricator_url)
    try:
        who = ConduitClient(s.with_(phabricator_timeout=TIMEOUT)).call("user.whoami")
    except NovaError as exc:
        return Check("phabricator", target, False, str(exc))
    return Check(
        "phabricator", target, True, f"reachable, token accepted (user {who.get('userName', '?')})"
    )
