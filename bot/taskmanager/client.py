"""Task Manager clients: the base contract, the in-memory mock, and the factory.

Every call returns an envelope and never raises:
``{"success": True, "message": str, "data": ...}`` or
``{"success": False, "error": str, "error_code"?: str, "status_code"?: int}``.
The error texts are the contract other agents match on; keep them exactly.
"""

from __future__ import annotations

import threading
import uuid
from abc import ABC, abstractmethod
from typing import Any

from bot.taskmanager.settings import TaskManagerSettings

__all__ = [
    "STATUSES",
    "Envelope",
    "MockTaskManagerClient",
    "TaskManagerClientBase",
    "create_task_manager_client",
    "fail",
    "ok",
    "validate_status",
]

STATUSES = ("running", "completed", "failed", "skipped")
Envelope = dict[str, Any]


def ok(data: Any, message: str) -> Envelope:
    return {"success": True, "message": message, "data": data}


def fail(error: str, *, error_code: str | None = None, status_code: int | None = None) -> Envelope:
    out: Envelope = {"success": False, "error": error}
    if error_code is not None:
        out["error_code"] = error_code
    if status_code is not None:
        out["status_code"] = status_code
    return out


def validate_status(status: str | None) -> Envelope | None:
    """The error envelope for a status outside the four, else None."""
    if status is not None and status not in STATUSES:
        return fail(
            f"Invalid status '{status}'. Must be one of: {', '.join(STATUSES)}",
            error_code="INVALID_STATUS",
        )
    return None


class TaskManagerClientBase(ABC):
    """What Nova asks of the Task Manager. Implementations validate, then talk."""

    def patch_execution(
        self, execution_id: str, session_id: str | None = None, worktree_path: str | None = None
    ) -> Envelope:
        if session_id is None and worktree_path is None:
            return fail(
                "Provide at least session_id or worktree_path to update",
                error_code="NOTHING_TO_UPDATE",
            )
        return self._patch_execution(execution_id, session_id, worktree_path)

    def create_step(
        self,
        execution_id: str,
        step_name: str,
        message: str | None = None,
        status: str | None = None,
    ) -> Envelope:
        return validate_status(status) or self._create_step(
            execution_id, step_name, message, status or "running"
        )

    def patch_step(
        self, execution_id: str, step_id: str, status: str | None = None, message: str | None = None
    ) -> Envelope:
        if status is None and message is None:
            return fail(
                "Provide at least status or message to update", error_code="NOTHING_TO_UPDATE"
            )
        return validate_status(status) or self._patch_step(execution_id, step_id, status, message)

    @abstractmethod
    def _patch_execution(
        self, execution_id: str, session_id: str | None, worktree_path: str | None
    ) -> Envelope: ...

    @abstractmethod
    def _create_step(
        self, execution_id: str, step_name: str, message: str | None, status: str
    ) -> Envelope: ...

    @abstractmethod
    def _patch_step(
        self, execution_id: str, step_id: str, status: str | None, message: str | None
    ) -> Envelope: ...

    @abstractmethod
    def health_check(self) -> Envelope: ...

    def close(self) -> None:  # noqa: B027 - an optional hook, not abstract
        """Release connections (no-op by default)."""


class MockTaskManagerClient(TaskManagerClientBase):
    """In memory, with real state: what was created can be updated and read back."""

    def __init__(self) -> None:
        self.executions: dict[str, dict[str, Any]] = {}
        self.steps: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _patch_execution(
        self, execution_id: str, session_id: str | None, worktree_path: str | None
    ) -> Envelope:
        with self._lock:
            execution = self.executions.setdefault(execution_id, {"execution_id": execution_id})
            if session_id is not None:
                execution["session_id"] = session_id
            if worktree_path is not None:
                execution["worktree_path"] = worktree_path
            return ok(dict(execution), "Execution updated")

    def _create_step(
        self, execution_id: str, step_name: str, message: str | None, status: str
    ) -> Envelope:
        step: dict[str, Any] = {
            "step_id": uuid.uuid4().hex[:12],
            "execution_id": execution_id,
            "step_name": step_name,
            "message": message,
            "status": status,
        }
        with self._lock:
            self.steps[step["step_id"]] = step
        return ok(dict(step), "Step created")

    def _patch_step(
        self, execution_id: str, step_id: str, status: str | None, message: str | None
    ) -> Envelope:
        with self._lock:
            step = self.steps.get(step_id)
            if step is None or step["execution_id"] != execution_id:
                return fail(f"Step {step_id} not found", error_code="NOT_FOUND")
            if status is not None:
                step["status"] = status
            if message is not None:
                step["message"] = message
            return ok(dict(step), "Step updated")

    def health_check(self) -> Envelope:
        return ok({"status": "ok", "client": "mock"}, "Task Manager (mock) is healthy")


def create_task_manager_client(
    settings: TaskManagerSettings, **http_options: Any
) -> TaskManagerClientBase:
    """The mock when USE_MOCK_CLIENT is 'true' (any case), else the HTTP client."""
    if settings.use_mock_client:
        return MockTaskManagerClient()
    from bot.taskmanager.http import HttpTaskManagerClient

    return HttpTaskManagerClient(
        settings.url,
        token=settings.token,
        timeout=settings.timeout,
        **http_options,
    )
