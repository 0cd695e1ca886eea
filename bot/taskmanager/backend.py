"""The Task Manager as a ``StepBackend``: the run's steps (``bot.steps``) mirrored to the
team's service, and ``tracker_for`` choosing it when an execution is configured."""

from __future__ import annotations

import logging

from bot.errors import redact
from bot.events import ErrorEvent, EventBus
from bot.steps import StepTracker
from bot.taskmanager.client import Envelope, TaskManagerClientBase
from bot.taskmanager.settings import TaskManagerSettings

__all__ = ["TaskManagerBackend", "tracker_for"]

log = logging.getLogger(__name__)


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
            self._check(
                "registering the session",
                self.client.patch_execution(
                    self.execution_id, session_id=session_id, worktree_path=worktree_path
                ),
            )

    def open_step(self, name: str, message: str) -> str | None:
        if self.disabled:
            return None
        result = self._check(
            f"creating step {name!r}",
            self.client.create_step(self.execution_id, name, message or None, "running"),
        )
        return str(result["data"]["step_id"]) if result else None

    def close_step(self, step_id: str, status: str, message: str) -> None:
        if not self.disabled:
            self._check(
                "closing a step",
                self.client.patch_step(
                    self.execution_id, step_id, status=status, message=message or status
                ),
            )

    def close(self) -> None:
        self.client.close()


def tracker_for(settings: TaskManagerSettings, bus: EventBus) -> StepTracker:
    """A tracker that mirrors to the Task Manager when an execution and a service (or the
    mock) are configured; otherwise steps are only events."""
    if not settings.execution_id or not (settings.url or settings.use_mock_client):
        return StepTracker(bus)
    from bot.taskmanager.client import create_task_manager_client

    client = create_task_manager_client(settings, retry_timeouts=False)
    return StepTracker(bus, TaskManagerBackend(client, settings.execution_id, bus))
