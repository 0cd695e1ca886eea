"""The queue's storage failing under a real ``nova serve``: a second sqlite3 connection
holds the write lock (``BEGIN EXCLUSIVE``) past the busy timeout while a job ends. The
dispatcher must not wedge, ``/readyz`` must say so, and the finished job must not run
again after a restart. And a second server on the same data directory exits at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.support import (
    FAKE_JOB,
    ServeProcess,
    base_env,
    ended,
    github_post,
    pull_request,
    started,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def servers() -> Iterator[list[ServeProcess]]:
    out: list[ServeProcess] = []
    yield out
    for s in out:
        s.stop()


def _until(predicate: object, what: str, server: ServeProcess, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}\n{''.join(server.lines)}")


def test_a_locked_queue_delays_the_next_job_but_never_wedges_or_repeats(
    servers: list[ServeProcess], tmp_path: Path
) -> None:
    hold = tmp_path / "release"
    env = base_env(tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_HOLD=str(hold))
    server = ServeProcess(tmp_path / "data", env, "--max-jobs", "1").start()
    servers.append(server)
    for n in (1, 2):
        answer = github_post(
            server.client, "pull_request", pull_request("a/b", n, f"{n}" * 40), f"d{n}"
        )
        assert answer.status_code == 202
    _until(lambda: len(started(tmp_path)) == 1, "the first job", server)

    other = sqlite3.connect(tmp_path / "data" / "queue.sqlite3", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # an operator's sqlite3, a backup: past the busy timeout
    hold.write_text("")  # the first job ends while the queue cannot record it
    _until(lambda: any("queue: cannot record" in line for line in server.lines), "the log", server)
    ready = server.client.get("/readyz")
    assert ready.status_code == 503 and "cannot record the end of job" in ready.text
    assert len(started(tmp_path)) == 1  # its slot is not reused before its end is durable
    assert server.metrics()["nova_serve_running_jobs"] == 1  # the server still answers
    other.execute("COMMIT")
    other.close()

    server.wait_for(lambda m: ended(m) == 2, "the second job")
    assert server.client.get("/readyz").status_code == 200
    assert any("takes writes again" in line for line in server.lines)
    server.stop()
    restarted = ServeProcess(tmp_path / "data", env, "--max-jobs", "1").start()
    servers.append(restarted)
    restarted.wait_for(lambda m: m["nova_serve_running_jobs"] == 0, "an idle queue")
    assert len(started(tmp_path)) == 2  # neither finished job ran again


def test_a_second_server_on_the_same_data_directory_exits_with_one_line(
    servers: list[ServeProcess], tmp_path: Path
) -> None:
    env = base_env(tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB)
    servers.append(ServeProcess(tmp_path / "data", env).start())
    second = subprocess.run(
        [sys.executable, "-m", "bot", "serve", "--port", "0", "--data-dir", str(tmp_path / "data")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 2
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "in use by another nova serve" in lines[0], second.stderr


def _question(pr: int, cid: int) -> dict[str, object]:
    return {
        "action": "created",
        "issue": {"number": pr, "pull_request": {"url": "x"}},
        "comment": {"id": cid, "body": f"@nova why {cid}?", "user": {"login": "eve"}},
        "repository": {"full_name": "acme/shop"},
    }


def test_a_flood_of_questions_is_one_answer_job_per_change_and_never_delays_a_review(
    servers: list[ServeProcess], tmp_path: Path
) -> None:
    hold = tmp_path / "release"
    env = base_env(tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_HOLD=str(hold))
    server = ServeProcess(tmp_path / "data", env, "--max-jobs", "1").start()
    servers.append(server)
    answers = [
        github_post(server.client, "issue_comment", _question(1 + n % 2, 100 + n), f"q{n}")
        for n in range(50)
    ]
    assert all(a.status_code == 202 for a in answers)
    review = github_post(server.client, "pull_request", pull_request("acme/shop", 3, "c" * 40), "r")
    assert review.status_code == 202
    _until(lambda: len(started(tmp_path)) >= 1, "the first job", server)
    hold.write_text("")
    server.wait_for(
        lambda m: m["nova_serve_queue_depth"] + m["nova_serve_running_jobs"] == 0, "all"
    )

    order = [r["argv"] for r in sorted(started(tmp_path), key=lambda r: r["start"])]
    assert order[0][0] == "respond"  # the one slot was taken before the review came
    assert order[1][:2] == ["review", "acme/shop#3"]  # the review waited one job slot, no more
    responds = [argv for argv in order if argv[0] == "respond"]
    assert len(responds) <= 3  # the first question, then one job per pull request
    assert sorted(a[1] for a in responds[1:]) == ["acme/shop#1", "acme/shop#2"][: len(responds) - 1]
    assert all("--comment" not in argv for argv in responds[1:])  # they answer every question
