"""The durable job queue: SQLite in WAL mode under the data directory.

- A delivery id is stored once: a redelivery is a no-op (counted as a duplicate).
- One job per change runs at a time. A request for the same head as a queued or running
  job of its key (kind + change), or as its last job that ended ``done``, is a
  duplicate; a newer head replaces a queued job of the key (``superseded``) and marks a
  running one ``cancelling`` (the caller stops it; it ends ``superseded``).
- Answers coalesce: a question on a change that already has a respond job queued folds
  into it (that job then answers every question not answered yet), so a flood of comments
  is one job per change; and reviews are claimed before responds.
- ``recover`` (at start): what was running is queued again until ``max_attempts``
  starts, then ``failed``. A job is marked running in the same transaction that claims
  it, so a crash can re-run a job but never lose one.
- One connection, used from the event loop's worker threads: a lock keeps its
  transactions apart. ``hold`` keeps a second server off the data directory.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from bot.serve.jobs import JobRequest

__all__ = ["ACTIVE", "RETENTION", "Busy", "Job", "Queue", "Submitted", "hold"]

ACTIVE = ("queued", "running", "cancelling")
RETENTION = 30 * 24 * 3600  # seconds a delivery id (and an ended job) is remembered
_SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (id TEXT PRIMARY KEY, received REAL NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL,
  change TEXT NOT NULL,
  head TEXT NOT NULL,
  request TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  created REAL NOT NULL,
  started REAL,
  finished REAL,
  outcome TEXT,
  exit_code INTEGER
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, key);
CREATE INDEX IF NOT EXISTS jobs_change ON jobs (state, change);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


class Busy(Exception):
    """Another process holds the data directory."""


def hold(data_dir: Path) -> IO[str]:
    """An exclusive ``flock`` on ``data_dir/serve.lock`` for as long as the returned file
    stays open (the kernel drops it when the process dies, ``kill -9`` included). Two
    servers on one queue would run each other's jobs a second time."""
    lock = (data_dir / "serve.lock").open("a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        lock.seek(0)
        owner = lock.read().strip() or "another process"
        lock.close()
        raise Busy(f"{data_dir} is in use by another nova serve (pid {owner})") from exc
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    return lock


@dataclass(frozen=True)
class Job:
    id: int
    request: JobRequest
    attempts: int


@dataclass(frozen=True)
class Submitted:
    status: str  # queued | coalesced | duplicate | cancelled
    job: int | None = None
    cancel: tuple[int, ...] = ()  # running jobs the caller must stop (a newer head came)
    dropped: tuple[JobRequest, ...] = ()  # queued jobs replaced by the newer head


class Queue:
    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / "queue.sqlite3"
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # durable across a killed process
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.executescript(_SCHEMA)
        self.lock = threading.Lock()

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise
            try:
                self.db.execute("COMMIT")
            except sqlite3.Error:
                if self.db.in_transaction:  # never leave the connection mid-transaction
                    self.db.execute("ROLLBACK")
                raise

    def _count(self, db: sqlite3.Connection, name: str, by: int = 1) -> None:
        db.execute(
            "INSERT INTO counters VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + ?",
            (name, by, by),
        )

    def submit(self, request: JobRequest) -> Submitted:
        now = time.time()
        with self._tx() as db:
            seen = db.execute(
                "INSERT OR IGNORE INTO deliveries VALUES (?, ?)", (request.delivery, now)
            )
            active = db.execute(
                "SELECT id, head, state FROM jobs WHERE key = ? AND state IN (?, ?, ?)",
                (request.key, *ACTIVE),
            ).fetchall()
            if seen.rowcount == 0 or self._known_head(db, request, active):
                self._count(db, "duplicates")
                return Submitted("duplicate")
            if request.kind == "respond":
                folded = self._fold(db, request)
                if folded is not None:
                    return Submitted("coalesced", folded)
            cancel, dropped = self._supersede(db, active, now)
            self._count(db, "submitted")
            cur = db.execute(
                "INSERT INTO jobs (key, change, head, request, state, created) "
                "VALUES (?, ?, ?, ?, 'queued', ?)",
                (request.key, request.change, request.head, request.to_json(), now),
            )
            return Submitted("queued", cur.lastrowid, cancel, dropped)

    def _fold(self, db: sqlite3.Connection, request: JobRequest) -> int | None:
        """A respond job of the change waiting already takes this question too: it is
        widened to every question not answered yet (``comment`` None)."""
        row = db.execute(
            "SELECT id, request FROM jobs WHERE change = ? AND state = 'queued' "
            "AND key LIKE 'respond:%' ORDER BY id LIMIT 1",
            (request.change,),
        ).fetchone()
        if row is None:
            return None
        waiting = replace(JobRequest.from_json(row[1]), comment=None)
        db.execute("UPDATE jobs SET request = ? WHERE id = ?", (waiting.to_json(), row[0]))
        self._count(db, "coalesced")
        return int(row[0])

    @staticmethod
    def _known_head(
        db: sqlite3.Connection, request: JobRequest, active: list[tuple[int, str, str]]
    ) -> bool:
        """The head is queued or running already, or the key's last job ran it to its end
        (a Herald webhook for a comment on an unchanged diff, a reopened pull request). A
        build target always runs: it waits for its own verdict."""
        if request.target:
            return False
        if any(head == request.head and state != "cancelling" for _, head, state in active):
            return True
        if not request.head:
            return False
        last = db.execute(
            "SELECT head, state FROM jobs WHERE key = ? ORDER BY id DESC LIMIT 1",
            (request.key,),
        ).fetchone()
        return last is not None and tuple(last) == (request.head, "done")

    def _supersede(
        self, db: sqlite3.Connection, active: list[tuple[int, str, str]], now: float
    ) -> tuple[tuple[int, ...], tuple[JobRequest, ...]]:
        """A newer head came: queued jobs of the key end ``superseded`` (returned, for their
        hooks), running ones are marked ``cancelling`` (returned: the caller stops them)."""
        cancel: list[int] = []
        dropped: list[JobRequest] = []
        for job_id, _, state in active:
            if state == "queued":
                text = db.execute("SELECT request FROM jobs WHERE id = ?", (job_id,)).fetchone()
                dropped.append(JobRequest.from_json(text[0]))
                db.execute(
                    "UPDATE jobs SET state = 'superseded', outcome = 'superseded', "
                    "finished = ? WHERE id = ?",
                    (now, job_id),
                )
                self._count(db, "superseded")
            elif state == "running":
                db.execute("UPDATE jobs SET state = 'cancelling' WHERE id = ?", (job_id,))
                cancel.append(job_id)
        return tuple(cancel), tuple(dropped)

    def claim(self, limit: int) -> list[Job]:
        """Up to ``limit`` queued jobs, reviews and testgen before answers, oldest first,
        none of a change that has a job running (a review and an answer on one pull
        request never run at once). Answers never delay a review by more than the slots
        they hold already."""
        if limit <= 0:
            return []
        now = time.time()
        with self._tx() as db:
            rows = db.execute(
                "SELECT id, request, attempts FROM jobs q WHERE state = 'queued' AND NOT EXISTS "
                "(SELECT 1 FROM jobs r WHERE r.change = q.change AND r.state IN ('running', "
                "'cancelling')) ORDER BY key LIKE 'respond:%', id",
            ).fetchall()
            jobs: list[Job] = []
            changes: set[str] = set()
            for job_id, text, attempts in rows:
                request = JobRequest.from_json(text)
                if request.change in changes:
                    continue
                changes.add(request.change)
                db.execute(
                    "UPDATE jobs SET state = 'running', attempts = attempts + 1, started = ? "
                    "WHERE id = ?",
                    (now, job_id),
                )
                jobs.append(Job(job_id, request, attempts + 1))
                if len(jobs) == limit:
                    break
            return jobs

    def finish(self, job_id: int, outcome: str, exit_code: int | None) -> str:
        """Record a job's end; a job stopped for a newer head ends ``superseded``, one
        whose change was closed ``cancelled``."""
        with self._tx() as db:
            row = db.execute("SELECT state, outcome FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None or row[0] not in ("running", "cancelling"):
                return row[0] if row else "unknown"
            # stopped on purpose: for a newer head, or (outcome set) its change was closed
            state = (row[1] or "superseded") if row[0] == "cancelling" else outcome
            db.execute(
                "UPDATE jobs SET state = ?, outcome = ?, exit_code = ?, finished = ? WHERE id = ?",
                (state, state, exit_code, time.time(), job_id),
            )
            self._count(db, "superseded" if state == "superseded" else f"outcome:{state}")
            return state

    def cancel(self, change: str) -> Submitted:
        """The change was closed: its queued jobs end ``cancelled``, its running ones are
        marked to stop (``Submitted.cancel``; they end ``cancelled``)."""
        now = time.time()
        with self._tx() as db:
            rows = db.execute(
                "SELECT id, state, request FROM jobs WHERE change = ? AND state IN (?, ?)",
                (change, "queued", "running"),
            ).fetchall()
            running = tuple(job_id for job_id, state, _ in rows if state == "running")
            dropped = tuple(
                JobRequest.from_json(text) for _, state, text in rows if state == "queued"
            )
            db.execute(
                "UPDATE jobs SET state = 'cancelled', outcome = 'cancelled', finished = ? "
                "WHERE change = ? AND state = 'queued'",
                (now, change),
            )
            if dropped:
                self._count(db, "outcome:cancelled", len(dropped))
            db.execute(
                "UPDATE jobs SET state = 'cancelling', outcome = 'cancelled' "
                "WHERE change = ? AND state = 'running'",
                (change,),
            )
            return Submitted("cancelled", None, running, dropped)

    def recover(self, max_attempts: int) -> tuple[int, int]:
        """After a restart: running jobs queued again (or failed past ``max_attempts``).
        Returns (requeued, failed)."""
        now = time.time()
        with self._tx() as db:
            for (outcome,) in db.execute(
                "SELECT outcome FROM jobs WHERE state = 'cancelling'"
            ).fetchall():
                self._count(db, f"outcome:{outcome}" if outcome else "superseded")
            db.execute(
                "UPDATE jobs SET state = COALESCE(outcome, 'superseded'), "
                "outcome = COALESCE(outcome, 'superseded'), finished = ? "
                "WHERE state = 'cancelling'",
                (now,),
            )
            # what is kept: deliveries and ended jobs of the last RETENTION seconds (the
            # counters keep the totals)
            db.execute("DELETE FROM deliveries WHERE received < ?", (now - RETENTION,))
            db.execute(
                "DELETE FROM jobs WHERE state NOT IN (?, ?, ?) AND finished < ?",
                (*ACTIVE, now - RETENTION),
            )
            failed = db.execute(
                "UPDATE jobs SET state = 'failed', outcome = 'abandoned', finished = ? "
                "WHERE state = 'running' AND attempts >= ?",
                (now, max_attempts),
            ).rowcount
            if failed:
                self._count(db, "outcome:failed", failed)
            requeued = db.execute(
                "UPDATE jobs SET state = 'queued' WHERE state = 'running'"
            ).rowcount
            return requeued, failed

    def state(self, job_id: int) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT state FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return str(row[0]) if row else None

    def stats(self) -> dict[str, int]:
        """Jobs by state (``state:<state>``) and the counters, which survive restarts and
        pruning: submitted, duplicates, superseded, ``outcome:<state>``."""
        with self.lock:
            out = {
                f"state:{s}": n
                for s, n in self.db.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state")
            }
            out.update(dict(self.db.execute("SELECT name, value FROM counters")))
        return out

    def writable(self) -> bool:
        """The storage takes a write: a file in the data directory, and a write
        transaction on the database through a connection of its own (safe from any
        thread, whatever the server's connection is doing)."""
        probe = self.path.parent / ".probe"
        try:
            probe.write_bytes(b"ok")
            probe.unlink()
            db = sqlite3.connect(self.path, timeout=2, isolation_level=None)
            try:
                db.execute("BEGIN IMMEDIATE")
                db.execute("ROLLBACK")
            finally:
                db.close()
        except (OSError, sqlite3.Error):
            return False
        return True
