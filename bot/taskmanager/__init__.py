"""Mirror the pipeline's stages as steps: events now, the Task Manager service as a backend."""

from bot.taskmanager.tracker import Step, StepBackend, StepTracker

__all__ = ["Step", "StepBackend", "StepTracker"]
