"""The model's settings: which model, where, its key, timeouts and how many requests at once.

Both agents (review and testgen) are handed this section; nothing else of the run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Self

from bot.errors import ConfigError
from bot.sections import Section, globs, setting

__all__ = ["LLMSettings", "check_model"]


@dataclass(frozen=True)
class LLMSettings(Section):
    prefix = "llm_"

    model: str | None = setting(
        "NOVA_LLM_MODEL",
        "Model as provider:model (openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, "
        "ollama:qwen2.5-coder, bedrock:…, google_genai:…, mistralai:…, groq:…; each "
        "provider is a pip extra). Unset: the LLM review is off and only the analyzers "
        "run.",
    )
    fallback: tuple[str, ...] = setting(
        "NOVA_LLM_FALLBACK",
        "Comma-separated provider:model list tried in order when the model fails "
        "(5xx, 429 or timeouts after the retries, connection errors, other refusals; "
        "not a refused key): the next one answers for the rest of the run. One of the "
        "same provider keeps NOVA_LLM_BASE_URL and the key; another provider uses its "
        "own key variable and defaults.",
        (),
        parse=globs,
    )
    base_url: str | None = setting(
        "NOVA_LLM_BASE_URL",
        "Base URL of an OpenAI-compatible server (vLLM, Ollama, LiteLLM), e.g. "
        "http://localhost:8000/v1. Another provider: its endpoint (ollama: "
        "http://localhost:11434, azure_openai: https://NAME.openai.azure.com).",
    )
    api_key: str | None = setting(
        "NOVA_LLM_API_KEY",
        "API key of the model provider; else the provider's own variable "
        "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GROQ_API_KEY, …).",
        secret=True,
    )
    timeout: float = setting(
        "NOVA_LLM_TIMEOUT",
        "Seconds per model request.",
        120.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    max_retries: int = setting(
        "NOVA_LLM_MAX_RETRIES",
        "Retries of a failed model request (timeouts, connection errors, 429, 5xx); "
        "each retry is shown on the progress line.",
        2,
        parse=int,
        min=0,
    )
    max_concurrency: int = setting(
        "NOVA_MAX_CONCURRENCY",
        "Model requests in flight at once (every review batch shares them; fewer "
        "for a while when the provider answers 429).",
        16,
        parse=int,
        min=1,
        key="max_concurrency",
    )
    recursion_limit: int = setting(
        "NOVA_RECURSION_LIMIT",
        "Most agent steps (model turns + tool rounds) per batch before it stops.",
        24,
        parse=int,
        min=1,
        key="recursion_limit",
    )
    # keys of the NOVA_LLM_FALLBACK models' other providers, from their own variables
    fallback_keys: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def provider(self) -> str | None:
        """``provider`` of ``provider:model``; a bare name: the provider it is shaped like
        (gpt-… OpenAI, claude-… Anthropic), else OpenAI (a compatible server's model)."""
        if not self.model:
            return None
        bare = _infer_provider(self.model)
        if bare is not None or ":" not in self.model:
            return bare or "openai"
        return self.model.split(":", 1)[0]

    @property
    def model_name(self) -> str | None:
        if not self.model:
            return None
        if _infer_provider(self.model) is not None or ":" not in self.model:
            return self.model
        return self.model.split(":", 1)[1]

    def resolved(self, env: Mapping[str, str]) -> Self:
        """The model's key from its provider's own variable when NOVA_LLM_API_KEY is unset,
        and the keys of the fallback models' other providers."""
        from bot.llm.providers import key_envs

        def key_of(provider: str | None) -> str | None:
            return next((env[name] for name in key_envs(provider) if env.get(name)), None)

        llm = self
        if llm.model and not llm.api_key:
            llm = replace(llm, api_key=key_of(llm.provider))
        keys = {}
        for model in llm.fallback:
            provider = replace(llm, model=model).provider
            key = key_of(provider)
            if provider and provider != llm.provider and key:
                keys[provider] = key
        return replace(llm, fallback_keys=keys) if keys else llm


# A model named without its provider: taken as OpenAI's or Anthropic's when it is shaped like
# one of their names; anything else needs ``provider:`` (or an OpenAI-compatible server).
_BARE_MODELS = (
    ("openai", re.compile(r"(gpt-|chatgpt-|o[1-9]|text-|davinci|babbage|ft:)")),
    ("anthropic", re.compile(r"claude-")),
)
_PROVIDER = re.compile(r"[a-z][a-z0-9_.\-]*")


def _infer_provider(model: str) -> str | None:
    return next((name for name, shape in _BARE_MODELS if shape.match(model)), None)


def check_model(llm: LLMSettings, where: str) -> None:
    """Reject a malformed model name at once, before anything is fetched; ``where`` names
    the setting it came from (--model, NOVA_LLM_MODEL, NOVA_LLM_FALLBACK)."""
    model = llm.model
    if not model:
        return
    from bot.llm.providers import PROVIDERS, known_provider

    example = "e.g. openai:gpt-4o-mini or anthropic:claude-sonnet-4-5"
    malformed = f"{where}: the model {model!r} is malformed: expected provider:model ({example})"
    if any(c.isspace() for c in model):
        raise ConfigError(malformed)
    provider, sep, name = model.partition(":")
    if sep and _infer_provider(model) is None:
        if not _PROVIDER.fullmatch(provider) or not name:
            raise ConfigError(malformed)
        if not known_provider(provider):
            raise ConfigError(
                f"unknown model provider {provider!r} in {where}",
                hint=f"use one of: {', '.join(sorted(PROVIDERS))} (any "
                "OpenAI-compatible server: openai:<model> + "
                "NOVA_LLM_BASE_URL)",
            )
    elif not sep and llm.base_url is None and _infer_provider(model) is None:
        raise ConfigError(
            f"{malformed}; a name alone is taken only when it is an OpenAI (gpt-…, o1…) or "
            "Anthropic (claude-…) model, or when NOVA_LLM_BASE_URL names an OpenAI-compatible "
            "server"
        )
