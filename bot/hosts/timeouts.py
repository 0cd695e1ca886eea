"""Whether a requests-based call timed out: a write that timed out may still have landed, so
every host reads back instead of posting again (the trust rules in ``bot.hosts.base``)."""

from __future__ import annotations

__all__ = ["timed_out"]


def timed_out(exc: BaseException) -> bool:
    """requests reports a read timeout after retries as a ConnectionError around it."""
    import requests
    from urllib3.exceptions import ReadTimeoutError

    if isinstance(exc, requests.Timeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, ReadTimeoutError | TimeoutError)
