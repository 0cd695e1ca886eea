"""Differential revisions from Phabricator / Phorge through Conduit (python-phabricator).

``D123`` is the revision's latest diff, ``D123:4567`` a given diff. The ``Change`` is
built from ``differential.querydiffs`` hunks (the only method that returns them; every
number in them is a string), so new line numbers are exact. ``getrawdiff`` is not used:
it re-renders the diff and may reorder files.

python-phabricator is wrapped once here (``ConduitClient``): methods are called through
``Resource`` (its 2017 method list routes newer three-part names to the wrong endpoint),
host and token are passed explicitly, writes are retried only when the connection was
refused (its own session retries every POST, so a slow ``createinline`` could be posted
twice), and its errors become Nova's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.diff.parse import parse_diff
from bot.errors import ConfigError, RemoteChangeNotFound, ServiceError, SourceError, redact
from bot.hosts.base import TreeReader
from bot.models import Change

__all__ = ["ConduitClient", "PhabricatorSource", "api_url", "parse_revision_ref"]

_REF = re.compile(r"^D(\d+)(?::(\d+))?$")
STAGING_REF = "refs/tags/phabricator/diff/{}"
# DifferentialChangeType / DifferentialChangeType file types
_ADD, _CHANGE, _DELETE, _MOVE_AWAY, _COPY_AWAY, _MOVE_HERE, _COPY_HERE, _MULTICOPY = range(1, 9)
_BINARY_FILE_TYPES = {2, 3}  # image, binary


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
    def __init__(self, settings: Settings) -> None:
        if not settings.phabricator_url or not settings.phabricator_token:
            raise ConfigError("Phabricator is not configured",
                              hint="set PHABRICATOR_URL and PHABRICATOR_API_TOKEN (or log in "
                                   "with arc so that ~/.arcrc holds the host and token)")
        import phabricator

        self.url = api_url(settings.phabricator_url)
        self.timeout = settings.phabricator_timeout
        self._phab = phabricator.Phabricator(host=self.url, token=settings.phabricator_token,
                                             timeout=settings.phabricator_timeout)
        self._methods: set[str] | None = None

    def call(self, method: str, *, write: bool = False, **params: Any) -> Any:
        """Call a Conduit method; ``write`` calls are retried only when never sent."""
        import phabricator
        import requests
        from requests.adapters import HTTPAdapter
        from urllib3.util.retry import Retry

        group, _, name = method.rpartition(".")
        resource = phabricator.Resource(self._phab, {}, name, group)
        # Conduit is all POST. A refused connection never reached the server, so it is safe
        # to retry; a read timeout on a write may have been applied, so it is not.
        retry = Retry(total=3, connect=2, read=0 if write else 1, status=0, redirect=0,
                      backoff_factor=0.3, allowed_methods=frozenset({"POST"}))
        for prefix in ("http://", "https://"):
            resource.session.mount(prefix, HTTPAdapter(max_retries=retry))
        try:
            result = resource(**params)
        except phabricator.APIError as exc:
            code, info = exc.code, redact(str(exc.message))
            if code == "ERR-INVALID-AUTH":
                raise ConfigError(f"Phabricator refused the API token ({code}: {info})",
                                  hint="check PHABRICATOR_API_TOKEN") from exc
            raise ConduitError(method, code, info) from exc
        except (requests.Timeout, requests.ConnectionError) as exc:
            if _timed_out(exc):
                raise ServiceError(f"Conduit {method} timed out after {self.timeout:g}s "
                                   "(NOVA_PHABRICATOR_TIMEOUT)") from exc
            raise ServiceError(f"Phabricator at {self.url} is unreachable ({method})") from exc
        except requests.HTTPError as exc:
            raise ServiceError(f"Conduit {method} failed: {redact(str(exc))}") from exc
        except ValueError as exc:  # not JSON: a proxy or login page instead of Conduit
            raise ServiceError(f"Conduit {method}: the answer is not JSON") from exc
        return result.response if hasattr(result, "response") else result

    def methods(self) -> set[str]:
        if self._methods is None:
            self._methods = set(self.call("conduit.query") or {})
        return self._methods


def _timed_out(exc: BaseException) -> bool:
    """requests reports a read timeout after retries as a ConnectionError around it."""
    import requests
    from urllib3.exceptions import ReadTimeoutError

    if isinstance(exc, requests.Timeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, ReadTimeoutError | TimeoutError)


class ConduitError(ServiceError):
    def __init__(self, method: str, code: str, info: str) -> None:
        super().__init__(f"Conduit {method}: {code}: {info}")
        self.code = code
        self.info = info


def _num(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _change_text(change: dict[str, Any]) -> str | None:
    """One file of ``querydiffs`` as a git-style diff; None for the far side of a move."""
    kind, file_type = _num(change.get("type")), _num(change.get("fileType"))
    if kind in (_MOVE_AWAY, _COPY_AWAY, _MULTICOPY):
        return None  # the other half (MOVE_HERE / COPY_HERE) describes it
    new = change.get("currentPath") or change.get("oldPath") or ""
    old = change.get("oldPath") or new
    out = [f"diff --git a/{old} b/{new}"]
    if kind == _ADD:
        out.append("new file mode 100644")
    elif kind == _DELETE:
        out.append("deleted file mode 100644")
    elif kind in (_MOVE_HERE, _COPY_HERE) and old != new:
        verb = "rename" if kind == _MOVE_HERE else "copy"
        out += [f"{verb} from {old}", f"{verb} to {new}"]
    hunks = change.get("hunks") or []
    if file_type in _BINARY_FILE_TYPES:
        src = "/dev/null" if kind == _ADD else f"a/{old}"
        dst = "/dev/null" if kind == _DELETE else f"b/{new}"
        out.append(f"Binary files {src} and {dst} differ")
        return "\n".join(out)
    if not hunks:
        return "\n".join(out)
    out.append("--- /dev/null" if kind == _ADD else f"--- a/{old}")
    out.append("+++ /dev/null" if kind == _DELETE else f"+++ b/{new}")
    for h in hunks:
        out.append(f"@@ -{_num(h.get('oldOffset'))},{_num(h.get('oldLength'))} "
                   f"+{_num(h.get('newOffset'))},{_num(h.get('newLength'))} @@")
        corpus = str(h.get("corpus") or "")
        out.append(corpus[:-1] if corpus.endswith("\n") else corpus)
    return "\n".join(out)


class PhabricatorSource:
    name = "phabricator"

    def __init__(self, settings: Settings, repo: Path | None = None) -> None:
        self.settings = settings
        self.repo_path = repo
        self._conduit: ConduitClient | None = None
        self.revision: dict[str, Any] = {}
        self.diff_id: int | None = None

    @property
    def conduit(self) -> ConduitClient:
        if self._conduit is None:
            self._conduit = ConduitClient(self.settings)
        return self._conduit

    def fetch(self, ref: str) -> Change:
        rev_id, wanted_diff = parse_revision_ref(ref)
        found = self.conduit.call("differential.revision.search",
                                  constraints={"ids": [rev_id]}).get("data") or []
        if not found:
            raise RemoteChangeNotFound(f"revision D{rev_id} not found (or the token cannot see it)")
        self.revision = found[0]
        fields = self.revision.get("fields") or {}
        query: dict[str, Any] = ({"ids": [wanted_diff]} if wanted_diff
                                 else {"revisionIDs": [rev_id]})
        diffs = self.conduit.call("differential.querydiffs", **query) or {}
        diffs = [d for d in diffs.values() if _num(d.get("revisionID")) == rev_id]
        if not diffs:
            which = f"diff {wanted_diff} of " if wanted_diff else "any diff of "
            raise RemoteChangeNotFound(f"{which}D{rev_id} not found")
        diff = max(diffs, key=lambda d: _num(d.get("id")))
        self.diff_id = _num(diff.get("id"))
        parts = [t for t in (_change_text(c) for c in diff.get("changes") or []) if t]
        raw = "\n".join(parts) + ("\n" if parts else "")
        return Change(
            id=f"D{rev_id}", source="phabricator", title=fields.get("title", ""),
            description=fields.get("summary", ""), author=self._author(fields),
            base_ref=diff.get("sourceControlBaseRevision") or None,
            head_ref=STAGING_REF.format(self.diff_id), url=fields.get("uri"),
            files=tuple(parse_diff(raw)), raw_diff=raw)

    def _author(self, fields: dict[str, Any]) -> str:
        phid = fields.get("authorPHID") or ""
        try:
            users = self.conduit.call("user.search", constraints={"phids": [phid]})
        except ServiceError:
            return phid
        data = (users or {}).get("data") or []
        return (data[0].get("fields") or {}).get("username", phid) if data else phid

    def tree(self, change: Change) -> TreeReader | None:
        """The CI checkout, when the build fetched the staging ref of this diff."""
        if self.repo_path is None or change.head_ref is None:
            return None
        from bot.hosts.git.source import GitSource

        source = GitSource(self.repo_path)
        try:
            commit = source._commit(change.head_ref)
        except SourceError:
            return None
        from bot.hosts.git.source import GitTree

        return GitTree(source.repo, commit.hexsha)
