"""``nova doctor``'s Phabricator check: Conduit answers ``user.whoami`` with the token."""

from __future__ import annotations

from dataclasses import replace

from bot.doctor import TIMEOUT
from bot.errors import NovaError
from bot.hosts.base import Check
from bot.hosts.phabricator.settings import PhabricatorSettings

__all__ = ["check"]


def check(s: PhabricatorSettings) -> Check:
    if not s.url or not s.token:
        return Check(
            "phabricator",
            s.url or "PHABRICATOR_URL",
            None,
            "not configured (PHABRICATOR_URL + PHABRICATOR_API_TOKEN, or ~/.arcrc)",
        )
    from bot.hosts.phabricator.conduit import ConduitClient, api_url

    target = api_url(s.url)
    try:
        who = ConduitClient(replace(s, timeout=TIMEOUT)).call("user.whoami")
    except NovaError as exc:
        return Check("phabricator", target, False, str(exc))
    return Check(
        "phabricator", target, True, f"reachable, token accepted (user {who.get('userName', '?')})"
    )
