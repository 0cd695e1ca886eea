"""The local GitHub server with GitHub App endpoints: ``GET /app`` and
``POST /app/installations/{id}/access_tokens``, both authenticated by the App's JWT
(RS256, checked with the App's public key: ``iss`` = the App id, not expired). Minted
installation tokens work like GitHub's: only for the repositories they were scoped to
(404 elsewhere, as GitHub answers for a repository the token cannot see)."""

from __future__ import annotations

import re
import time
from typing import Any

import jwt

from tests.servers.github_server import DOCS, FakeGitHub

__all__ = ["FakeGitHubApp"]


class FakeGitHubApp(FakeGitHub):
    def __init__(self, app_id: int, public_key: str, slug: str, installations: set[int]):
        super().__init__(login=f"{slug}[bot]")
        self.app_id = app_id
        self.public_key = public_key
        self.slug = slug
        self.installations = installations
        self.minted: dict[str, dict[str, Any]] = {}  # token -> {installation, repositories}

    def _route(
        self, method: str, raw_path: str, body: Any, headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        path = raw_path.split("?", 1)[0]
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        if path.startswith("/app"):
            with self._lock:
                self.requests.append((method, path, body))
                return self._app(method, path, body, auth)
        token = auth.split(" ", 1)[-1]
        grant = self.minted.get(token)
        if grant is None:
            return super()._route(method, raw_path, body, headers)
        m = re.match(r"^/repos/[^/]+/([^/]+)", path)
        if m and m.group(1) not in grant["repositories"]:
            return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
        return super()._route(method, raw_path, body, {"Authorization": f"token {self.token}"})

    def _app(self, method: str, path: str, body: Any, auth: str) -> tuple[int, Any, dict[str, str]]:
        scheme, _, token = auth.partition(" ")
        try:
            claims = jwt.decode(token, self.public_key, algorithms=["RS256"])
        except jwt.PyJWTError as exc:
            return 401, {"message": f"A JSON web token could not be decoded ({exc})"}, {}
        if scheme.lower() != "bearer" or str(claims.get("iss")) != str(self.app_id):
            return 401, {"message": "Bad credentials", "documentation_url": DOCS}, {}
        if method == "GET" and path == "/app":
            return 200, {"id": self.app_id, "slug": self.slug, "name": self.slug}, {}
        m = re.match(r"^/app/installations/(\d+)/access_tokens$", path)
        if method == "POST" and m:
            installation = int(m.group(1))
            if installation not in self.installations:
                return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
            repositories = list((body or {}).get("repositories") or [])
            token = f"ghs_minted{len(self.minted):026d}"
            self.minted[token] = {"installation": installation, "repositories": repositories}
            expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
            return (
                201,
                {"token": token, "expires_at": expires, "repository_selection": "selected"},
                {},
            )
        return 404, {"message": "Not Found", "documentation_url": DOCS}, {}
