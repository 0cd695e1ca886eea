"""The local executor: each job is a ``nova`` subprocess in its own work directory and
process group, with a deadline. The dispatcher bounds how many run at once."""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import signal
import sys
import time
from contextlib import suppress
from pathlib import Path

from bot.serve.checkout import checkout
from bot.serve.executors import Outcome, outcome_of
from bot.serve.origins import Origins
from bot.serve.process import die_with_server
from bot.serve.queue import RETENTION, Job

__all__ = ["LocalExecutor"]

_GRACE = 5.0  # seconds between SIGTERM and SIGKILL


class LocalExecutor:
    def __init__(
        self,
        work_root: Path,
        timeout: float,
        command: list[str] | None = None,
        origins: Origins | None = None,
    ):
        self.work_root = work_root
        self.origins = origins or Origins({})
        self.timeout = timeout
        self.command = command or [sys.executable, "-m", "bot"]
        self.pids: dict[int, int] = {}  # job id -> pid of the running process
        self._prune_logs()

    def _prune_logs(self) -> None:
        """Job logs are kept as long as the queue keeps the job (``RETENTION``)."""
        cutoff = time.time() - RETENTION
        for log in (self.work_root / "logs").glob("*.log"):
            with suppress(OSError):
                if log.stat().st_mtime < cutoff:
                    log.unlink()

    def detach(self) -> None:
        """Local jobs die with the server (and run again after the restart)."""

    async def run(self, job: Job, env: dict[str, str]) -> Outcome:
        """The job in ``jobs/<id>`` (removed after it), its output in ``logs/<id>.log``."""
        workdir = self.work_root / "jobs" / str(job.id)
        workdir.mkdir(parents=True, exist_ok=True)
        (self.work_root / "logs").mkdir(exist_ok=True)
        try:
            return await self._run(job, {**env, "HOME": str(workdir)}, workdir)
        finally:
            await asyncio.shield(asyncio.to_thread(shutil.rmtree, workdir, True))

    async def _run(self, job: Job, env: dict[str, str], workdir: Path) -> Outcome:
        if job.request.kind == "testgen":
            try:
                cloned = checkout(job.request, workdir, env, self.origins)
                await asyncio.wait_for(cloned, self.timeout)
            except TimeoutError:
                return Outcome("timeout", None, "the checkout took too long")
        with (self.work_root / "logs").joinpath(f"{job.id}.log").open("ab") as log:
            proc = await asyncio.create_subprocess_exec(
                *self.command,
                *job.request.argv(),
                cwd=workdir,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=functools.partial(die_with_server, os.getpid()),
            )
        self.pids[job.id] = proc.pid
        try:
            code = await asyncio.wait_for(proc.wait(), self.timeout)
        except TimeoutError:
            await self._stop(proc, grace=0)
            return Outcome("timeout", None, f"killed after {self.timeout:g} s")
        except asyncio.CancelledError:
            await self._stop(proc, grace=_GRACE)
            raise
        finally:
            self.pids.pop(job.id, None)
        return outcome_of(code)

    @staticmethod
    async def _stop(proc: asyncio.subprocess.Process, grace: float) -> None:
        """SIGTERM to the job's process group, SIGKILL after ``grace``, then reap it."""
        if grace:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            with suppress(TimeoutError):
                await asyncio.shield(asyncio.wait_for(proc.wait(), grace))
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await asyncio.shield(proc.wait())
