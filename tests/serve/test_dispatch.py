"""The dispatcher against a real queue, at the moments the server's own tests cannot hold
still: a newer head that arrives while a claim is still on its way back from the queue's
worker thread."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from bot.serve.dispatch import Dispatcher
from bot.serve.executors import Outcome
from bot.serve.jobs import JobRequest
from bot.serve.queue import Job, Queue


def review(head: str, delivery: str) -> JobRequest:
    return JobRequest(
        host="github",
        kind="review",
        change="github:acme/shop#7",
        ref="acme/shop#7",
        head=head * 40,
        delivery=delivery,
    )


class HeldClaim(Queue):
    """A real queue whose claim, once committed, waits for the test before it returns."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir)
        self.committed = threading.Event()
        self.go = threading.Event()

    def claim(self, limit: int) -> list[Job]:
        jobs = super().claim(limit)
        if jobs and not self.go.is_set():
            self.committed.set()
            self.go.wait(30)
        return jobs


class UntilStopped:
    """An executor whose jobs run until they are cancelled (or ``finish`` is set)."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.finish = asyncio.Event()

    async def run(self, job: Job, env: dict[str, str]) -> Outcome:
        self.started.append(job.id)
        await self.finish.wait()
        return Outcome("done", 0)

    def detach(self) -> None:
        pass


def test_a_head_superseded_while_its_claim_returns_is_stopped_not_left_running(
    tmp_path: Path,
) -> None:
    async def scenario() -> tuple[dict[str, str], list[int]]:
        queue = HeldClaim(tmp_path)
        executor = UntilStopped()
        dispatcher = Dispatcher(queue, executor, 1, lambda job: {})
        first = queue.submit(review("a", "d-1"))
        loop = asyncio.create_task(dispatcher.loop())
        await asyncio.to_thread(queue.committed.wait, 30)  # A is `running` in the queue
        newer = queue.submit(review("b", "d-2"))  # as the web handler does, meanwhile
        assert newer.cancel == (first.job,)
        dispatcher.cancel(newer.cancel)
        dispatcher.wake.set()
        queue.go.set()
        for _ in range(2000):  # B starts once A's end is recorded
            if newer.job in executor.started:
                break
            await asyncio.sleep(0.005)
        executor.finish.set()
        for _ in range(2000):
            if not dispatcher.tasks and newer.job in executor.started:
                break
            await asyncio.sleep(0.005)
        dispatcher.stopping = True
        dispatcher.wake.set()
        await loop
        states = dict(queue.db.execute("SELECT head, state FROM jobs").fetchall())
        queue.close()
        return states, executor.started

    states, started = asyncio.run(scenario())
    assert states == {"a" * 40: "superseded", "b" * 40: "done"}
    assert 1 not in started  # the stopped head never ran
