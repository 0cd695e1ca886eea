"""``with tracker.step("fetch-change"):`` opens a step and always closes it.

A step ends ``completed``, ``failed`` (with the error's message) or ``skipped`` (the body
called ``step.skip(reason)``). Each transition becomes a ``StepEvent`` on the bus and is
passed to an optional backend (the Task Manager: ``bot.taskmanager.backend``); a backend
failure never fails the job.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from bot.errors import redact
from bot.events import EventBus, StepEvent

__all__ = ["Step", "StepBackend", "StepTracker"]


class StepBackend(Protocol):
    def start_session(self, session_id: str, worktree_path: str | None) -> None:
        """Register the run on its execution."""

    def open_step(self, name: str, message: str) -> str | None:
        """Create the step remotely; return its id, or None when that failed."""

    def close_step(self, step_id: str, status: str, message: str) -> None:
        """Set the final status."""


class Step:
    def __init__(self, name: str) -> None:
        self.name = name
        self.message = ""
        self.status = "running"
        self.skip_reason: str | None = None

    def skip(self, reason: str) -> None:
        self.skip_reason = reason

    def note(self, message: str) -> None:
        self.message = message


class StepTracker:
    def __init__(self, bus: EventBus, backend: StepBackend | None = None) -> None:
        self.bus = bus
        self.backend = backend
        self.steps: list[Step] = []

    def start(self, session_id: str, worktree_path: str | None) -> None:
        if self.backend is not None:
            self.backend.start_session(session_id, worktree_path)

    def close(self) -> None:
        closer = getattr(self.backend, "close", None)
        if closer is not None:
            closer()

    @contextmanager
    def step(self, name: str, message: str = "") -> Iterator[Step]:
        step = Step(name)
        self.steps.append(step)
        self.bus.emit(StepEvent(step_name=name, status="running", message=message))
        step_id = self.backend.open_step(name, message) if self.backend else None
        try:
            yield step
        except BaseException as exc:
            step.status, step.message = "failed", redact(str(exc)) or type(exc).__name__
            self._close(step, step_id)
            raise
        if step.skip_reason is not None:
            step.status, step.message = "skipped", step.skip_reason
        else:
            step.status = "completed"
        self._close(step, step_id)

    def _close(self, step: Step, step_id: str | None) -> None:
        self.bus.emit(StepEvent(step_name=step.name, status=step.status, message=step.message))
        if self.backend is not None and step_id is not None:
            self.backend.close_step(step_id, step.status, step.message)
