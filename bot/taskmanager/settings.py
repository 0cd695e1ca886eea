"""The Task Manager's settings: where it is, the token, the execution a run reports to."""

from __future__ import annotations

from dataclasses import dataclass

from bot.sections import Section, setting

__all__ = ["TaskManagerSettings"]


@dataclass(frozen=True)
class TaskManagerSettings(Section):
    prefix = "task_manager_"
    env_prefixes = ("USE_MOCK_CLIENT",)  # the name the Task Manager tooling already uses

    url: str | None = setting(
        "NOVA_TASK_MANAGER_URL",
        "Base URL of the Task Manager service that mirrors each run's steps.",
    )
    token: str | None = setting(
        "NOVA_TASK_MANAGER_TOKEN", "Bearer token for the Task Manager (optional).", secret=True
    )
    execution_id: str | None = setting(
        "NOVA_EXECUTION_ID",
        "Task Manager execution this run reports to. Unset: no step tracking.",
        key="execution_id",
    )
    timeout: float = setting(
        "NOVA_TASK_MANAGER_TIMEOUT",
        "Seconds per Task Manager request; an outage costs the job at most about this long, once.",
        5.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    use_mock_client: bool = setting(
        "USE_MOCK_CLIENT",
        "'true' (any case) selects the in-memory Task Manager client (tests, demos).",
        False,
        parse=lambda v: v.lower() == "true",
        key="use_mock_client",
    )
