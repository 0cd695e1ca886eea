"""The environment a job gets: only what that job needs, built from the server's own.

Passed on: the basics (PATH, locale, CA bundles, proxies), Nova's own ``NOVA_*`` settings
except the server's (``NOVA_SERVE_*``) and its secrets (webhook secrets, Harbormaster
credentials, the GitHub App's id and key), the variables of the job's host only
(``GITHUB_*`` for a GitHub job, ...), and the model providers' key variables. The job's
own values (its token in App mode, its build target) come last."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from bot.serve.jobs import JobRequest

__all__ = ["NEVER", "job_environment"]

_BASIC = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "NO_PROXY",
    "no_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
)
# The server's secrets: never in a job.
NEVER = frozenset(
    {
        "NOVA_GITHUB_WEBHOOK_SECRET",
        "NOVA_GITLAB_WEBHOOK_TOKEN",
        "NOVA_PHABRICATOR_WEBHOOK_SECRET",
        "NOVA_HARBORMASTER_AUTH",
        "NOVA_GITHUB_APP_ID",
        "NOVA_GITHUB_APP_PRIVATE_KEY",
    }
)
# One run's own values: a server started inside a CI job must not hand its run to every job
# (a job's own come from its request: its build target, its repository for testgen).
_PER_RUN = frozenset(
    {
        "NOVA_HARBORMASTER_TARGET",
        "NOVA_EXECUTION_ID",
        "GITHUB_ACTIONS",
        "GITHUB_EVENT_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_REPOSITORY",
    }
)
_HOSTS = {
    "github": ("GITHUB_",),
    "gitlab": ("GITLAB_", "CI_SERVER_URL", "CI_API_V4_URL"),
    "phabricator": ("PHABRICATOR_",),
}


@cache
def _model_keys() -> frozenset[str]:
    from bot.llm.providers import PROVIDERS

    return frozenset(name for spec in PROVIDERS.values() for name in spec.key_envs)


def _wanted(name: str, host: str) -> bool:
    if name in NEVER or name in _PER_RUN or name.startswith("NOVA_SERVE_"):
        return False
    if name.startswith("NOVA_"):
        return True
    return name in _BASIC or name in _model_keys() or name.startswith(_HOSTS.get(host, ()))


def job_environment(
    request: JobRequest, server_env: Mapping[str, str], own: Mapping[str, str]
) -> dict[str, str]:
    """The job's environment: the server's variables it needs, then ``own`` (its token,
    home, target), with ``CI=true`` so nothing ever asks a question."""
    env = {k: v for k, v in server_env.items() if _wanted(k, request.host)}
    env["CI"] = "true"
    if request.target:
        env["NOVA_HARBORMASTER_TARGET"] = request.target
    if request.kind == "testgen":  # where the proposal goes (as in CI)
        env[{"github": "GITHUB_REPOSITORY", "gitlab": "CI_PROJECT_PATH"}[request.host]] = (
            request.ref
        )
    env.update(own)
    for name in NEVER:
        env.pop(name, None)
    return env
