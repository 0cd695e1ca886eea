"""Executors run a job somewhere: ``local`` (a bounded pool of Nova subprocesses) or
``kubernetes`` (one Job per change and head). A new executor is one module and one entry
in ``EXECUTORS``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from bot.serve.queue import Job

__all__ = ["EXECUTORS", "Executor", "Outcome", "outcome_of"]

# name -> (module, class)
EXECUTORS = {
    "local": ("bot.serve.executors.local", "LocalExecutor"),
    "kubernetes": ("bot.serve.executors.kubernetes", "KubernetesExecutor"),
}


@dataclass(frozen=True)
class Outcome:
    """How a job ended: ``done`` (exit 0, or 1: findings at --fail-on), ``failed`` (any
    other exit), ``timeout`` (killed at its deadline) or ``killed`` (a signal)."""

    state: str
    exit_code: int | None = None
    detail: str = ""

    @property
    def reported(self) -> bool:
        """The job sent its own verdict (to a Harbormaster target): it ran to its end —
        exit 0, 1 (findings) or 3 (publish incomplete: the verdict says fail)."""
        return self.exit_code in (0, 1, 3)


def outcome_of(exit_code: int) -> Outcome:
    if exit_code < 0:
        return Outcome("killed", exit_code, f"killed by signal {-exit_code}")
    return Outcome("done" if exit_code in (0, 1) else "failed", exit_code)


@runtime_checkable
class Executor(Protocol):
    async def run(self, job: Job, env: dict[str, str]) -> Outcome:
        """Run ``job`` to its end; cancelled (a newer head, shutdown): stop it, re-raise."""
        ...

    def detach(self) -> None:
        """The server is shutting down: work that outlives it (a Kubernetes Job) is left
        running, to be found again after the restart; a local process is stopped."""
        ...
