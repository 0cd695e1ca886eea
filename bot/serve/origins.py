"""Where a job's token may go: the code host the settings name, never a URL a delivery
supplies. A webhook secret is a shared string (GitLab's is typed in by every maintainer who
adds the hook): whoever knows it could name any clone URL, and the job would send its token
there. So a checkout's URL is derived from the host's settings (GitHub's API URL → its web
and git host, ``GITLAB_URL``) and the repository the delivery names; a delivery whose own
URL points at another host, scheme or port is refused before anything is queued, with one
log line and no request made."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from bot.serve.jobs import Ignored, JobRequest

__all__ = ["Origins", "github_web_url", "origin"]

_REPOSITORY = {
    "github": re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"),
    "gitlab": re.compile(r"^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+$"),
}
_PORTS = {"http": 80, "https": 443}


def github_web_url(api_url: str) -> str:
    """``https://api.github.com`` → ``https://github.com``; GitHub Enterprise's
    ``https://HOST/api/v3`` → ``https://HOST``; anything else: its own scheme, host and port."""
    parts = urlsplit(api_url.rstrip("/"))
    if parts.hostname == "api.github.com":
        return "https://github.com"
    path = parts.path.removesuffix("/api/v3")
    return f"{parts.scheme}://{parts.netloc}{path}".rstrip("/")


def origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL; None for anything else (a path, file://,
    ssh, a URL with credentials in it)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _PORTS or not parts.hostname or parts.username or parts.password:
        return None
    return parts.scheme, parts.hostname.lower(), port or _PORTS[parts.scheme]


@dataclass(frozen=True)
class Origins:
    """Each host's base URL (``https://github.com``), from the settings."""

    bases: dict[str, str]

    def route(self, request: JobRequest) -> JobRequest | Ignored:
        """The request with its clone URL derived from the settings, or the refusal."""
        if request.kind != "testgen":
            return request
        base = self.bases.get(request.host)
        if not base or origin(base) is None:
            return Ignored(f"no {request.host} URL is configured to clone from")
        if request.clone_url and origin(request.clone_url) != origin(base):
            where = origin(request.clone_url)
            named = "{}://{}:{}".format(*where) if where else "a URL that is not http(s)"
            return Ignored(
                f"refused: the delivery's clone URL is on {named}, not on the configured "
                f"{request.host} host {base}; no request was made"
            )
        if not _REPOSITORY[request.host].match(request.ref) or ".." in request.ref:
            return Ignored(f"refused: {request.ref!r} is not a {request.host} repository path")
        return replace(request, clone_url=f"{base}/{request.ref}.git")

    def allows(self, request: JobRequest) -> bool:
        """The queued clone URL is the one ``route`` derives (a row queued before an
        upgrade, or edited, is never cloned)."""
        routed = self.route(replace(request, clone_url=None))
        return isinstance(routed, JobRequest) and routed.clone_url == request.clone_url
