"""GitHub's settings. Most variables keep the names GitHub Actions sets (``GITHUB_*``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.sections import Section, boolean, setting

__all__ = ["GitHubSettings", "github_login"]

_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")


def github_login(text: str) -> str:
    """A GitHub login (``octocat``, ``my-app[bot]``); empty means none."""
    login = text.strip()
    if login and not _LOGIN.fullmatch(login):
        raise ValueError(f"not a GitHub login: {login!r}")
    return login


@dataclass(frozen=True)
class GitHubSettings(Section):
    prefix = "github_"
    env_prefixes = ("GITHUB_",)

    token: str | None = setting(
        "GITHUB_TOKEN",
        "Token for GitHub pull requests (in Actions: secrets.GITHUB_TOKEN).",
        secret=True,
    )
    api_url: str = setting(
        "GITHUB_API_URL",
        "GitHub API base URL; GitHub Enterprise: https://HOST/api/v3.",
        "https://api.github.com",
    )
    login: str | None = setting(
        "NOVA_GITHUB_LOGIN",
        "The GitHub login Nova writes as, for a token the API does not name (it is asked "
        "first: GET /user, then GraphQL's viewer), e.g. my-app[bot] for a GitHub App.",
        parse=github_login,
    )
    request_changes: bool = setting(
        "NOVA_REQUEST_CHANGES",
        "GitHub: submit REQUEST_CHANGES instead of COMMENT when a finding reaches fail_on.",
        False,
        parse=boolean,
        repo_ok=True,
        key="request_changes",
    )
    write_interval: float = setting(
        "NOVA_GITHUB_WRITE_INTERVAL",
        "Seconds between two GitHub writes (keeps under the secondary rate limits of "
        "~80 content writes a minute).",
        1.0,
        parse=float,
        min=0,
    )
    timeout: float = setting(
        "NOVA_GITHUB_TIMEOUT",
        "Seconds per GitHub request; a write that times out is read back, never posted twice.",
        30.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    actions: bool = setting(
        "GITHUB_ACTIONS",
        "Set by GitHub Actions: no line Nova prints (stdout, stderr) can start a workflow "
        "command (the report is fenced with ::stop-commands::, other lines escaped).",
        False,
        parse=boolean,
    )
    event_path: str | None = setting(
        "GITHUB_EVENT_PATH",
        "Set by GitHub Actions: the event payload, read when no CHANGE is given.",
    )
    repository: str | None = setting(
        "GITHUB_REPOSITORY", "Set by GitHub Actions: owner/repo of the workflow run."
    )
    step_summary: str | None = setting(
        "GITHUB_STEP_SUMMARY",
        "Set by GitHub Actions: the job summary file Nova appends its summary to.",
    )
    output: str | None = setting(
        "GITHUB_OUTPUT", "Set by GitHub Actions: the step outputs file (comments, unplaced, ...)."
    )
