"""``with tracker.step("fetch-change"):`` opens a step and always closes it.

A step ends ``completed``, ``failed`` (with the error's message) or ``skipped`` (the body
called ``step.skip(reason)``). Each transition becomes a ``StepEvent`` on the bus and is
passed to an optional backend (the Task Manager); a backend failure never fails the job.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from bot.config import Settings
from bot.errors import redact
from bot.events import ErrorEvent, EventBus, StepEvent
from bot.taskmanager.client import Envelope, TaskManagerClientBase

__all__ = ["Step", "StepBackend", "StepTracker", "TaskManagerBackend", "tracker_for"]

log = logging.getLogger(__name__)


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


class TaskManagerBackend:
    """Mirrors steps to the Task Manager. The first failure (down, slow, 5xx) is reported
    once as a warning event and turns the backend off for the rest of the run, so an outage
    never fails the job and costs it at most one request timeout."""

    def __init__(self, client: TaskManagerClientBase, execution_id: str, bus: EventBus) -> None:
        self.client = client
        self.execution_id = execution_id
        self.bus = bus
        self.disabled = False

    def _check(self, what: str, result: Envelope) -> Envelope | None:
        if result.get("success"):
            return result
        if not self.disabled:
            self.disabled = True
            detail = result.get("error", "unknown error")
            if result.get("status_code"):
                detail += f" (HTTP {result['status_code']})"
            text = f"Task Manager: {what} failed: {detail}; continuing without step sync"
            log.warning(text)
            self.bus.emit(ErrorEvent(error=redact(text), recoverable=True))
        return None

    def start_session(self, session_id: str, worktree_path: str | None) -> None:
        if not self.disabled:
            self._check("registering the session", self.client.patch_execution(
                self.execution_id, session_id=session_id, worktree_path=worktree_path))

    def open_step(self, name: str, message: str) -> str | None:
        if self.disabled:
            return None
        result = self._check(f"creating step {name!r}", self.client.create_step(
            self.execution_id, name, message or None, "running"))
        return str(result["data"]["step_id"]) if result else None

    def close_step(self, step_id: str, status: str, message: str) -> None:
        if not self.disabled:
            self._check("closing a step", self.client.patch_step(
                self.execution_id, step_id, status=status, message=message or status))

    def close(self) -> None:
        self.client.close()


def tracker_for(settings: Settings, bus: EventBus) -> StepTracker:
    """A tracker that mirrors to the Task Manager when an execution and a service (or the
    mock) are configured; otherwise steps are only events."""
    if not settings.execution_id or not (settings.task_manager_url or settings.use_mock_client):
        return StepTracker(bus)
    from bot.taskmanager.client import create_task_manager_client

    client = create_task_manager_client(settings, retry_timeouts=False)
    return StepTracker(bus, TaskManagerBackend(client, settings.execution_id, bus))
