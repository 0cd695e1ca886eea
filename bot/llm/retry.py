"""Model calls with Nova's own retries: each retry is reported (the progress line shows it)
and the final error says how many attempts were made and how long they took in all.

The SDKs retry silently inside ``ainvoke``; a hung endpoint then looked like a frozen job
for ``timeout × attempts``. Here the chat model is built with ``max_retries=0`` and this loop
retries what the SDKs would (timeouts, connection errors, 408/409/429, 5xx), honouring the
server's ``retry-after``. A 200 answer whose body is not JSON (or not UTF-8, or not a chat
completion) is mapped to a ``ModelError`` at this edge, like any other failure of the
endpoint; it is not retried.

With a ``Limiter`` (one per run, shared by every batch) each attempt holds a request slot;
a 429 or a connection error makes every batch back off together (``bot.llm.limiter``).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot.errors import ModelError, redact
from bot.llm.factory import model_error, provider_errors, status_of
from bot.llm.limiter import FIRST_TURN, FOLLOW_UP, Limiter
from bot.llm.settings import LLMSettings

__all__ = ["body_error", "call_with_retries", "is_retryable", "is_throttled", "retry_delay"]

T = TypeVar("T")

MAX_DELAY = 30.0


def is_retryable(exc: BaseException) -> bool:
    name = type(exc).__name__
    status = status_of(exc)  # each SDK keeps it elsewhere (httpx, botocore, google)
    if "Timeout" in name or "Connection" in name:
        return True
    return isinstance(status, int) and (status in (408, 409, 429) or status >= 500)


def is_throttled(exc: BaseException) -> bool:
    """The provider pushes back on load: HTTP 429 (rate limit) or a refused connection."""
    return getattr(exc, "status_code", None) == 429 or "Connection" in type(exc).__name__


def retry_delay(exc: BaseException, attempt: int) -> float:
    """The server's ``retry-after`` (capped), else exponential backoff with jitter."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        try:
            wanted = float(value) * scale if value is not None else -1.0
        except ValueError:
            continue
        if wanted >= 0:
            return min(wanted, MAX_DELAY)
    return min(8.0, 0.5 * 2.0 ** (attempt - 1)) * (0.75 + random.random() / 4)  # noqa: S311


def _what_failed(exc: BaseException, settings: LLMSettings) -> str:
    name = type(exc).__name__
    if "Timeout" in name:
        return f"no answer within {settings.timeout:g}s"
    if "Connection" in name:
        return "connection failed"
    status = status_of(exc)
    return f"HTTP {status}" if status is not None else name


def body_error(exc: ValueError | TypeError, settings: LLMSettings) -> ModelError:
    """A 200 answer the SDK could not read: not UTF-8, not JSON (cut short), or JSON that is
    no chat completion (the SDKs raise ``TypeError`` / ``ValueError`` for those)."""
    where = settings.base_url or settings.provider or "model"
    if isinstance(exc, UnicodeDecodeError):
        kind = "a body that is not UTF-8"
    elif isinstance(exc, json.JSONDecodeError):
        kind = "a body that is not valid JSON (cut short?)"
    else:
        kind = "something that is not a chat completion"
    detail = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
    return ModelError(redact(f"model endpoint {where} answered {kind}: {detail}"))


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    settings: LLMSettings,
    on_retry: Callable[[str], None],
    limiter: Limiter | None = None,
    priority: int = FIRST_TURN,
) -> T:
    """``await call()`` (one model request), retried up to ``settings.max_retries``
    times; ``on_retry`` is told of each retry. With ``limiter``, each attempt holds one of
    its slots, and push-back slows every batch down (a retry waits as a follow-up turn)."""
    attempts = settings.max_retries + 1
    started = time.monotonic()
    for attempt in range(1, attempts + 1):
        try:
            if limiter is None:
                return await call()
            async with limiter.slot(priority if attempt == 1 else FOLLOW_UP):
                answer = await call()
            limiter.succeeded()
            return answer
        except provider_errors() as exc:
            if attempt == attempts or not is_retryable(exc):
                raise _final_error(
                    exc, settings, attempt, time.monotonic() - started, limiter
                ) from exc
            delay = retry_delay(exc, attempt)
            if limiter is not None and is_throttled(exc):
                limiter.back_off(delay)
            on_retry(
                f"model request failed ({_what_failed(exc, settings)}), attempt "
                f"{attempt} of {attempts}; retrying in {delay:.1f}s"
            )
            await asyncio.sleep(delay)
        except (ValueError, TypeError) as exc:  # only the SDK runs here: its reading failed
            raise body_error(exc, settings) from exc
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _final_error(
    exc: BaseException,
    settings: LLMSettings,
    attempts: int,
    seconds: float,
    limiter: Limiter | None,
) -> ModelError:
    """The provider's error; a rate limit that outlasted the retries says what to change."""
    error = model_error(exc, settings, attempts=attempts, seconds=seconds)
    if getattr(exc, "status_code", None) != 429:
        return error
    limit = limiter.limit if limiter is not None else settings.max_concurrency
    return ModelError(
        f"{error}: the provider's rate limit held after every retry; lower "
        f"NOVA_MAX_CONCURRENCY (now {limit}) or raise NOVA_LLM_MAX_RETRIES"
    )
