"""One long-lived event loop (in a daemon thread) for every agent run of the process.

langchain-openai and langchain-anthropic cache their async HTTP clients per base URL; a
client is bound to the loop it first ran on. With ``asyncio.run`` per review, the second
review in one process (the MCP server, the test suite) reuses a client of a closed loop and
fails with "Event loop is closed". Running all agent coroutines on one loop avoids that for
every provider without reaching into their internals.

``preload`` imports the agent's libraries (langchain, langgraph, the provider's client:
about 2 s) in a background thread while the change is fetched and rendered, so the review
step does not pay for them; ``preloaded`` waits for that before the review imports them.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["preload", "preloaded", "run_coroutine"]

T = TypeVar("T")
_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()
_preloading: threading.Thread | None = None
_PROVIDER_MODULES = {
    "openai": ("openai", "langchain_openai"),
    "anthropic": ("anthropic", "langchain_anthropic"),
}


def _get_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="nova-agent-loop", daemon=True).start()
        return _loop


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the shared loop and wait for its result (from any thread)."""
    return asyncio.run_coroutine_threadsafe(coro, _get_loop()).result()


def preload(provider: str | None) -> None:
    """Start importing the review agent and ``provider``'s client in the background. A
    missing library is left for the review step to report."""
    global _preloading
    names = (
        "langchain_core.messages",
        "langgraph.graph",
        "langgraph.errors",
        *_PROVIDER_MODULES.get(provider or "", ()),
        "bot.agent.graph",
        "bot.review.agent.graph",
    )

    def load() -> None:
        for name in names:
            try:
                importlib.import_module(name)
            except ImportError:
                return

    with _lock:
        if _preloading is None:
            _preloading = threading.Thread(target=load, name="nova-preload", daemon=True)
            _preloading.start()


def preloaded() -> None:
    """Wait until a started ``preload`` is done (imports of one module never race)."""
    if _preloading is not None:
        _preloading.join()
