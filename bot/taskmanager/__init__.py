"""Mirror the pipeline's stages as steps: events now, the Task Manager service as a backend."""

from bot.taskmanager.client import (
    MockTaskManagerClient,
    TaskManagerClientBase,
    create_task_manager_client,
)
from bot.taskmanager.tracker import Step, StepBackend, StepTracker, TaskManagerBackend, tracker_for

__all__ = ["MockTaskManagerClient", "Step", "StepBackend", "StepTracker", "TaskManagerBackend",
           "TaskManagerClientBase", "create_task_manager_client", "tracker_for"]
