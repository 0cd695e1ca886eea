"""``nova doctor``: is each configured service set up and reachable? Never prints a token.

A service that is not configured is reported as such (with the variables that would turn it
on) and is not an error; a configured one that cannot be reached, or refuses the
credentials, is.
"""

from __future__ import annotations

import httpx

from bot.config import Settings
from bot.errors import redact
from bot.hosts.base import Check

__all__ = ["Check", "run_checks"]

TIMEOUT = 5.0


def http_get(url: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.get(url, headers=headers or {}, timeout=TIMEOUT, follow_redirects=True)


def describe_failure(exc: Exception) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out after {TIMEOUT:g}s"
    if isinstance(exc, httpx.ConnectError):
        return "connection refused or host unknown"
    return redact(f"{type(exc).__name__}: {exc}")[:160]


def _model(s: Settings) -> Check:
    if not s.llm_model:
        return Check("model", "NOVA_LLM_MODEL", None,
                     "not configured: the review runs the analyzers only")
    from bot.llm.factory import PROVIDERS

    if s.provider not in PROVIDERS:
        return Check("model", s.llm_model, False, f"unknown provider {s.provider!r}")
    base = (s.llm_base_url or ("https://api.anthropic.com/v1" if s.provider == "anthropic"
                               else "https://api.openai.com/v1")).rstrip("/")
    if not s.llm_api_key and not s.llm_base_url:
        return Check("model", s.llm_model, False, "no API key (NOVA_LLM_API_KEY)")
    headers = {"Authorization": f"Bearer {s.llm_api_key}"} if s.llm_api_key else {}
    if s.provider == "anthropic" and s.llm_api_key:
        headers = {"x-api-key": s.llm_api_key, "anthropic-version": "2023-06-01"}
    try:
        response = http_get(f"{base}/models", headers)
    except httpx.HTTPError as exc:
        return Check("model", f"{s.llm_model} at {base}", False, describe_failure(exc))
    if response.status_code in (401, 403):
        return Check("model", f"{s.llm_model} at {base}", False,
                     f"reachable, but the key was refused (HTTP {response.status_code})")
    return Check("model", f"{s.llm_model} at {base}", True,
                 f"reachable (GET /models: HTTP {response.status_code})")


def _task_manager(s: Settings) -> Check:
    if s.use_mock_client:
        return Check("task manager", "USE_MOCK_CLIENT", True, "in-memory mock client")
    if not s.task_manager_url:
        return Check("task manager", "NOVA_TASK_MANAGER_URL", None, "not configured")
    from bot.taskmanager.client import create_task_manager_client

    client = create_task_manager_client(s.with_(task_manager_timeout=TIMEOUT), retries=0)
    try:
        result = client.health_check()
    finally:
        client.close()
    tail = "" if s.execution_id else "; NOVA_EXECUTION_ID is not set, so runs are not tracked"
    if result["success"]:
        return Check("task manager", s.task_manager_url, True, "healthy" + tail)
    return Check("task manager", s.task_manager_url, False, str(result["error"]))


def _node(s: Settings) -> Check:
    """For `nova testgen` on node:test projects (never an error: Python needs no node)."""
    import subprocess

    from bot.testgen.frameworks import node_binary

    node = node_binary()
    if node is None:
        return Check("node", "node", None, "not found: testgen for node:test projects needs "
                                           "Node >= 20.18 (pip install \"nova-bot[node]\")")
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True,
                                 timeout=TIMEOUT).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("node", node, False, f"does not run: {exc}"[:160])
    parts = tuple(int(p) for p in version.lstrip("v").split(".")[:2] if p.isdigit())
    if parts < (20, 18):
        return Check("node", node, None, f"{version or 'unknown version'}: testgen for "
                                         "node:test projects needs Node >= 20.18 (per-line "
                                         "coverage)")
    return Check("node", node, True, version)


def _sandbox(s: Settings) -> Check:
    """Whether generated tests run without network on this machine."""
    from bot.testgen.sandbox import network_isolation

    prefix = network_isolation()
    if prefix:
        return Check("test sandbox", " ".join(prefix), True, "generated tests run without "
                                                             "network")
    return Check("test sandbox", "unshare", None, "no network isolation here (unshare --net "
                                                  "is not allowed): generated tests run with "
                                                  "the job's network")


def _hosts(s: Settings) -> list[Check]:
    from bot.hosts import hosts

    return [check for host in hosts() for check in host.checks(s)]


def run_checks(settings: Settings) -> list[Check]:
    """The model, every registered code host, the Task Manager, then testgen's tools."""
    return [_model(settings), *_hosts(settings), _task_manager(settings), _node(settings),
            _sandbox(settings)]
