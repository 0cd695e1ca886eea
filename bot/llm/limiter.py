"""How many model requests a run has in flight: one limiter shared by every batch and retry.

Up to ``limit`` requests run at once (NOVA_MAX_CONCURRENCY). When the provider pushes back
(HTTP 429, a ``Retry-After``, a refused connection) the limiter halves how many it lets run
and starts no request until the server's wait has passed; each answered request lets one
more run again, up to the limit. Waiting requests are served in order, a batch's follow-up
turn (after a tool call, a repair) before the first turn of a batch not started yet, so
started batches finish (and stream their findings) first.

Everything runs on one event loop (``bot.llm.loop``): no locks.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["FIRST_TURN", "FOLLOW_UP", "Limiter"]

FOLLOW_UP = 0
FIRST_TURN = 1


class Limiter:
    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.allowed = self.limit  # shrinks on push-back, grows back on success
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests that were ever in flight at once
        self.backoffs = 0
        self._resume_at = 0.0  # loop time before which no request starts
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    @asynccontextmanager
    async def slot(self, priority: int = FIRST_TURN) -> AsyncIterator[None]:
        """Hold one request slot for the body of the ``async with``."""
        await self._acquire(priority)
        try:
            yield
        finally:
            self.in_flight -= 1
            self._wake()

    async def _acquire(self, priority: int) -> None:
        loop = asyncio.get_running_loop()
        if not self._waiters and self._free() and loop.time() >= self._resume_at:
            self._take()
            return
        self._seq += 1
        waiter: asyncio.Future[None] = loop.create_future()
        entry = (priority, self._seq, waiter)
        heapq.heappush(self._waiters, entry)
        self._wake()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # the slot was handed over: give back
                self.in_flight -= 1
                self._wake()
            elif entry in self._waiters:
                self._waiters.remove(entry)
                heapq.heapify(self._waiters)
            raise

    def _free(self) -> bool:
        return self.in_flight < self.allowed

    def _take(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _wake(self) -> None:
        loop = asyncio.get_running_loop()
        wait = self._resume_at - loop.time()
        if wait > 0:
            if self._timer is None:
                self._timer = loop.call_later(wait, self._resume)
            return
        while self._waiters and self._free():
            _, _, waiter = heapq.heappop(self._waiters)
            if waiter.done():  # cancelled while queued
                continue
            self._take()
            waiter.set_result(None)

    def _resume(self) -> None:
        self._timer = None
        self._wake()

    def succeeded(self) -> None:
        """An answered request: one more may run (up to the limit)."""
        if self.allowed < self.limit:
            self.allowed += 1
            self._wake()

    def back_off(self, seconds: float) -> None:
        """The provider pushed back: halve the requests allowed in flight, and start none
        for ``seconds`` (its ``Retry-After``, or the retry's backoff)."""
        self.backoffs += 1
        loop = asyncio.get_running_loop()
        if loop.time() >= self._resume_at:  # one burst of refusals halves once
            self.allowed = max(1, self.allowed // 2)
        resume_at = loop.time() + max(0.0, seconds)
        if resume_at > self._resume_at:
            self._resume_at = resume_at
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self._wake()
