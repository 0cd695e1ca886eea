"""Whether a requests-based call timed out: a write that timed out may still have landed, so
every host reads back instead of posting again (the trust rules in ``bot.hosts.base``). And how
long a host may make Nova wait: ``Retry-After`` in either of its forms (RFC 9110: seconds or
an HTTP date; proxies send dates), or a reset time, capped at ``MAX_WAIT`` seconds."""

from __future__ import annotations

import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

__all__ = ["MAX_WAIT", "requested_wait", "timed_out", "too_long_to_wait"]

MAX_WAIT = 120.0  # seconds one request may wait for a rate limit, on every host


def requested_wait(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks Nova to wait before trying again: ``Retry-After`` as seconds
    or an HTTP date, else ``RateLimit-Reset`` (GitLab: epoch seconds). None when it says
    nothing usable; never negative."""
    now = time.time() if now is None else now
    retry_after = _header(headers, "Retry-After")
    if retry_after is not None:
        return _parse_retry_after(retry_after, now)
    reset = _header(headers, "RateLimit-Reset")
    if reset is not None and _digits(reset):
        return max(0.0, int(reset[:12]) - now)
    return None


def too_long_to_wait(wait: float) -> str:
    """The one line a wait over ``MAX_WAIT`` ends with (Nova does not sleep it out)."""
    return (
        f"rate limited: asked to wait {wait:,.0f} s; Nova waits at most {MAX_WAIT:.0f} s "
        "per request, try again later"
    )


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name.lower():
            return str(value).strip()
    return None


def _digits(value: str) -> bool:
    return value.isascii() and value.isdigit()


def _parse_retry_after(value: str, now: float) -> float | None:
    if _digits(value):
        return float(int(value[:12]))  # a huge number is huge, never an OverflowError
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        return None
    return max(0.0, when.timestamp() - now)


def timed_out(exc: BaseException) -> bool:
    """requests reports a read timeout after retries as a ConnectionError around it."""
    import requests
    from urllib3.exceptions import ReadTimeoutError

    if isinstance(exc, requests.Timeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, ReadTimeoutError | TimeoutError)
