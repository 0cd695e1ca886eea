"""Build a LangChain chat model from ``LLMSettings``; map provider errors to ``ModelError``.

Every provider goes through LangChain's ``init_chat_model`` with the arguments its entry in
``bot.llm.providers.PROVIDERS`` makes from the settings. Heavy imports happen inside the
functions, never at module import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bot.errors import ConfigError, ModelError, redact
from bot.extras import missing, require_extra
from bot.llm.providers import LANGCHAIN_ONLY, PROVIDERS, common_options
from bot.llm.settings import LLMSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = [
    "PROVIDERS",
    "aclose_model",
    "check_model",
    "estimate_tokens",
    "make_chat_model",
    "model_error",
    "provider_errors",
    "status_of",
]


def estimate_tokens(text: str) -> int:
    """About four characters per token: offline (no tokenizer download), good for budgets."""
    return len(text) // 4 + 1


def check_model(settings: LLMSettings) -> None:
    """Raise the ``ConfigError`` ``make_chat_model`` would (a missing integration package or
    key), without importing or building anything."""
    _plan(settings)


def _plan(settings: LLMSettings) -> tuple[str, Callable[[LLMSettings], dict[str, Any]]]:
    """``init_chat_model``'s provider name and the options function for ``settings``."""
    provider = settings.provider
    if provider is None:
        raise ConfigError("no model configured", hint="set NOVA_LLM_MODEL=provider:model")
    spec = PROVIDERS.get(provider)
    feature = f"NOVA_LLM_MODEL={provider}:..."
    if spec is not None:
        require_extra(spec.extra, feature, spec.module)
        if spec.key_required and not settings.api_key:
            names = " or ".join(("NOVA_LLM_API_KEY", *spec.key_envs))
            raise ConfigError(
                f"NOVA_LLM_MODEL uses {spec.title} but no key is set", hint=f"set {names}"
            )
        return spec.lc_name or provider, spec.options
    if provider in LANGCHAIN_ONLY:
        module = LANGCHAIN_ONLY[provider]
        if missing(module):
            package = module.replace("_", "-")
            raise ConfigError(
                f"{feature} needs {module}, not installed in this Python: pip install {package}"
            )
        return provider, common_options
    raise ConfigError(
        f"unknown model provider {provider!r} in NOVA_LLM_MODEL",
        hint=f"use one of: {', '.join(sorted(PROVIDERS))} "
        "(any OpenAI-compatible server: openai:<model> + "
        "NOVA_LLM_BASE_URL)",
    )


def make_chat_model(settings: LLMSettings) -> BaseChatModel:
    """The chat model of ``settings.model``, built by LangChain's ``init_chat_model``;
    a missing integration package or key is a one-line ``ConfigError`` (exit 2)."""
    lc_name, options_of = _plan(settings)
    options = options_of(settings)
    provider, model = settings.provider, settings.model_name or ""
    from langchain.chat_models import init_chat_model

    try:
        chat: BaseChatModel = init_chat_model(model, model_provider=lc_name, **options)
    except ValueError as exc:  # the class's own validation: no region, no credentials, …
        raise ConfigError(
            f"NOVA_LLM_MODEL={provider}:...: the model cannot be set up: {_validation_message(exc)}"
        ) from exc
    return chat


def _validation_message(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)  # pydantic's ValidationError: the first message
    if callable(errors):
        try:
            first = errors()[0]
            return redact(str(first.get("msg", exc)).removeprefix("Value error, ")[:300])
        except (IndexError, TypeError, AttributeError):
            pass
    return _short(exc)


async def aclose_model(model: BaseChatModel) -> None:
    """Close the HTTP client a builder opened for ``model``, if any (OpenAI's, which we
    pass in; Ollama's async client, which ChatOllama opens itself)."""
    client = getattr(model, "http_async_client", None)
    if client is not None:
        await client.aclose()
    ollama_client = getattr(model, "_async_client", None)
    close = getattr(ollama_client, "close", None)
    if close is not None and type(ollama_client).__module__.startswith("ollama"):
        await close()


# SDK exceptions that are a failed model request, by module: ``(module, class)``. A module
# that is not loaded cannot have raised anything, so only loaded ones are looked at (no heavy
# import just to name an exception class).
_SDK_ERRORS = (
    ("openai", "APIError"),
    ("anthropic", "APIError"),
    ("ollama", "ResponseError"),
    ("ollama", "RequestError"),
    ("groq", "APIError"),
    ("botocore.exceptions", "ClientError"),
    ("botocore.exceptions", "BotoCoreError"),
    ("google.api_core.exceptions", "GoogleAPIError"),
    ("google.genai.errors", "APIError"),
    ("langchain_google_genai.chat_models", "ChatGoogleGenerativeAIError"),
)


def provider_errors() -> tuple[type[BaseException], ...]:
    """Exception classes of the provider SDKs in use, plus httpx's (Ollama and Mistral talk
    through httpx) and ``ConnectionError`` (the Ollama client's "cannot connect")."""
    import sys

    import httpx

    try:
        import openai  # noqa: F401 - the default provider: loaded so its errors are named
    except ImportError:  # the openai extra is not installed
        pass
    errors: list[type[BaseException]] = [httpx.HTTPError, ConnectionError]
    for module, name in _SDK_ERRORS:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            errors.append(cls)
    return tuple(errors)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a provider error, whichever SDK raised it."""
    for value in (
        getattr(exc, "status_code", None),
        getattr(exc, "code", None),
        getattr(getattr(exc, "response", None), "status_code", None),
    ):
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
            return value
    response = getattr(exc, "response", None)
    if isinstance(response, dict):  # botocore's ClientError
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return status if isinstance(status, int) else None
    return None


def model_error(
    exc: BaseException, settings: LLMSettings, *, attempts: int = 1, seconds: float | None = None
) -> ModelError:
    """A one-line, secret-free ``ModelError`` for a provider exception; after several
    ``attempts`` it says how many and the real time they took (``seconds``)."""
    where = settings.base_url or settings.provider or "model"
    status = status_of(exc)
    name = type(exc).__name__
    spent = f", {seconds:.1f}s in all" if seconds is not None else ""
    if "Timeout" in name:
        text = f"model endpoint {where} timed out after {settings.timeout:g}s"
        if attempts > 1:
            text += f" (each of {attempts} attempts{spent})"
    elif "Connection" in name:
        text = f"model endpoint {where} is unreachable ({_cause(exc)})"
    elif status == 401 or status == 403:
        text = (
            f"model endpoint {where} refused the credentials (HTTP {status}); check "
            "NOVA_LLM_API_KEY"
        )
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
