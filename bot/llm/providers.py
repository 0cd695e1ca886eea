"""The model providers Nova knows: which pip extra brings each one, where its key comes from,
and the arguments LangChain's ``init_chat_model`` gets for it from ``LLMSettings``.

Every provider is built the same way (``bot.llm.factory.make_chat_model``); a provider
LangChain knows but this table does not (cohere, deepseek, xai, …) still works when its
integration package is installed, with the common arguments only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr

from bot.errors import ConfigError
from bot.llm.settings import LLMSettings

__all__ = [
    "LANGCHAIN_ONLY",
    "PLACEHOLDER_KEY",
    "PROVIDERS",
    "Provider",
    "common_options",
    "key_envs",
    "known_provider",
]

# An OpenAI-compatible server without auth still needs *some* key in the client.
PLACEHOLDER_KEY = "nova-no-key"

Options = Callable[[LLMSettings], dict[str, Any]]


def common_options(s: LLMSettings) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"timeout": s.timeout, "max_retries": s.max_retries}
    if s.api_key:
        kwargs["api_key"] = SecretStr(s.api_key)
    if s.base_url:
        kwargs["base_url"] = s.base_url
    return kwargs


def _openai(s: LLMSettings) -> dict[str, Any]:
    import openai

    key = s.api_key
    if not key:
        if not s.base_url:
            raise ConfigError(
                "NOVA_LLM_MODEL uses OpenAI but no key is set",
                hint="set NOVA_LLM_API_KEY or OPENAI_API_KEY, or NOVA_LLM_BASE_URL "
                "for a local OpenAI-compatible server",
            )
        key = PLACEHOLDER_KEY
    # Our own async client, closed by ``aclose_model`` when the run ends (the default one is
    # cached per base URL and keeps idle connections for the life of the process).
    client = openai.DefaultAsyncHttpxClient(timeout=s.timeout)
    return {
        "base_url": s.base_url,
        "api_key": SecretStr(key),
        "timeout": s.timeout,
        "max_retries": s.max_retries,
        "http_async_client": client,
        "http_socket_options": (),
    }


def _azure_openai(s: LLMSettings) -> dict[str, Any]:
    import openai

    # The endpoint and API version come from AZURE_OPENAI_ENDPOINT / OPENAI_API_VERSION when
    # NOVA_LLM_BASE_URL does not name the endpoint; the model name is the deployment.
    kwargs: dict[str, Any] = {
        "azure_deployment": s.model_name,
        "timeout": s.timeout,
        "max_retries": s.max_retries,
        "http_async_client": openai.DefaultAsyncHttpxClient(timeout=s.timeout),
    }
    if s.api_key:
        kwargs["api_key"] = SecretStr(s.api_key)
    if s.base_url:
        kwargs["azure_endpoint"] = s.base_url
    return kwargs


def _anthropic(s: LLMSettings) -> dict[str, Any]:
    return common_options(s) | {"max_tokens": 4096}


def _ollama(s: LLMSettings) -> dict[str, Any]:
    # ChatOllama has no retries of its own (Nova's retry loop does them) and takes httpx
    # arguments for its clients; the host defaults to OLLAMA_HOST, then localhost:11434.
    client: dict[str, Any] = {"timeout": s.timeout}
    if s.api_key:  # Ollama's hosted API and authenticating proxies
        client["headers"] = {"Authorization": f"Bearer {s.api_key}"}
    kwargs: dict[str, Any] = {"client_kwargs": client}
    if s.base_url:
        kwargs["base_url"] = s.base_url
    return kwargs


def _bedrock(s: LLMSettings) -> dict[str, Any]:
    from botocore.config import Config

    # Credentials and region: the AWS chain (AWS_* variables, profiles, instance roles).
    config = Config(
        connect_timeout=min(s.timeout, 30.0),
        read_timeout=s.timeout,
        retries={"total_max_attempts": s.max_retries + 1, "mode": "standard"},
    )
    kwargs: dict[str, Any] = {"config": config}
    if s.base_url:
        kwargs["endpoint_url"] = s.base_url
    return kwargs


def _google_genai(s: LLMSettings) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"timeout": s.timeout, "max_retries": s.max_retries}
    if s.api_key:
        kwargs["google_api_key"] = SecretStr(s.api_key)
    return kwargs


def _vertexai(s: LLMSettings) -> dict[str, Any]:
    # Google's own client for Vertex AI too (langchain-google-vertexai's ChatVertexAI is
    # deprecated for it, and google-cloud-aiplatform is large): application default
    # credentials, project and location from GOOGLE_CLOUD_PROJECT / GOOGLE_CLOUD_LOCATION.
    return _google_genai(s) | {"vertexai": True}


def _mistral(s: LLMSettings) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"timeout": int(s.timeout), "max_retries": s.max_retries}
    if s.api_key:
        kwargs["api_key"] = SecretStr(s.api_key)
    if s.base_url:
        kwargs["endpoint"] = s.base_url
    return kwargs


@dataclass(frozen=True)
class Provider:
    """One provider: ``init_chat_model(model, model_provider=lc_name, **options(settings))``."""

    title: str
    module: str  # the integration package's top-level module
    extra: str  # pip install "nova-bot[extra]"
    options: Options = common_options
    key_envs: tuple[str, ...] = ()  # where its key comes from besides NOVA_LLM_API_KEY
    key_required: bool = False  # no key: a ConfigError before any request
    lc_name: str = ""  # init_chat_model's name, when it differs from Nova's
    env_help: str = ""  # what else it reads from the environment (README, --help)


PROVIDERS: dict[str, Provider] = {
    "openai": Provider(
        "OpenAI",
        "langchain_openai",
        "openai",
        _openai,
        ("OPENAI_API_KEY",),
        env_help="NOVA_LLM_BASE_URL for any OpenAI-compatible server",
    ),
    "azure_openai": Provider(
        "Azure OpenAI",
        "langchain_openai",
        "openai",
        _azure_openai,
        ("AZURE_OPENAI_API_KEY",),
        key_required=True,
        env_help="AZURE_OPENAI_ENDPOINT (or NOVA_LLM_BASE_URL), "
        "OPENAI_API_VERSION; the model is the deployment",
    ),
    "anthropic": Provider(
        "Anthropic",
        "langchain_anthropic",
        "anthropic",
        _anthropic,
        ("ANTHROPIC_API_KEY",),
        key_required=True,
    ),
    "ollama": Provider(
        "Ollama",
        "langchain_ollama",
        "ollama",
        _ollama,
        env_help="NOVA_LLM_BASE_URL or OLLAMA_HOST (default http://localhost:11434)",
    ),
    "bedrock": Provider(
        "Amazon Bedrock",
        "langchain_aws",
        "bedrock",
        _bedrock,
        lc_name="bedrock_converse",
        env_help="AWS_REGION and AWS credentials (AWS_ACCESS_KEY_ID / "
        "AWS_SECRET_ACCESS_KEY, AWS_PROFILE or a role)",
    ),
    "google_genai": Provider(
        "Google Gemini API",
        "langchain_google_genai",
        "google",
        _google_genai,
        ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        key_required=True,
    ),
    "google_vertexai": Provider(
        "Google Vertex AI",
        "langchain_google_genai",
        "google",
        _vertexai,
        lc_name="google_genai",
        env_help="GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION and "
        "application default credentials "
        "(GOOGLE_APPLICATION_CREDENTIALS)",
    ),
    "mistralai": Provider(
        "Mistral AI",
        "langchain_mistralai",
        "mistral",
        _mistral,
        ("MISTRAL_API_KEY",),
        key_required=True,
    ),
    "groq": Provider(
        "Groq", "langchain_groq", "groq", key_envs=("GROQ_API_KEY",), key_required=True
    ),
}
PROVIDERS["bedrock_converse"] = PROVIDERS["bedrock"]

# Providers LangChain's ``init_chat_model`` builds that have no Nova extra: they work with
# their integration package installed (``pip install langchain-<name>``) and get the common
# arguments (timeout, retries, NOVA_LLM_API_KEY, NOVA_LLM_BASE_URL). A test keeps this list
# inside LangChain's.
LANGCHAIN_ONLY: dict[str, str] = {
    "cohere": "langchain_cohere",
    "deepseek": "langchain_deepseek",
    "fireworks": "langchain_fireworks",
    "together": "langchain_together",
    "xai": "langchain_xai",
    "perplexity": "langchain_perplexity",
    "nvidia": "langchain_nvidia_ai_endpoints",
    "openrouter": "langchain_openrouter",
    "litellm": "langchain_litellm",
    "upstage": "langchain_upstage",
}


def known_provider(name: str) -> bool:
    return name in PROVIDERS or name in LANGCHAIN_ONLY


def key_envs(provider: str | None) -> tuple[str, ...]:
    """The variables a provider's key may come from when NOVA_LLM_API_KEY is not set."""
    spec = PROVIDERS.get(provider or "")
    return spec.key_envs if spec else ()
