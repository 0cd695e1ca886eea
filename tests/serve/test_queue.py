"""The durable queue's promises, over random sequences of deliveries, claims, ends and
restarts: a delivery makes at most one job, one job per change runs at a time, a newer
head supersedes, and every job ends in exactly one final state."""

from __future__ import annotations

import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.serve.jobs import JobRequest
from bot.serve.queue import RETENTION, Queue

FINAL = {"done", "failed", "superseded", "cancelled"}


def request(change: int, head: int, delivery: int, respond: bool = False) -> JobRequest:
    """A review of ``head``, or (``respond``) an answer to comment ``head``."""
    ref = f"acme/shop#{change}"
    return JobRequest(
        host="github",
        kind="respond" if respond else "review",
        change=f"github:{ref}",
        ref=ref,
        head="" if respond else f"{head:040x}",
        delivery=f"d-{delivery}",
        comment=str(head) if respond else None,
    )


steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("submit"),
            st.integers(0, 3),
            st.integers(0, 3),
            st.integers(0, 12),
            st.booleans(),
        ),
        st.tuples(st.just("claim"), st.integers(1, 3)),
        st.tuples(st.just("finish"), st.integers(0, 20)),
        st.tuples(st.just("restart"), st.integers(1, 3)),
        st.tuples(st.just("close"), st.integers(0, 3)),
    ),
    max_size=40,
)


@pytest.mark.slow
@settings(max_examples=100)
@given(steps)
def test_queue_invariants(actions: list[tuple]) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        queue = Queue(Path(tmp))
        running: set[int] = set()
        deliveries: dict[str, int] = {}
        for action in actions:
            if action[0] == "submit":
                req = request(*action[1:])
                out = queue.submit(req)
                if out.status == "queued":
                    assert req.delivery not in deliveries, "a redelivery made a second job"
                    assert out.job is not None
                    deliveries[req.delivery] = out.job
                for job_id in out.cancel:  # the caller stops it: it ends superseded
                    assert queue.finish(job_id, "done", 0) == "superseded"
                    running.discard(job_id)
            elif action[0] == "claim":
                for job in queue.claim(action[1]):
                    assert job.id not in running
                    running.add(job.id)
            elif action[0] == "finish" and running:
                job_id = sorted(running)[action[1] % len(running)]
                assert queue.finish(job_id, "done", 0) in FINAL
                running.discard(job_id)
            elif action[0] == "close":
                out = queue.cancel(f"github:acme/shop#{action[1]}")
                for job_id in out.cancel:
                    assert queue.finish(job_id, "done", 0) == "cancelled"
                    running.discard(job_id)
            elif action[0] == "restart":
                queue.close()
                queue = Queue(Path(tmp))
                queue.recover(action[1])
                running.clear()
            keys = queue.db.execute(
                "SELECT change, COUNT(*) FROM jobs WHERE state IN ('running', 'cancelling') "
                "GROUP BY change HAVING COUNT(*) > 1"
            ).fetchall()
            assert keys == [], "two jobs of one change ran at once"
            queued = queue.db.execute(
                "SELECT key, COUNT(*) FROM jobs WHERE state = 'queued' GROUP BY key "
                "HAVING COUNT(*) > 1"
            ).fetchall()
            assert queued == [], "an older head stayed queued beside a newer one"
        stats = queue.stats()
        total = sum(v for k, v in stats.items() if k.startswith("state:"))
        assert total == len(deliveries) == stats.get("submitted", 0)
        live = sum(stats.get(f"state:{s}", 0) for s in ("queued", "running", "cancelling"))
        ended = sum(v for k, v in stats.items() if k.startswith("outcome:"))
        assert total == live + ended + stats.get("superseded", 0), stats  # /metrics adds up
        queue.close()


def test_restart_requeues_running_jobs_until_their_attempts_run_out(tmp_path: Path) -> None:
    queue = Queue(tmp_path)
    queue.submit(request(1, 1, 1))
    for attempt in (1, 2):
        (job,) = queue.claim(5)
        assert job.attempts == attempt
        assert queue.recover(max_attempts=2) == ((1, 0) if attempt == 1 else (0, 1))
    assert queue.claim(5) == []
    assert queue.stats()["state:failed"] == 1


def test_a_redelivery_and_a_known_head_count_as_duplicates(tmp_path: Path) -> None:
    queue = Queue(tmp_path)
    assert queue.submit(request(1, 1, 1)).status == "queued"
    assert queue.submit(request(1, 1, 1)).status == "duplicate"  # same delivery id
    assert queue.submit(request(1, 1, 2)).status == "duplicate"  # same head, new delivery
    newer = queue.submit(request(1, 2, 3))
    assert newer.status == "queued" and [r.head for r in newer.dropped] == [f"{1:040x}"]
    assert queue.stats()["duplicates"] == 2 and queue.stats()["superseded"] == 1


def test_old_deliveries_and_ended_jobs_are_pruned_but_still_counted(tmp_path: Path) -> None:
    queue = Queue(tmp_path)
    queue.submit(request(1, 1, 1))
    (job,) = queue.claim(1)
    queue.finish(job.id, "done", 0)
    old = time.time() - RETENTION - 60
    queue.db.execute("UPDATE deliveries SET received = ?", (old,))
    queue.db.execute("UPDATE jobs SET finished = ?", (old,))
    queue.recover(3)
    stats = queue.stats()
    assert "state:done" not in stats and stats["outcome:done"] == stats["submitted"] == 1
    assert queue.submit(request(1, 1, 1)).status == "queued"  # forgotten after RETENTION


def test_a_head_already_reviewed_is_not_reviewed_again_but_a_build_target_is(
    tmp_path: Path,
) -> None:
    queue = Queue(tmp_path)
    queue.submit(request(1, 1, 1))
    (job,) = queue.claim(1)
    queue.finish(job.id, "done", 0)
    assert queue.submit(request(1, 1, 2)).status == "duplicate"  # e.g. reopened, same head
    target = replace(request(1, 1, 3), target="PHID-HMBT-1")
    assert queue.submit(target).status == "queued"  # a build restarted: it needs a verdict
    (job,) = queue.claim(1)
    queue.finish(job.id, "failed", 2)
    assert queue.submit(request(1, 1, 4)).status == "queued"  # after a failure: again


def test_closing_a_change_stops_its_jobs_of_every_kind(tmp_path: Path) -> None:
    queue = Queue(tmp_path)
    queue.submit(request(1, 1, 1))
    (running,) = queue.claim(1)
    queue.submit(request(1, 2, 2, respond=True))  # waits: one job per change
    queue.submit(request(2, 1, 3))  # another change
    closed = queue.cancel("github:acme/shop#1")
    assert closed.cancel == (running.id,) and [r.kind for r in closed.dropped] == ["respond"]
    assert queue.finish(running.id, "done", 0) == "cancelled"
    assert [job.request.ref for job in queue.claim(5)] == ["acme/shop#2"]
    assert queue.stats()["outcome:cancelled"] == 2


def test_a_restarted_build_of_the_same_diff_replaces_the_running_one(tmp_path: Path) -> None:
    queue = Queue(tmp_path)
    first = replace(request(1, 1, 1), target="PHID-HMBT-1")
    queue.submit(first)
    (job,) = queue.claim(1)
    again = queue.submit(replace(request(1, 1, 2), target="PHID-HMBT-2"))
    assert again.status == "queued" and again.cancel == (job.id,)  # the old target fails
