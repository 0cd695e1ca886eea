"""``nova doctor``: is each configured service set up and reachable? Never prints a token.

A service that is not configured is reported as such (with the variables that would turn it
on) and is not an error; a configured one that cannot be reached, or refuses the
credentials, is.
"""

from __future__ import annotations

from dataclasses import replace

import httpx

from bot.config import Settings
from bot.errors import redact
from bot.hosts.base import Check
from bot.llm.settings import LLMSettings
from bot.taskmanager.settings import TaskManagerSettings

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


def _model(s: LLMSettings) -> Check:
    """Proves the model answers: the server's model list names it (OpenAI-compatible
    ``/models``, Anthropic's ``/v1/models``, Ollama's ``/api/tags``), else a one-token
    completion. A server that answers but does not have the model is a failure."""
    if not s.model:
        return Check(
            "model", "NOVA_LLM_MODEL", None, "not configured: the review runs the analyzers only"
        )
    from bot.errors import ConfigError
    from bot.llm.providers import known_provider

    if not known_provider(s.provider or ""):
        return Check("model", s.model, False, f"unknown provider {s.provider!r}")
    name = s.model
    s = replace(s, timeout=TIMEOUT, max_retries=0)
    try:
        if s.provider == "ollama":
            return _ollama_model(s)
        if s.provider in ("openai", "anthropic") and (s.api_key or s.base_url):
            listed = _listed_model(s)
            if listed is not None:
                return listed
        return _completion(s)
    except ConfigError as exc:
        return Check("model", name, False, str(exc))


def _listed_model(s: LLMSettings) -> Check | None:
    """The check from ``GET /models``; None when the server has no model list to ask."""
    default = (
        "https://api.anthropic.com/v1" if s.provider == "anthropic" else "https://api.openai.com/v1"
    )
    base = (s.base_url or default).rstrip("/")
    headers = {"Authorization": f"Bearer {s.api_key}"} if s.api_key else {}
    if s.provider == "anthropic" and s.api_key:
        headers = {"x-api-key": s.api_key, "anthropic-version": "2023-06-01"}
    target = f"{s.model} at {base}"
    try:
        response = http_get(f"{base}/models?limit=1000", headers)
    except httpx.HTTPError as exc:
        return Check("model", target, False, describe_failure(exc))
    if response.status_code in (401, 403):
        return Check(
            "model",
            target,
            False,
            f"reachable, but the key was refused (HTTP {response.status_code})",
        )
    try:
        ids = [str(m["id"]) for m in response.json()["data"]]
    except (ValueError, KeyError, TypeError):
        return None  # no list here (404, another shape): ask the model itself
    return _in_list(target, s.model_name or "", ids, "GET /models")


def _in_list(target: str, name: str, names: list[str], how: str) -> Check:
    if name in names:
        return Check("model", target, True, f"served ({how} lists it)")
    shown = ", ".join(sorted(names)[:8]) + (", …" if len(names) > 8 else "")
    return Check(
        "model",
        target,
        False,
        redact(f"the server does not have {name!r} ({how}: {shown or 'no models'})"),
    )


def _ollama_model(s: LLMSettings) -> Check:
    from bot.extras import require_extra

    require_extra("ollama", "NOVA_LLM_MODEL=ollama:...", "ollama")
    import ollama

    client = ollama.Client(host=s.base_url, timeout=TIMEOUT)  # else OLLAMA_HOST
    target = f"{s.model} at {s.base_url or 'OLLAMA_HOST (default localhost:11434)'}"
    try:
        with client:
            names = [str(m.model) for m in client.list().models]
    except (httpx.HTTPError, ConnectionError, ollama.ResponseError) as exc:
        if isinstance(exc, ConnectionError):
            return Check("model", target, False, "connection refused or host unknown")
        return Check("model", target, False, describe_failure(exc))
    name = s.model_name or ""
    tagged = name if ":" in name else f"{name}:latest"
    return _in_list(target, tagged if tagged in names else name, names, "GET /api/tags")


_MAX_TOKENS = ("openai", "azure_openai", "anthropic", "groq", "mistralai")


def _completion(s: LLMSettings) -> Check:
    """A one-token completion, for providers without a model list we can read."""
    from bot.llm.factory import make_chat_model, model_error, provider_errors
    from bot.llm.loop import run_coroutine

    model = make_chat_model(s)
    target = f"{s.model} at {s.base_url}" if s.base_url else s.model or ""

    async def ask() -> None:
        from bot.llm.factory import aclose_model

        try:
            # max_tokens where the provider takes it per call; the others answer in full
            if s.provider in _MAX_TOKENS:
                await model.ainvoke("Reply with OK.", max_tokens=1)
            else:
                await model.ainvoke("Reply with OK.")
        finally:
            await aclose_model(model)

    try:
        run_coroutine(ask())
    except provider_errors() as exc:
        return Check("model", target, False, str(model_error(exc, s)))
    return Check("model", target, True, "answered a one-token completion")


def _task_manager(s: TaskManagerSettings) -> Check:
    if s.use_mock_client:
        return Check("task manager", "USE_MOCK_CLIENT", True, "in-memory mock client")
    if not s.url:
        return Check("task manager", "NOVA_TASK_MANAGER_URL", None, "not configured")
    from bot.taskmanager.client import create_task_manager_client

    client = create_task_manager_client(replace(s, timeout=TIMEOUT), retries=0)
    try:
        result = client.health_check()
    finally:
        client.close()
    tail = "" if s.execution_id else "; NOVA_EXECUTION_ID is not set, so runs are not tracked"
    if result["success"]:
        return Check("task manager", s.url, True, "healthy" + tail)
    return Check("task manager", s.url, False, str(result["error"]))


def _node(s: Settings) -> Check:
    """For `nova testgen` on node:test projects (never an error: Python needs no node)."""
    import subprocess

    from bot.testgen.frameworks import node_binary

    node = node_binary()
    if node is None:
        return Check(
            "node",
            "node",
            None,
            "not found: testgen for node:test projects needs "
            'Node >= 20.18 (pip install "nova-bot[node]")',
        )
    try:
        version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=TIMEOUT
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("node", node, False, f"does not run: {exc}"[:160])
    parts = tuple(int(p) for p in version.lstrip("v").split(".")[:2] if p.isdigit())
    if parts < (20, 18):
        return Check(
            "node",
            node,
            None,
            f"{version or 'unknown version'}: testgen for "
            "node:test projects needs Node >= 20.18 (per-line "
            "coverage)",
        )
    return Check("node", node, True, version)


def _sandbox(s: Settings) -> Check:
    """The isolation generated tests get on this machine (``NOVA_TEST_ISOLATION``), and
    what it holds; ``none`` is a warning, a named tier that does not work here a failure."""
    from bot.errors import ConfigError
    from bot.sandbox.run import choose_isolation

    try:
        tier = choose_isolation(s.testgen.isolation)
    except ConfigError as exc:
        return Check("test sandbox", s.testgen.isolation, False, str(exc))
    what = tier.why.removeprefix(f"{tier.name}: ")
    return Check("test sandbox", tier.name, True if tier.name != "none" else None, what)


def _analyzers(s: Settings) -> list[Check]:
    """Which analyzers this machine has, and their versions (docs/analyzers.md)."""
    from bot.analyzers.registry import doctor_lines

    return [
        Check(f"analyzer {name}", where, ok, detail)
        for name, where, ok, detail in doctor_lines(s.review.analyzers, s.review.analyzers_off)
    ]


def _hosts(s: Settings) -> list[Check]:
    from bot.hosts import hosts

    return [check for host in hosts() for check in host.checks(s)]


def run_checks(settings: Settings) -> list[Check]:
    """The model, every registered code host, the Task Manager, testgen's tools, then the
    analyzers."""
    return [
        _model(settings.llm),
        *_fallbacks(settings.llm),
        *_hosts(settings),
        _task_manager(settings.task_manager),
        _node(settings),
        _sandbox(settings),
        *_analyzers(settings),
    ]


def _fallbacks(s: LLMSettings) -> list[Check]:
    """One line per NOVA_LLM_FALLBACK model, checked like the model."""
    if not s.model:
        return []
    from bot.llm.fallback import fallback_settings

    return [replace(_model(fallback_settings(s, m)), name="fallback") for m in s.fallback]
