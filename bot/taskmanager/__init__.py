"""The Task Manager: its clients (HTTP, in-memory) and the backend that mirrors steps."""

from bot.taskmanager.backend import TaskManagerBackend, tracker_for
from bot.taskmanager.client import (
    MockTaskManagerClient,
    TaskManagerClientBase,
    create_task_manager_client,
)

__all__ = [
    "MockTaskManagerClient",
    "TaskManagerBackend",
    "TaskManagerClientBase",
    "create_task_manager_client",
    "tracker_for",
]
