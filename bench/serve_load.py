"""``nova serve`` under unauthenticated load, measured from outside: N slow httpx clients
each post 25 MiB with a wrong (well-formed) signature and hold back the last MiB; the
server's resident memory is sampled meanwhile, and a signed delivery is timed while they
hold on.

python bench/serve_load.py [--clients 8 50] [--window 15] [--storage-faults 5]

Prints per N: RSS before, the peak (VmHWM), RSS after the clients closed, how the clients
were answered, and the signed delivery's answer time. Before the body budget (issue 38):
8 clients took the server from 40 to 252 MiB, and it stayed there.

With --storage-faults K: K times, a second sqlite3 connection holds the queue's write lock
(BEGIN EXCLUSIVE) while a job ends (--max-jobs 1, one job waiting); prints the time from
the lock's release to the next job's start (the fake job records its start on the same
monotonic clock).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.serve.support import (  # noqa: E402
    FAKE_JOB,
    ServeProcess,
    SlowClient,
    base_env,
    github_post,
    memory_kib,
    pull_request,
    started,
)


def one(clients: int, window: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServeProcess(
            Path(tmp) / "data", base_env(Path(tmp), NOVA_SERVE_JOB_COMMAND=FAKE_JOB)
        ).start()
        try:
            github_post(server.client, "pull_request", pull_request("a/b", 1, "a" * 40), "w")
            pid = server.proc.pid
            before = memory_kib(pid)["VmRSS"]
            release = threading.Event()
            slow = [SlowClient(server.url, release) for _ in range(clients)]
            for c in slow:
                c.start()
            time.sleep(window / 2)
            t0 = time.monotonic()
            answer = github_post(
                server.client, "pull_request", pull_request("a/b", 2, "b" * 40), "s"
            )
            signed = time.monotonic() - t0
            time.sleep(window / 2)
            peak = memory_kib(pid)["VmHWM"]
            release.set()
            for c in slow:
                c.join(120)
            time.sleep(1)
            after = memory_kib(pid)["VmRSS"]
            statuses = Counter(str(c.status) for c in slow)
            print(
                f"{clients:3d} slow clients: RSS {before / 1024:.0f} MiB before, peak "
                f"{peak / 1024:.0f} MiB, {after / 1024:.0f} MiB after they closed; answers "
                f"{dict(statuses)}; a signed delivery meanwhile: {answer.status_code} in "
                f"{signed * 1000:.0f} ms"
            )
        finally:
            server.stop()


def storage_fault(tmp: Path) -> float:
    hold = tmp / "release"
    env = base_env(tmp, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_HOLD=str(hold))
    server = ServeProcess(tmp / "data", env, "--max-jobs", "1").start()
    try:
        for n in (1, 2):
            github_post(server.client, "pull_request", pull_request("a/b", n, f"{n}" * 40), f"{n}")
        while len(started(tmp)) < 1:
            time.sleep(0.01)
        other = sqlite3.connect(tmp / "data" / "queue.sqlite3", isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        hold.write_text("")
        while not any("queue: cannot record" in line for line in server.lines):
            time.sleep(0.01)
        released = time.monotonic()
        other.execute("COMMIT")
        other.close()
        while len(started(tmp)) < 2:
            time.sleep(0.01)
        return max(r["start"] for r in started(tmp)) - released
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="*", default=[8, 50])
    parser.add_argument("--window", type=float, default=15.0, help="seconds of attack")
    parser.add_argument("--storage-faults", type=int, default=0)
    args = parser.parse_args()
    for n in args.clients:
        one(n, args.window)
    gaps = []
    for _ in range(args.storage_faults):
        with tempfile.TemporaryDirectory() as tmp:
            gaps.append(storage_fault(Path(tmp)))
    if gaps:
        print(
            f"storage fault ended -> next job started: median {statistics.median(gaps) * 1000:.0f}"
            f" ms, max {max(gaps) * 1000:.0f} ms over {len(gaps)} faults"
        )


if __name__ == "__main__":
    main()
