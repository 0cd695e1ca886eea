"""GitHub App mode: the server holds the App's id and private key; each GitHub job gets
an installation token minted for it and scoped to its one repository, and writes as the
App's bot (``<slug>[bot]``). The key never leaves the server process.

PyGithub signs the App's JWT (``Auth.AppAuth``) and reads the App; the token is minted with
one ``POST /app/installations/{id}/access_tokens`` naming the repository, which PyGithub's
helpers cannot scope."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from bot.errors import ConfigError, ServiceError, register_secret
from bot.serve.jobs import JobRequest

__all__ = ["GitHubApp"]


class GitHubApp:
    def __init__(self, app_id: str, private_key: str, api_url: str, timeout: float = 30.0):
        self.app_id = app_id
        key = private_key.strip()
        if not key.startswith("-----BEGIN"):
            try:
                key = Path(key).read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(
                    "NOVA_GITHUB_APP_PRIVATE_KEY is neither a PEM key nor a readable file"
                ) from exc
        self.private_key = key
        register_secret(key)  # read from a file: redacted like the variable's own value
        self.api_url = api_url.rstrip("/")
        self.timeout = timeout

    def _jwt(self) -> str:
        from github import Auth

        token: str = Auth.AppAuth(int(self.app_id), self.private_key).token
        return token

    @cached_property
    def slug(self) -> str:
        import jwt
        import requests
        from github import Auth, GithubException, GithubIntegration

        try:
            integration = GithubIntegration(
                auth=Auth.AppAuth(int(self.app_id), self.private_key), base_url=self.api_url
            )
            return str(integration.get_app().slug)
        except GithubException as exc:
            raise ConfigError(f"the GitHub App {self.app_id} cannot be read: {exc.status}") from exc
        except requests.RequestException as exc:
            raise ConfigError(
                f"the GitHub App {self.app_id} cannot be read: {type(exc).__name__}"
            ) from exc
        except (ValueError, jwt.PyJWTError) as exc:  # not an integer id, not an RSA key
            raise ConfigError(f"the GitHub App's id or key is not valid: {exc}") from exc

    def login(self) -> str:
        return f"{self.slug}[bot]"

    def token(self, installation: int, repository: str) -> str:
        """An installation token for ``repository`` (owner/name) only."""
        import httpx

        url = f"{self.api_url}/app/installations/{installation}/access_tokens"
        name = repository.split("/", 1)[-1]
        try:
            response = httpx.post(
                url,
                json={"repositories": [name]},
                headers={
                    "Authorization": f"Bearer {self._jwt()}",
                    "Accept": "application/vnd.github+json",
                },
                timeout=self.timeout,
            )
        except httpx.HTTPError as exc:
            raise ServiceError(f"GitHub App token for {repository}: {type(exc).__name__}") from exc
        if response.status_code != 201:
            raise ServiceError(f"GitHub App token for {repository}: HTTP {response.status_code}")
        token = str(response.json()["token"])
        register_secret(token)
        return token

    def job_env(self, request: JobRequest) -> dict[str, str]:
        if request.installation is None or not request.repository:
            raise ServiceError(f"{request.change}: the delivery names no App installation")
        return {
            "GITHUB_TOKEN": self.token(request.installation, request.repository),
            "NOVA_GITHUB_LOGIN": self.login(),
        }
