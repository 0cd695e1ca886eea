"""The configured model, then the NOVA_LLM_FALLBACK models, tried in order.

When a call to the current model fails for good (after its retries) the next model is asked
the same call, and it answers **for the rest of the run**, not just that call: a review's
batches and turns are one conversation, and a model that just failed five times would
otherwise cost every later call the same retries and timeouts before the fallback is asked.

What moves on: 5xx, 429 and timeouts after the retries, connection errors, a model the
server does not have (404), other refusals (4xx), and answers that are no chat completion.
What does not: a refused key (401/403), a misconfiguration every run would hit and that a
fallback would only hide. Each switch is an event and a note of the run's result, naming
the model that failed, why, and the one that answers from then on.

A fallback of the same provider keeps NOVA_LLM_BASE_URL and the key; one of another
provider gets that provider's own key variable and its defaults (``fallback_settings``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from bot.errors import ModelError
from bot.events import ErrorEvent, EventBus
from bot.llm.factory import (
    aclose_model,
    check_model,
    make_chat_model,
    model_error,
    provider_errors,
    status_of,
)
from bot.llm.settings import LLMSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["ModelChain", "check_models", "fallback_settings", "falls_back"]

T = TypeVar("T")


def fallback_settings(settings: LLMSettings, model: str) -> LLMSettings:
    """``settings`` for the fallback ``model`` (``provider:model``)."""
    other = replace(settings, model=model)
    if other.provider == settings.provider:
        return other
    return replace(other, base_url=None, api_key=settings.fallback_keys.get(other.provider or ""))


def check_models(settings: LLMSettings) -> None:
    """The ConfigError (missing extra or key) of the model or any fallback, before a run
    fetches or analyzes anything; nothing is imported or built."""
    for s in (settings, *(fallback_settings(settings, m) for m in settings.fallback)):
        check_model(s)


def falls_back(exc: BaseException) -> bool:
    """Whether a failed call (a ``ModelError`` or the SDK's error) should try the next model."""
    cause = exc.__cause__ if isinstance(exc, ModelError) and exc.__cause__ else exc
    return status_of(cause) not in (401, 403)


class ModelChain:
    """The models of one run; ``model`` and ``settings`` are the one answering now.

    Every model is built at once, so a missing extra or key of a fallback is a ConfigError
    before the first request, not in the middle of a run."""

    def __init__(
        self,
        settings: LLMSettings,
        bus: EventBus | None = None,
        *,
        build: Callable[[LLMSettings], BaseChatModel] = make_chat_model,
    ) -> None:
        self._settings = [
            settings,
            *(fallback_settings(settings, m) for m in settings.fallback),
        ]
        self._models = [build(s) for s in self._settings]
        self._index = 0
        self._bus = bus
        self.notes: list[str] = []
        # told of each switch, to bind the new model the way the old one was (tools, format)
        self.on_switch: Callable[[BaseChatModel, LLMSettings], None] | None = None

    @property
    def model(self) -> BaseChatModel:
        return self._models[self._index]

    @property
    def settings(self) -> LLMSettings:
        return self._settings[self._index]

    @property
    def answered_by(self) -> str:
        return self.settings.model or ""

    async def call(self, ask: Callable[[LLMSettings], Awaitable[T]]) -> T:
        """``await ask(settings)`` with the current model; on a failure that falls back, the
        next model takes over and is asked the same."""
        while True:
            index = self._index
            try:
                return await ask(self._settings[index])
            except ModelError as exc:
                if not self._switch(index, exc, str(exc)):
                    raise
            except provider_errors() as exc:  # a model called without Nova's retry loop
                if not self._switch(index, exc, str(model_error(exc, self._settings[index]))):
                    raise

    def _switch(self, index: int, exc: BaseException, why: str) -> bool:
        if index != self._index:
            return True  # a concurrent call already moved on: ask the current model
        if index + 1 >= len(self._models) or not falls_back(exc):
            return False
        failed = self._settings[index].model
        self._index = index + 1
        note = f"model {failed} failed ({why}); {self.answered_by} answered from then on"
        self.notes.append(note)
        if self._bus is not None:
            self._bus.emit(ErrorEvent(error=note, recoverable=True))
        if self.on_switch is not None:
            self.on_switch(self.model, self.settings)
        return True

    async def aclose(self) -> None:
        for model in self._models:
            await aclose_model(model)
