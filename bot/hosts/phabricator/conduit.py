"""The one wrapper around python-phabricator: Nova's Conduit client.

Methods are called through ``Resource`` (the library's 2017 method list routes newer
three-part names to the wrong endpoint); host and token are passed explicitly; writes are
retried only when the connection was refused (the library's own session retries every POST,
so a slow write could land twice); its errors become Nova's.

Every request also carries ``__conduit__=1`` in its URL. python-phabricator puts the token
inside ``params`` only, and without that flag Phorge renders a PHP error (an ``Error``, not
an ``Exception``: a call to an undefined method, a type error) as an HTML 500 page. With it,
Phorge's Conduit exception handler answers JSON, ``{"error_code": "Error", "error_info":
"Call to undefined method …"}``, so Nova can say what the server said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from bot.errors import ConfigError, ServiceError, SourceError, redact
from bot.hosts.phabricator.settings import PhabricatorSettings
from bot.hosts.timeouts import timed_out

if TYPE_CHECKING:
    from pathlib import Path

    from bot.config import Settings

__all__ = [
    "ConduitClient",
    "ConduitError",
    "RevisionState",
    "api_url",
    "is_revision_ref",
    "parse_revision_ref",
]

_REF = re.compile(r"^D(\d+)(?::(\d+))?$")


def is_revision_ref(spec: str) -> bool:
    return bool(_REF.match(spec.strip()))


def parse_revision_ref(spec: str) -> tuple[int, int | None]:
    m = _REF.match(spec.strip())
    if not m:
        raise SourceError(f"{spec!r} is not a revision reference (D123 or D123:4567)")
    return int(m.group(1)), int(m.group(2)) if m.group(2) else None


def api_url(url: str) -> str:
    """python-phabricator wants the host URL ending in /api/."""
    base = url.strip().rstrip("/")
    return (base if base.endswith("/api") else base + "/api") + "/"


class ConduitClient:
    def __init__(self, settings: PhabricatorSettings) -> None:
        if not settings.url or not settings.token:
            raise ConfigError(
                "Phabricator is not configured",
                hint="set PHABRICATOR_URL and PHABRICATOR_API_TOKEN (or log in "
                "with arc so that ~/.arcrc holds the host and token)",
            )
        import phabricator

        self.url = api_url(settings.url)
        self.timeout = settings.timeout
        self._phab = phabricator.Phabricator(
            host=self.url, token=settings.token, timeout=settings.timeout
        )
        self._methods: set[str] | None = None

    def call(self, method: str, *, write: bool = False, **params: Any) -> Any:
        """Call a Conduit method; ``write`` calls are retried only when never sent."""
        import phabricator
        import requests
        from urllib3.util.retry import Retry

        group, _, name = method.rpartition(".")
        resource = phabricator.Resource(self._phab, {}, name, group)
        # Conduit is all POST. A refused connection never reached the server, so it is safe
        # to retry; a read timeout on a write may have been applied, so it is not.
        retry = Retry(
            total=3,
            connect=2,
            read=0 if write else 1,
            status=0,
            redirect=0,
            backoff_factor=0.3,
            allowed_methods=frozenset({"POST"}),
        )
        for prefix in ("http://", "https://"):
            resource.session.mount(prefix, _conduit_adapter(retry))
        try:
            result = resource(**params)
        except phabricator.APIError as exc:
            code, info = exc.code, redact(str(exc.message))
            if code == "ERR-INVALID-AUTH":
                raise ConfigError(
                    f"Phabricator refused the API token ({code}: {info})",
                    hint="check PHABRICATOR_API_TOKEN",
                ) from exc
            raise ConduitError(method, code, info) from exc
        except (requests.Timeout, requests.ConnectionError) as exc:
            if timed_out(exc):
                raise ServiceError(
                    f"Conduit {method} timed out after {self.timeout:g}s (NOVA_PHABRICATOR_TIMEOUT)"
                ) from exc
            raise ServiceError(f"Phabricator at {self.url} is unreachable ({method})") from exc
        except requests.HTTPError as exc:  # a proxy's or a crashed PHP's page, not Conduit
            raise ServiceError(
                f"Conduit {method} failed: {redact(str(exc))} (the server "
                "answered without a Conduit error; see its error log)"
            ) from exc
        except ValueError as exc:  # not JSON: a proxy or login page instead of Conduit
            raise ServiceError(f"Conduit {method}: the answer is not JSON") from exc
        return result.response if hasattr(result, "response") else result

    def methods(self) -> set[str]:
        if self._methods is None:
            self._methods = set(self.call("conduit.query") or {})
        return self._methods


class ConduitError(ServiceError):
    def __init__(self, method: str, code: str, info: str) -> None:
        super().__init__(f"Conduit {method}: {code}: {info}")
        self.code = code
        self.info = info


def _conduit_adapter(retry: Any) -> Any:
    """An HTTPAdapter that flags each request as Conduit's (``?__conduit__=1``)."""
    from requests.adapters import HTTPAdapter

    class ConduitAdapter(HTTPAdapter):
        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
            if "__conduit__=" not in (request.url or ""):
                sep = "&" if "?" in request.url else "?"
                request.url = f"{request.url}{sep}__conduit__=1"
            return super().send(request, *args, **kwargs)

    return ConduitAdapter(max_retries=retry)


@dataclass
class RevisionState:
    """One Differential revision: the Conduit client and the fetched revision and diff that
    its source, publisher and conversation share, and Nova's own identity there. Plain
    data: the parts import this, and only the session (``session.py``, which wires them)
    imports the parts."""

    settings: Settings
    repo_path: Path | None = None
    revision: dict[str, Any] = field(default_factory=dict)  # differential.revision.search row
    diff_id: int | None = None  # the diff under review, set by fetch
    changesets: dict[str, int] = field(default_factory=dict)  # new path -> changeset ID
    log: IO[str] | None = None  # the job log: where findings go when Nova cannot post
    _conduit: ConduitClient | None = field(default=None, repr=False)
    _me: str | None = field(default=None, repr=False)

    @property
    def phabricator(self) -> PhabricatorSettings:
        return self.settings.section(PhabricatorSettings)

    @property
    def conduit(self) -> ConduitClient:
        if self._conduit is None:
            self._conduit = ConduitClient(self.phabricator)
        return self._conduit

    def whoami(self) -> str:
        """Nova's own user PHID: only its comments count."""
        if self._me is None:
            self._me = str(self.conduit.call("user.whoami").get("phid", ""))
        return self._me
