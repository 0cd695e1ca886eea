"""Build a LangChain chat model from ``Settings``; map provider errors to ``ModelError``.

Providers register a builder in ``PROVIDERS`` — the built-in ones go through the same path a
third-party one would. Heavy imports happen inside the builders, never at module import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from bot.config import Settings
from bot.errors import ConfigError, ModelError, redact
from bot.extras import require_extra

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["PROVIDERS", "aclose_model", "estimate_tokens", "make_chat_model", "model_error"]

# An OpenAI-compatible server without auth still needs *some* key in the client.
_PLACEHOLDER_KEY = "nova-no-key"


def estimate_tokens(text: str) -> int:
    """About four characters per token: offline (no tokenizer download), good for budgets."""
    return len(text) // 4 + 1


def _openai(s: Settings) -> BaseChatModel:
    import openai
    from langchain_openai import ChatOpenAI

    key = s.llm_api_key
    if not key:
        if not s.llm_base_url:
            raise ConfigError("NOVA_LLM_MODEL uses OpenAI but no key is set",
                              hint="set NOVA_LLM_API_KEY or OPENAI_API_KEY, or NOVA_LLM_BASE_URL "
                                   "for a local OpenAI-compatible server")
        key = _PLACEHOLDER_KEY
    # Our own async client, closed by ``aclose_model`` when the run ends (the default one is
    # cached per base URL and keeps idle connections for the life of the process).
    client = openai.DefaultAsyncHttpxClient(timeout=s.llm_timeout)
    return ChatOpenAI(model=s.model_name or "", base_url=s.llm_base_url, api_key=SecretStr(key),
                      timeout=s.llm_timeout, max_retries=s.llm_max_retries,
                      http_async_client=client, http_socket_options=())


def _anthropic(s: Settings) -> BaseChatModel:
    require_extra("anthropic", "NOVA_LLM_MODEL=anthropic:...", "langchain_anthropic")
    from langchain_anthropic import ChatAnthropic

    if not s.llm_api_key:
        raise ConfigError("NOVA_LLM_MODEL uses Anthropic but no key is set",
                          hint="set NOVA_LLM_API_KEY or ANTHROPIC_API_KEY")
    kwargs: dict[str, Any] = {"model": s.model_name, "api_key": SecretStr(s.llm_api_key),
                              "timeout": s.llm_timeout, "max_retries": s.llm_max_retries,
                              "max_tokens": 4096}
    if s.llm_base_url:
        kwargs["base_url"] = s.llm_base_url
    return ChatAnthropic(**kwargs)  # by alias: the field names differ from the arguments


PROVIDERS: dict[str, Callable[[Settings], BaseChatModel]] = {
    "openai": _openai,
    "anthropic": _anthropic,
}


def make_chat_model(settings: Settings) -> BaseChatModel:
    provider = settings.provider
    if provider is None:
        raise ConfigError("no model configured", hint="set NOVA_LLM_MODEL=provider:model")
    builder = PROVIDERS.get(provider)
    if builder is None:
        raise ConfigError(f"unknown model provider {provider!r} in NOVA_LLM_MODEL",
                          hint=f"use one of: {', '.join(sorted(PROVIDERS))} "
                               "(any OpenAI-compatible server: openai:<model> + "
                               "NOVA_LLM_BASE_URL)")
    return builder(settings)


async def aclose_model(model: BaseChatModel) -> None:
    """Close the HTTP client a builder opened for ``model``, if any."""
    client = getattr(model, "http_async_client", None)
    if client is not None:
        await client.aclose()


def provider_errors() -> tuple[type[BaseException], ...]:
    """Exception classes of the installed provider SDKs (imported lazily)."""
    errors: list[type[BaseException]] = []
    try:
        import openai

        errors.append(openai.APIError)
    except ImportError:  # pragma: no cover - a dependency
        pass
    try:
        import anthropic

        errors.append(anthropic.APIError)
    except ImportError:  # the anthropic extra is not installed
        pass
    return tuple(errors)


def model_error(exc: BaseException, settings: Settings, *, attempts: int = 1,
                seconds: float | None = None) -> ModelError:
    """A one-line, secret-free ``ModelError`` for a provider exception; after several
    ``attempts`` it says how many and the real time they took (``seconds``)."""
    where = settings.llm_base_url or settings.provider or "model"
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    spent = f", {seconds:.1f}s in all" if seconds is not None else ""
    if "Timeout" in name:
        text = f"model endpoint {where} timed out after {settings.llm_timeout:g}s"
        if attempts > 1:
            text += f" (each of {attempts} attempts{spent})"
    elif "Connection" in name:
        text = f"model endpoint {where} is unreachable ({_cause(exc)})"
    elif status == 401 or status == 403:
        text = f"model endpoint {where} refused the credentials (HTTP {status}); check " \
               "NOVA_LLM_API_KEY"
    elif status == 404:
        text = f"model {settings.model_name!r} not found at {where} (HTTP 404)"
    elif status is not None:
        text = f"model endpoint {where} answered HTTP {status}: {_short(exc)}"
    else:
        text = f"model call failed: {name}: {_short(exc)}"
    if attempts > 1 and "Timeout" not in name:
        text += f" (after {attempts} attempts{spent})"
    return ModelError(redact(text))


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ or exc.__context__
    return _short(inner) if inner is not None else "connection failed"


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return redact(text[:200])
