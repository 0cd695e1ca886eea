"""The dispatcher: claims queued jobs (at most ``max_jobs`` running in total), hands each to
the executor, records its end, and stops a running job a newer head superseded.

The queue's storage may fail (a write lock held past the busy timeout by a backup or an
operator's ``sqlite3``, a full disk): every queue call runs in a worker thread, a failed
one is retried with backoff, ``fault`` says why (``/readyz`` answers 503) and one line is
logged when it starts and when it ends. A job's slot is freed only once its end is
recorded, so a restart never runs a finished job again."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Protocol

from bot.errors import NovaError, redact
from bot.serve.executors import Executor, Outcome
from bot.serve.jobs import JobRequest
from bot.serve.queue import Job, Queue

__all__ = ["Dispatcher", "JobHooks"]

log = logging.getLogger("nova.serve")
BACKOFF = (0.05, 2.0)  # seconds: the first retry of a failed queue write, the longest wait


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
        self.fault: str | None = None  # why the queue cannot be written now
        self._fault_since = 0.0
        self._finishing: set[int] = set()  # jobs that ended, their end not yet recorded
        # jobs stopped while their claim was on its way back from the queue's thread (the
        # queue says `running`, no task exists yet): they end before they start
        self._stop_first: set[int] = set()
        self._background: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> int:
        return len(self.tasks)

    def cancel(self, job_ids: tuple[int, ...]) -> None:
        for job_id in job_ids:
            task = self.tasks.get(job_id)
            if task is not None:
                task.cancel()
            else:  # claimed, its task not made yet (or it ended already: then unused)
                self._stop_first.add(job_id)

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
            wait = 5.0  # woken by a submit or a job's end; this only guards a lost wake
            try:
                claimed = await asyncio.to_thread(self.queue.claim, self.max_jobs - len(self.tasks))
            except sqlite3.Error as exc:  # the storage failed (/readyz says so): try again
                self._failed("claim the next job", exc)
                claimed, wait = [], BACKOFF[1]
            else:
                self._recovered()
            for job in claimed:
                run = self._run(job, stopped=job.id in self._stop_first)
                self.tasks[job.id] = asyncio.create_task(run, name=f"job-{job.id}")
            self._stop_first.clear()  # what is left was not claimed: it had ended already
            with suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), wait)

    def _failed(self, what: str, exc: sqlite3.Error) -> None:
        if self.fault is None:
            self._fault_since = time.monotonic()
            log.error("queue: cannot %s: %s; retrying until the storage takes writes", what, exc)
        self.fault = f"cannot {what}: {exc}"

    def _recovered(self) -> None:
        if self.fault is not None:
            took = time.monotonic() - self._fault_since
            log.warning("queue: the storage takes writes again (after %.1f s)", took)
            self.fault = None

    async def _finish(self, job: Job, outcome: Outcome) -> str:
        """Record the end, retried with backoff until the storage takes it."""
        delay = BACKOFF[0]
        while True:
            try:
                state = await asyncio.to_thread(
                    self.queue.finish, job.id, outcome.state, outcome.exit_code
                )
            except sqlite3.Error as exc:
                self._failed(f"record the end of job {job.id}", exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF[1])
                continue
            self._recovered()
            return state

    async def stop(self) -> None:
        """Shutdown: stop the running jobs and leave them ``running`` in the queue, so the
        next start runs them again."""
        self.stopping = True
        self.executor.detach()
        tasks = list(self.tasks.values())
        for job_id, task in self.tasks.items():
            if job_id not in self._finishing:  # a job that ended: its end is recorded first
                task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=30)
            for task in pending:  # the storage still refuses: the restart runs it again
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, job: Job, stopped: bool = False) -> None:
        outcome: Outcome | None = None
        try:
            if stopped:  # stopped before its task existed: it ends as if cancelled now
                raise asyncio.CancelledError
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
            if outcome is not None:  # it ended: recorded before its slot is freed
                self._finishing.add(job.id)
                try:
                    state = await self._finish(job, outcome)
                finally:
                    self._finishing.discard(job.id)
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
