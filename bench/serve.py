"""``nova serve``'s answer times, measured from outside: a real server (uvicorn) in its own
process, signed deliveries over httpx, fake jobs (tests/serve/fake_job.py) so the jobs'
own work does not load the machine.

python bench/serve.py [--deliveries 50] [--burst 50] [--max-jobs 4] [--real 3]

Prints: one signed pull_request at a time (median, p95, max), a redelivery, a burst sent
from --burst threads at once (each answer's time; the most jobs alive at once), and a
Harbormaster request. With --real N: N pull requests on the local GitHub server reviewed by
real `nova review` jobs (no model: ruff), each delivery's answer time and the time until
its review is posted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.serve.support import (  # noqa: E402
    FAKE_JOB,
    ServeProcess,
    base_env,
    basic,
    ended,
    github_post,
    pull_request,
    started,
)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def summary(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    print(
        f"{name:<34} median {ms(statistics.median(ordered))}  p95 {ms(p95)}  "
        f"max {ms(ordered[-1])}  (n={len(ordered)})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deliveries", type=int, default=50)
    ap.add_argument("--burst", type=int, default=50)
    ap.add_argument("--max-jobs", type=int, default=4)
    ap.add_argument("--real", type=int, default=0)
    args = ap.parse_args()
    if args.real:
        real_reviews(args.real, args.max_jobs)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = base_env(tmp, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_SECONDS="0.05")
        server = ServeProcess(tmp / "data", env, "--max-jobs", str(args.max_jobs)).start()
        try:
            c = server.client
            c.get("/healthz")  # the connection is open before the clock starts
            one: list[float] = []
            for n in range(args.deliveries):
                event = pull_request("acme/shop", n + 1, f"{n + 1:040x}")
                t0 = time.perf_counter()
                assert github_post(c, "pull_request", event, f"s-{n}").status_code == 202
                one.append(time.perf_counter() - t0)
            summary("signed pull_request -> 202", one)
            event = pull_request("acme/shop", 1, f"{1:040x}")
            t0 = time.perf_counter()
            assert github_post(c, "pull_request", event, "s-0").json()["status"] == "duplicate"
            print(f"{'redelivery -> 200 duplicate':<34} {ms(time.perf_counter() - t0)}")

            def post(n: int) -> float:
                event = pull_request("acme/burst", n, f"{n:040x}")
                t0 = time.perf_counter()
                answer = github_post(c, "pull_request", event, f"b-{n}")
                assert answer.status_code == 202
                return time.perf_counter() - t0

            with ThreadPoolExecutor(args.burst) as pool:
                burst = list(pool.map(post, range(1, args.burst + 1)))
            summary(f"burst of {args.burst} at once -> 202", burst)
            url = "/harbormaster?target=PHID-HMBT-bench&revision=1&diff=2"
            t0 = time.perf_counter()
            assert c.post(url, headers={"Authorization": basic()}).status_code == 202
            print(f"{'/harbormaster -> 202':<34} {ms(time.perf_counter() - t0)}")
            total = args.deliveries + args.burst + 1
            t0 = time.perf_counter()
            server.wait_for(lambda m: ended(m) >= total, "every job", timeout=600)
            peak = max(s["siblings"] for s in started(tmp))
            print(
                f"{total} jobs ran; most alive at once: {peak} (--max-jobs {args.max_jobs}); "
                f"drained {time.perf_counter() - t0:.1f} s after the last delivery"
            )
        finally:
            server.stop()


def real_reviews(count: int, max_jobs: int) -> None:
    from tests.conftest import GitRepo
    from tests.hosts.cart import cart_change
    from tests.hosts.github.support import REPO, TOKEN, pull_from_repo
    from tests.servers.github_server import FakeGitHub

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        repo = GitRepo(tmp / "repo")
        base, head = cart_change(repo)
        gh = FakeGitHub(TOKEN).start()
        for n in range(1, count + 1):
            gh.add_pull(pull_from_repo(repo, base, head, number=n))
        env = base_env(
            tmp, GITHUB_TOKEN=TOKEN, GITHUB_API_URL=gh.base_url, NOVA_GITHUB_WRITE_INTERVAL="0"
        )
        server = ServeProcess(tmp / "data", env, "--max-jobs", str(max_jobs)).start()
        try:
            server.client.get("/healthz")
            answers: list[float] = []
            t0 = time.perf_counter()
            for n in range(1, count + 1):
                t1 = time.perf_counter()
                event = pull_request(REPO, n, head)
                assert github_post(server.client, "pull_request", event, f"r-{n}").is_success
                answers.append(time.perf_counter() - t1)
            summary("real: signed pull_request -> 202", answers)
            server.wait_for(lambda m: ended(m) >= count, "the reviews", timeout=600)
            print(
                f"real: {len(gh.reviews)} reviews posted for {count} pull requests, "
                f"{time.perf_counter() - t0:.1f} s from the first delivery to the last review"
            )
        finally:
            server.stop()
            gh.stop()


if __name__ == "__main__":
    main()
