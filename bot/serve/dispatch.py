"""The dispatcher: claims queued jobs (at most ``max_jobs`` running in total), hands each to
the executor, records its end, and stops a running job a newer head superseded."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from contextlib import suppress
from typing import Protocol

from bot.errors import NovaError, redact
from bot.serve.executors import Executor, Outcome
from bot.serve.jobs import JobRequest
from bot.serve.queue import Job, Queue

__all__ = ["Dispatcher", "JobHooks"]

log = logging.getLogger("nova.serve")


class JobHooks(Protocol):
    """Told when a job starts and ends (Harbormaster: ``work``, and ``fail`` for a job
    that died before its verdict). Called in a worker thread."""

    def started(self, request: JobRequest) -> None: ...

    def ended(self, request: JobRequest, outcome: Outcome) -> None: ...


class Dispatcher:
    def __init__(
        self,
        queue: Queue,
        executor: Executor,
        max_jobs: int,
        environment: Callable[[Job], dict[str, str]],
        hooks: JobHooks | None = None,
    ) -> None:
        self.queue = queue
        self.executor = executor
        self.max_jobs = max_jobs
        self.environment = environment
        self.hooks = hooks
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.wake = asyncio.Event()
        self.stopping = False
        self._background: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> int:
        return len(self.tasks)

    def cancel(self, job_ids: tuple[int, ...]) -> None:
        for job_id in job_ids:
            task = self.tasks.get(job_id)
            if task is not None:
                task.cancel()

    def dropped(self, requests: tuple[JobRequest, ...]) -> None:
        """Queued jobs a newer head replaced (or their change closed): their hooks hear they
        ended (a Harbormaster target of an older diff fails instead of waiting forever)."""
        if self.hooks is None:
            return
        for request in requests:
            outcome = Outcome("superseded", None, "a newer head came")
            task = asyncio.create_task(asyncio.to_thread(self._ended, request, outcome))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def loop(self) -> None:
        while not self.stopping:
            self.wake.clear()
            try:
                claimed = self.queue.claim(self.max_jobs - len(self.tasks))
            except sqlite3.Error as exc:  # the storage failed (/readyz says so): try again
                log.error("queue: %s", exc)
                claimed = []
            for job in claimed:
                self.tasks[job.id] = asyncio.create_task(self._run(job), name=f"job-{job.id}")
            # woken by a submit or a job's end; the timeout only guards against a lost wake
            with suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), 5.0)

    async def stop(self) -> None:
        """Shutdown: stop the running jobs and leave them ``running`` in the queue, so the
        next start runs them again."""
        self.stopping = True
        self.executor.detach()
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, job: Job) -> None:
        outcome: Outcome | None = None
        try:
            env = await asyncio.to_thread(self.environment, job)
            if self.hooks is not None:
                await asyncio.to_thread(self._started, job.request)
            outcome = await self.executor.run(job, env)
        except asyncio.CancelledError:
            if self.stopping:
                return  # left running: re-queued at the next start
            outcome = Outcome("superseded", None, "stopped: a newer head, or the change closed")
        except (NovaError, OSError, ValueError) as exc:
            outcome = Outcome("failed", None, redact(str(exc)))
        finally:
            if outcome is None and not self.stopping:  # an error no executor foresaw
                log.exception("job %s %s", job.id, job.request.key)
                outcome = Outcome("failed", None, "an unexpected error")
            if not self.stopping and outcome is not None:
                state = self.queue.finish(job.id, outcome.state, outcome.exit_code)
                log.info("job %s %s: %s %s", job.id, job.request.key, state, outcome.detail)
                if self.hooks is not None and not outcome.reported:
                    await asyncio.to_thread(self._ended, job.request, outcome)
            self.tasks.pop(job.id, None)
            self.wake.set()

    def _started(self, request: JobRequest) -> None:
        assert self.hooks is not None
        try:
            self.hooks.started(request)
        except (NovaError, OSError) as exc:  # a lost "work" message never stops the job
            log.warning("before job %s: %s", request.key, redact(str(exc)))

    def _ended(self, request: JobRequest, outcome: Outcome) -> None:
        assert self.hooks is not None
        try:
            self.hooks.ended(request, outcome)
        except (NovaError, OSError) as exc:
            log.warning("after job %s: %s", request.key, redact(str(exc)))
