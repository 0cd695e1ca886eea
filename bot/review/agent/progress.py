"""Run-wide state of the review batches: what the analyzers found so far, the progress line,
and a scrubber shared by the thread that prepares prompts and the loop."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future

from bot.analyzers.secrets import Scrubber
from bot.change import Comment
from bot.events import ErrorEvent, EventBus, TextEvent
from bot.llm.usage import Stats

__all__ = ["Guarded", "Known", "Progress"]


class Known:
    """What the analyzers found so far: ``findings`` now, ``later`` once it is done."""

    def __init__(self, findings: Sequence[Comment], later: Future[list[Comment]] | None) -> None:
        self.findings = list(findings)
        self.later = later

    def now(self) -> list[Comment]:
        later = self.later
        if later is None or not later.done() or later.cancelled() or later.exception():
            return self.findings
        return self.findings + later.result()


class Progress:
    """The progress line of the batches: done / in flight / queued, and tokens so far."""

    def __init__(self, count: int, stats: Stats, bus: EventBus) -> None:
        self.count, self.stats, self.bus = count, stats, bus
        self.running = self.done = 0

    def started(self) -> None:
        self.running += 1

    def finished(self, what: str, failed: bool = False) -> None:
        self.running -= 1
        self.done += 1
        tokens = self.stats.prompt_tokens + self.stats.completion_tokens
        line = (
            f"{what} · {self.done}/{self.count} batches done, {self.running} in flight, "
            f"{self.count - self.done - self.running} queued · {tokens:,} tokens"
        )
        self.bus.emit(
            ErrorEvent(error=line, recoverable=False) if failed else TextEvent(content=line)
        )


class Guarded:
    """A ``Scrubber`` used from two threads: one at a time (its placeholders are shared)."""

    def __init__(self, scrubber: Scrubber) -> None:
        self._scrubber = scrubber
        self._lock = threading.Lock()

    def scrub(self, text: str) -> str:
        with self._lock:
            return self._scrubber.scrub(text)

    def restore(self, text: str) -> str:
        with self._lock:
            return self._scrubber.restore(text)
