"""One long-lived event loop (in a daemon thread) for every agent run of the process.

langchain-openai and langchain-anthropic cache their async HTTP clients per base URL; a
client is bound to the loop it first ran on. With ``asyncio.run`` per review, the second
review in one process (the MCP server, the test suite) reuses a client of a closed loop and
fails with "Event loop is closed". Running all agent coroutines on one loop avoids that for
every provider without reaching into their internals.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_coroutine"]

T = TypeVar("T")
_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _get_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="nova-agent-loop",
                             daemon=True).start()
        return _loop


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the shared loop and wait for its result (from any thread)."""
    return asyncio.run_coroutine_threadsafe(coro, _get_loop()).result()
