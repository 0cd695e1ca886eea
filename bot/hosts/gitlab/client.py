"""GitLab's reference grammar, its server and credentials, its client (python-gitlab) and its
errors, wrapped once here.

Retries: python-gitlab waits out a 429 (``Retry-After``, else ``RateLimit-Reset``) for every
verb — GitLab did not take the request, so repeating it is safe. It reads ``Retry-After`` with
``int()``: an HTTP date (RFC 9110 allows it; proxies send it) would raise, and a huge value
would be slept out. So every answer's wait is read here first (``bot.hosts.timeouts``): a
request waits at most ``MAX_WAIT`` seconds in all, and one that asks for more fails at once
with one line (exit 3). Its
``retry_transient_errors`` (5xx, timeouts) is on for reads only: for a POST or PUT it would
repeat a write GitLab may have stored, so writes are never repeated on those, and the
publisher reads back instead of posting again.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote

from bot.errors import ConfigError, HostChangeNotFound, ServiceError, UsageError, redact
from bot.hosts.gitlab.settings import GitLabSettings
from bot.hosts.timeouts import MAX_WAIT, requested_wait, timed_out, too_long_to_wait

if TYPE_CHECKING:
    from pathlib import Path

    from gitlab import Gitlab
    from gitlab.v4.objects import Project, ProjectMergeRequest

    from bot.config import Settings

__all__ = [
    "MergeState",
    "PUBLIC_URL",
    "MergeRequestRef",
    "Credentials",
    "credentials",
    "gitlab_client",
    "gitlab_error",
    "is_mr_ref",
    "mr_from_ci",
    "parse_mr_ref",
    "server_url",
]

PUBLIC_URL = "https://gitlab.com"
_PATH = r"[\w.-]+(?:/[\w.-]+)+"
_REF = re.compile(rf"^(?P<project>{_PATH}|\d+)!(?P<iid>\d+)$")
_URL = re.compile(
    r"^(?P<root>https?://[^/\s]+)(?P<path>(?:/[\w.-]+)+?)/(?:-/)?merge_requests/"
    r"(?P<iid>\d+)(?:[/?#].*)?$"
)


@dataclass(frozen=True)
class MergeRequestRef:
    project: str  # group/sub/project, or a numeric project id
    iid: int
    url: str  # the server's base URL (https://gitlab.example.com, maybe with a path)

    @property
    def id(self) -> str:
        return f"{self.project}!{self.iid}"

    @property
    def encoded(self) -> str:
        """The project as it goes into an API path (URL-encoded path, or the id)."""
        return quote(self.project, safe="")


def is_mr_ref(spec: str) -> bool:
    return bool(_REF.match(spec) or _URL.match(spec))


def server_url(settings: GitLabSettings) -> str:
    """GITLAB_URL, else the CI server (CI_SERVER_URL, CI_API_V4_URL), else gitlab.com."""
    if settings.url:
        return settings.url.rstrip("/")
    if settings.server_url:
        return settings.server_url.rstrip("/")
    if settings.api_v4_url:
        return settings.api_v4_url.rstrip("/").removesuffix("/api/v4")
    return PUBLIC_URL


def parse_mr_ref(spec: str, settings: GitLabSettings) -> MergeRequestRef:
    """``group/sub/project!12`` (on the configured server) or a merge request URL (its own
    server: a self-managed host is taken from the URL; GITLAB_URL tells where a server under
    a path such as https://HOST/gitlab ends and the project begins)."""
    m = _REF.match(spec)
    if m:
        return MergeRequestRef(m.group("project"), int(m.group("iid")), server_url(settings))
    m = _URL.match(spec)
    if not m:
        raise UsageError(
            f"{spec!r} is not a merge request reference (group/project!12 or a merge request URL)"
        )
    root, path = m.group("root"), m.group("path")
    configured = server_url(settings)
    if f"{root}{path}".startswith(configured + "/"):
        root, path = configured, f"{root}{path}"[len(configured) :]
    return MergeRequestRef(path.strip("/"), int(m.group("iid")), root)


def mr_from_ci(settings: GitLabSettings) -> str | None:
    """``group/project!N`` of a GitLab CI merge request pipeline, if this is one."""
    iid = (settings.merge_request_iid or "").strip()
    project = (
        settings.merge_request_project_path or settings.project_path or settings.project_id or ""
    ).strip()
    if iid.isdigit() and project:
        return f"{project}!{iid}"
    return None


@dataclass(frozen=True)
class Credentials:
    token: str
    kind: str  # "private" (GITLAB_TOKEN: personal, project or group token) | "job"

    @property
    def job_only(self) -> bool:
        return self.kind == "job"


def credentials(settings: GitLabSettings) -> Credentials:
    if settings.token:
        return Credentials(settings.token, "private")
    if settings.job_token:
        return Credentials(settings.job_token, "job")
    raise ConfigError(
        "GITLAB_TOKEN is not set",
        hint="use a personal, project or group access token with the api scope "
        "(a masked CI/CD variable); inside GitLab CI, CI_JOB_TOKEN alone "
        "can read but not post",
    )


def gitlab_client(settings: GitLabSettings, url: str) -> Gitlab:
    creds = credentials(settings)
    return _write_safe_gitlab()(
        url,
        private_token=None if creds.job_only else creds.token,
        job_token=creds.token if creds.job_only else None,
        timeout=settings.timeout,
        per_page=100,
        retry_transient_errors=True,
        backend=_bounded_waits(),
    )


_budget = threading.local()  # seconds the current request may still wait (per thread)


@lru_cache(maxsize=1)
def _write_safe_gitlab() -> type[Gitlab]:
    """python-gitlab that retries a read on 5xx / timeouts (3 times) but never a write."""
    import gitlab
    import requests

    class WriteSafeGitlab(gitlab.Gitlab):
        def http_request(
            self, verb: str, path: str, *args: Any, **kwargs: Any
        ) -> requests.Response:
            if verb.lower() != "get":
                kwargs["retry_transient_errors"] = False
            kwargs.setdefault("max_retries", 3)
            _budget.seconds = MAX_WAIT
            return super().http_request(verb, path, *args, **kwargs)

    return WriteSafeGitlab


@lru_cache(maxsize=1)
def _bounded_waits() -> type:
    """python-gitlab's HTTP backend, with every wait an answer asks for read by Nova: the
    ``Retry-After`` python-gitlab then sees is whole seconds within the request's budget; an
    answer that asks for more than the budget is raised at once as GitLab's error."""
    from gitlab._backends import DefaultBackend, DefaultResponse
    from gitlab.exceptions import GitlabHttpError

    class BoundedWaits(DefaultBackend):
        def http_request(self, *args: Any, **kwargs: Any) -> DefaultResponse:
            result = super().http_request(*args, **kwargs)
            status = result.status_code
            if status < 400:
                return result
            headers = result.headers
            wait = requested_wait(headers)
            for name in ("Retry-After", "RateLimit-Reset"):
                headers.pop(name, None)
            if wait is None:
                return result  # python-gitlab's own short backoff
            left = getattr(_budget, "seconds", MAX_WAIT)
            if wait > left and (status == 429 or status >= 500):
                raise GitlabHttpError(
                    response_code=status,
                    error_message=too_long_to_wait(wait),
                    response_body=result.content,
                )
            _budget.seconds = left - math.ceil(wait)
            headers["Retry-After"] = str(math.ceil(wait))
            return result

    return BoundedWaits


def gitlab_error(exc: BaseException, what: str) -> Exception:
    """Wrap a python-gitlab / requests exception once, at the edge."""
    from gitlab.exceptions import GitlabAuthenticationError, GitlabError
    from requests import RequestException

    if isinstance(exc, GitlabAuthenticationError):
        return ConfigError(
            f"{what}: GitLab refused the token (HTTP 401)",
            hint="check GITLAB_TOKEN (a token with the api scope) and GITLAB_URL",
        )
    if isinstance(exc, GitlabError):
        if exc.response_code == 404:
            return HostChangeNotFound(f"{what}: not found (or the token cannot see it)")
        return ServiceError(
            redact(f"{what}: GitLab answered HTTP {exc.response_code}: {exc.error_message}")
        )
    if isinstance(exc, RequestException):
        how = "timed out" if timed_out(exc) else f"unreachable ({type(exc).__name__})"
        return ServiceError(redact(f"{what}: GitLab {how}"))
    return ServiceError(redact(f"{what}: {exc}"))


@dataclass
class MergeState:
    """One merge request on GitLab: the client and the fetched objects its source,
    publisher and conversation share, and Nova's own identity there. Plain data: the parts
    import this, and only the session (``session.py``, which wires them) imports the parts."""

    settings: Settings
    repo_path: Path | None = None
    log: IO[str] | None = None  # the job log: where findings go when Nova cannot post
    ref: MergeRequestRef | None = None  # set by fetch
    client: Gitlab | None = None
    project: Project | None = None  # lazy: no GET
    mr: ProjectMergeRequest | None = None  # set by fetch (None: diffed from the checkout)
    diff_refs: dict[str, str] = field(default_factory=dict)  # base_sha, start_sha, head_sha
    _me: int | None = field(default=None, repr=False)
    _me_known: bool = field(default=False, repr=False)

    @property
    def gitlab(self) -> GitLabSettings:
        return self.settings.section(GitLabSettings)

    @property
    def job_token_only(self) -> bool:
        return credentials(self.gitlab).job_only

    def me(self) -> int | None:
        """Nova's own user id: the token's user (a project or group token's bot user).
        None when it cannot be known (CI_JOB_TOKEN): then no note counts as Nova's."""
        if not self._me_known:
            self._me_known = True
            if self.client is None or self.job_token_only:
                return None
            from gitlab.exceptions import GitlabError
            from requests import RequestException

            try:
                user = self.client.http_get("/user")
            except (GitlabError, RequestException) as exc:
                raise gitlab_error(exc, "reading the token's user (GET /user)") from exc
            self._me = int(user["id"]) if isinstance(user, dict) and "id" in user else None
        return self._me

    def is_mine(self, note: dict[str, Any]) -> bool:
        me = self.me()
        author = note.get("author") or {}
        return me is not None and author.get("id") == me
