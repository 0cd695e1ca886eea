"""Phabricator's settings. ``PHABRICATOR_URL`` / ``PHABRICATOR_API_TOKEN`` fall back to
``~/.arcrc`` the way arc reads it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Self

from bot.sections import Section, setting

__all__ = ["PhabricatorSettings"]


@dataclass(frozen=True)
class PhabricatorSettings(Section):
    prefix = "phabricator_"
    env_prefixes = ("PHABRICATOR_",)

    url: str | None = setting(
        "PHABRICATOR_URL",
        "Phabricator / Phorge base URL (…/api/ is added); else the host in ~/.arcrc.",
    )
    token: str | None = setting(
        "PHABRICATOR_API_TOKEN",
        "Conduit API token (api-…); else the host's token in ~/.arcrc.",
        secret=True,
    )
    harbormaster_target: str | None = setting(
        "NOVA_HARBORMASTER_TARGET",
        "Harbormaster build target PHID (PHID-HMBT-…): Nova reports work/pass/fail "
        "and its findings as lint messages to it.",
        key="harbormaster_target",
    )
    dismiss_project: str | None = setting(
        "NOVA_PHABRICATOR_DISMISS_PROJECT",
        "PHID of a project (PHID-PROJ-…) whose members may dismiss findings with "
        "`@nova dismiss`, besides the reviewers who were reviewers before Nova's comment "
        "and have not resigned (never the revision's author).",
    )
    timeout: float = setting(
        "NOVA_PHABRICATOR_TIMEOUT",
        "Seconds per Conduit call.",
        30.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )

    def resolved(self, env: Mapping[str, str]) -> Self:
        """Fill the URL and token from ~/.arcrc the way arc does, when not set."""
        if self.url and self.token:
            return self
        home = env.get("HOME")
        path = Path(home) / ".arcrc" if home else None
        if path is None or not path.is_file():
            return self
        try:
            hosts = json.loads(path.read_text(encoding="utf-8")).get("hosts") or {}
        except (OSError, ValueError, AttributeError):
            return self
        wanted = (self.url or "").rstrip("/").removesuffix("/api")
        for host, entry in hosts.items():
            if not isinstance(entry, dict):
                continue
            base = host.rstrip("/").removesuffix("/api")
            if wanted and base != wanted:
                continue
            if not wanted and len(hosts) > 1:
                break  # several hosts and no PHABRICATOR_URL: ambiguous, use none
            return replace(self, url=self.url or host, token=self.token or entry.get("token"))
        return self
