"""The durable job queue: SQLite in WAL mode under the data directory.

- A delivery id is stored once: a redelivery is a no-op (counted as a duplicate).
- One job per change runs at a time. A request for the same head as a queued or running
  job of its key (kind + change), or as its last job that ended ``done``, is a
  duplicate; a newer head replaces a queued job of the key (``superseded``) and marks a
  running one ``cancelling`` (the caller stops it; it ends ``superseded``).
- ``recover`` (at start): what was running is queued again until ``max_attempts``
  starts, then ``failed``. A job is marked running in the same transaction that claims
  it, so a crash can re-run a job but never lose one.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bot.serve.jobs import JobRequest

__all__ = ["ACTIVE", "RETENTION", "Job", "Queue", "Submitted"]

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


@dataclass(frozen=True)
class Job:
    id: int
    request: JobRequest
    attempts: int


@dataclass(frozen=True)
class Submitted:
    status: str  # queued | duplicate | cancelled
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

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

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
            cancel, dropped = self._supersede(db, active, now)
            self._count(db, "submitted")
            cur = db.execute(
                "INSERT INTO jobs (key, change, head, request, state, created) "
                "VALUES (?, ?, ?, ?, 'queued', ?)",
                (request.key, request.change, request.head, request.to_json(), now),
            )
            return Submitted("queued", cur.lastrowid, cancel, dropped)

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
        """Up to ``limit`` queued jobs, oldest first, none of a change that has a job
        running (a review and an answer on one pull request never run at once)."""
        if limit <= 0:
            return []
        now = time.time()
        with self._tx() as db:
            rows = db.execute(
                "SELECT id, request, attempts FROM jobs q WHERE state = 'queued' AND NOT EXISTS "
                "(SELECT 1 FROM jobs r WHERE r.change = q.change AND r.state IN ('running', "
                "'cancelling')) ORDER BY id",
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
        row = self.db.execute("SELECT state FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return str(row[0]) if row else None

    def stats(self) -> dict[str, int]:
        """Jobs by state (``state:<state>``) and the counters, which survive restarts and
        pruning: submitted, duplicates, superseded, ``outcome:<state>``."""
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
