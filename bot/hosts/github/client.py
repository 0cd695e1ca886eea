"""GitHub's reference grammar, its client (PyGithub) and its errors, wrapped once here; and
``PullState``, what the source, publisher and conversation of one pull request share."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bot.errors import (
    ConfigError,
    HostChangeNotFound,
    ServiceError,
    UsageError,
    redact,
)
from bot.hosts.github.settings import GitHubSettings
from bot.hosts.timeouts import MAX_WAIT, requested_wait, too_long_to_wait

if TYPE_CHECKING:
    from github import Github
    from github.PullRequest import PullRequest
    from github.Repository import Repository

    from bot.config import Settings

__all__ = [
    "PUBLIC_API",
    "PullState",
    "github_client",
    "github_error",
    "is_pr_ref",
    "parse_pr_ref",
    "pr_from_event",
]

_REF = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)#(?P<num>\d+)$")
_URL = re.compile(
    r"^(?P<scheme>https?)://(?P<host>[^/]+)/(?P<repo>[\w.-]+/[\w.-]+)/pull/"
    r"(?P<num>\d+)"
)
PUBLIC_API = "https://api.github.com"


def is_pr_ref(spec: str) -> bool:
    return bool(_REF.match(spec) or _URL.match(spec))


def parse_pr_ref(spec: str, api_url: str = PUBLIC_API) -> tuple[str, int, str]:
    """(owner/repo, number, API base URL) of ``owner/repo#12`` or a pull request URL.
    A URL on another host than github.com means GitHub Enterprise at https://HOST/api/v3
    unless ``api_url`` already names a non-default API."""
    m = _REF.match(spec)
    if m:
        return m.group("repo"), int(m.group("num")), api_url
    m = _URL.match(spec)
    if m:
        host = m.group("host")
        if host not in ("github.com", "www.github.com") and api_url == PUBLIC_API:
            api_url = f"{m.group('scheme')}://{host}/api/v3"
        return m.group("repo"), int(m.group("num")), api_url
    raise UsageError(f"{spec!r} is not a pull request reference (owner/repo#12 or a PR URL)")


def pr_from_event(settings: GitHubSettings) -> str | None:
    """``owner/repo#N`` of the pull request in the GitHub Actions event, if any."""
    if not settings.event_path:
        return None
    try:
        event = json.loads(Path(settings.event_path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"GITHUB_EVENT_PATH {settings.event_path}: {exc}") from exc
    pr = event.get("pull_request") or {}
    number = pr.get("number") or event.get("number")
    repo = ((pr.get("base") or {}).get("repo") or {}).get("full_name") or settings.repository
    if number and repo:
        return f"{repo}#{number}"
    return None


def github_client(settings: GitHubSettings, api_url: str | None = None) -> Github:
    """PyGithub with GitHub's retry rules: 403/429 with ``retry-after`` or a rate-limit
    message and ``x-ratelimit-reset`` are waited out (at most 120 s). A write is retried
    only when GitHub did not take it (a refused connection, 429, a rate-limit 403): a POST
    that timed out or got a 5xx may have been stored, so the caller re-reads instead."""
    if not settings.token:
        raise ConfigError(
            "GITHUB_TOKEN is not set",
            hint="in Actions pass secrets.GITHUB_TOKEN; by hand use a token "
            "with pull-requests: write",
        )
    from github import Auth, Github

    retry = _write_safe_retry()(
        total=3,
        read=0,
        backoff_factor=0.5,
        status_forcelist=[429, 502, 503, 504],
        secondary_rate_wait=5,
        max_rate_limit_wait=MAX_WAIT,
    )
    # PyGithub spaces every request by 0.25 s by default; only writes need spacing.
    return Github(
        auth=Auth.Token(settings.token),
        base_url=(api_url or settings.api_url).rstrip("/"),
        timeout=max(1, round(settings.timeout)),
        retry=retry,
        per_page=100,
        seconds_between_requests=0,
        seconds_between_writes=settings.write_interval,
    )


@lru_cache(maxsize=1)
def _write_safe_retry() -> type:
    """GithubRetry that never repeats a write GitHub may have stored (a 5xx on POST)."""
    from github import GithubRetry
    from github.GithubException import RateLimitExceededExceedsMaxWait

    class WriteSafeRetry(GithubRetry):
        def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
            if method in ("POST", "PATCH", "PUT", "DELETE") and status_code >= 500:
                return False
            return bool(super().is_retry(method, status_code, has_retry_after))

        def get_retry_after(self, response: Any) -> float | None:
            """urllib3 sleeps out any ``Retry-After``: more than ``MAX_WAIT`` fails now, as
            a 429 (GitHub answers a secondary rate limit 403 or 429; a 403 would be taken
            for a token that may not write)."""
            wait = requested_wait({"Retry-After": response.headers.get("Retry-After", "")})
            if response.headers.get("Retry-After") is None or wait is None:
                return None
            if wait > MAX_WAIT:
                raise RateLimitExceededExceedsMaxWait(
                    429, too_long_to_wait(wait), dict(response.headers), wait=wait
                )
            return wait

    return WriteSafeRetry


def github_error(exc: BaseException, what: str) -> Exception:
    """Wrap a PyGithub / requests exception once, at the edge."""
    from github import BadCredentialsException, GithubException, UnknownObjectException
    from requests import RequestException

    if isinstance(exc, UnknownObjectException):
        return HostChangeNotFound(f"{what}: not found (or the token cannot see it)")
    if isinstance(exc, BadCredentialsException):
        return ConfigError(
            f"{what}: GitHub refused the token (HTTP 401)", hint="check GITHUB_TOKEN"
        )
    if isinstance(exc, GithubException):
        data = exc.data if isinstance(exc.data, dict) else {}
        detail = data.get("message") or str(exc.data)
        errors = data.get("errors")
        if errors:
            detail += f": {errors[0] if isinstance(errors[0], str) else json.dumps(errors[0])}"
        return ServiceError(redact(f"{what}: GitHub answered HTTP {exc.status}: {detail}"))
    if isinstance(exc, RequestException):
        return ServiceError(redact(f"{what}: GitHub API unreachable ({type(exc).__name__})"))
    return ServiceError(redact(f"{what}: {exc}"))


@dataclass
class PullState:
    """One pull request on GitHub: the client and the fetched objects its source, publisher
    and conversation share, and Nova's own identity there. Plain data: the parts import
    this, and only the session (``session.py``, which wires them) imports the parts."""

    settings: Settings
    repo_path: Path | None = None
    annotations: IO[str] | None = None  # where the read-only fallback prints (stdout)
    client: Github | None = None
    repo: Repository | None = None  # of the pull request
    pull: PullRequest | None = None  # set by fetch
    _login: str | None = field(default=None, repr=False)
    identity_notes: list[str] = field(default_factory=list)  # what the publisher tells

    @property
    def github(self) -> GitHubSettings:
        return self.settings.section(GitHubSettings)

    def login(self) -> str:
        """Nova's own login, asked of the API for every token kind, else configured
        (``bot.hosts.github.identity``); a ``ConfigError`` when nothing tells. Only
        comments by this login are Nova's."""
        if self._login is None:
            from bot.hosts.github.identity import resolve_login

            assert self.client is not None, "open the client first"
            self._login, self.identity_notes = resolve_login(self.client, self.github.login)
        return self._login

    def is_mine(self, comment: Any) -> bool:
        user = getattr(comment, "user", None)
        login = getattr(user, "login", None)
        return isinstance(login, str) and login.lower() == self.login().lower()
