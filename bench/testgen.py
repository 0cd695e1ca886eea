"""Wall time and outcome of `nova testgen` on the sample repositories of the test suite,
and on a real change.

    python bench/testgen.py [--runs 3] [--only python|javascript|ghostwriter|differential]
    python bench/testgen.py --real humanize [--runs 1]   # any of bench/testgen_corpora.py

Each scenario builds its sample repo in a tmp dir (tests/test_testgen*.py), scripts the
local OpenAI-compatible server as the issue describes (one good test, one wrong test that
is then fixed, one flaky, one that never runs the change, and a refused write), and runs
`nova testgen HEAD` in a fresh process. Prints the median wall time, the time of each
stage (from the step events), tests proposed / kept / dropped by reason, and LLM calls.

`--real NAME`: a real release change of bench/testgen_corpora.py (humanize 4.9.0 -> 4.10.0,
cachetools, more-itertools, tabulate, packaging, isodate), no model; prints its row (kept,
catching as a separate run on the parent checks it, wall time, stage times).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import testgen_corpora as corpora  # noqa: E402

from tests.conftest import GitRepo  # noqa: E402
from tests.servers.openai_server import FakeOpenAI, Reply  # noqa: E402
from tests.testgen import test_differential as dif  # noqa: E402
from tests.testgen import test_node as js  # noqa: E402
from tests.testgen import test_testgen as py  # noqa: E402


def python_repo(path: Path) -> tuple[GitRepo, list[Reply]]:
    return py.build_python_sample(GitRepo(path)), py.write_run_fix(
        "tests/test_nova_discount.py",
        py.HEADER + py.GOOD + py.WRONG + py.FLAKY + py.USELESS,
        py.HEADER + py.GOOD + py.FIXED + py.FLAKY + py.USELESS,
        ["../../etc/nova_pwned.py"],
    )


def js_repo(path: Path) -> tuple[GitRepo, list[Reply]]:
    return js.build_js_sample(GitRepo(path)), py.write_run_fix(
        "test/nova_discount.test.js",
        js.HEADER + js.GOOD + js.WRONG + js.FLAKY + js.USELESS,
        js.HEADER + js.GOOD + js.FIXED + js.FLAKY + js.USELESS,
        ["../../etc/nova_pwned.test.js"],
    )


def ghostwriter_repo(path: Path) -> tuple[GitRepo, list[Reply]]:
    return py.build_codec_sample(GitRepo(path)), []


def differential_repo(path: Path) -> tuple[GitRepo, list[Reply]]:
    return dif.build_calc_sample(GitRepo(path)), []


SCENARIOS = {
    "python": python_repo,
    "javascript": js_repo,
    "ghostwriter": ghostwriter_repo,
    "differential": differential_repo,
}
GENERATOR = {"ghostwriter": ["--generator", "ghostwriter"]}
DEFAULT = ["python", "javascript", "ghostwriter", "differential"]


def run_once(name: str, llm: FakeOpenAI) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        repo, script = SCENARIOS[name](Path(tmp) / "repo")
        env = {
            k: v for k, v in os.environ.items() if not k.startswith("NOVA_") and k != "VIRTUAL_ENV"
        }
        env.update(HOME=tmp, GIT_CONFIG_NOSYSTEM="1", NO_PROXY="127.0.0.1,localhost")
        if script:
            llm.enqueue(*script)
            env.update(
                NOVA_LLM_MODEL="openai:bench",
                NOVA_LLM_BASE_URL=llm.base_url,
                NOVA_LLM_API_KEY="bench-key",
                NOVA_LLM_MAX_RETRIES="0",
            )
        events = Path(tmp) / "events.jsonl"
        t0 = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "bot",
                "testgen",
                "HEAD",
                "--repo",
                str(repo.path),
                "-o",
                "json",
                "-q",
                "--patch-dir",
                tmp,
                "--events-file",
                str(events),
                *GENERATOR.get(name, []),
            ],
            env=env,
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{name}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
        data = json.loads(proc.stdout)
        started: dict[str, float] = {}
        stages: dict[str, float] = {}
        for row in events.read_text().splitlines():
            e = json.loads(row)
            if e.get("event_type") != "step":
                continue
            if e["status"] == "running":
                started[e["step_name"]] = e["timestamp"]
            elif e["step_name"] in started:
                stages[e["step_name"]] = e["timestamp"] - started[e["step_name"]]
    return {"wall": wall, "data": data, "stages": stages}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=sorted(DEFAULT))
    ap.add_argument(
        "--real",
        choices=sorted(corpora.CORPORA),
        help="a real release change instead (bench/testgen_corpora.py)",
    )
    args = ap.parse_args()
    if args.real:
        for _ in range(args.runs):
            row = corpora.run_one(args.real)
            row.pop("data", None)
            print(json.dumps(row))
        return
    llm = FakeOpenAI().start()
    try:
        for name in [args.only] if args.only else DEFAULT:
            results = [run_once(name, llm) for _ in range(args.runs)]
            data = results[-1]["data"]
            assert isinstance(data, dict)
            stats = data["stats"]
            reasons = Counter(d["reason"].split(":")[0] for d in data["dropped"])
            print(
                f"{name}: wall {statistics.median(r['wall'] for r in results):.1f} s "
                f"(median of {args.runs}); proposed {stats['proposed']}, kept "
                f"{stats['kept']}, dropped {stats['dropped']} {dict(reasons)}; "
                f"LLM calls {stats['llm_calls']}; changed lines covered "
                f"{stats['changed_lines_covered_before']} -> "
                f"{stats['changed_lines_covered_after']} of {stats['changed_lines']}"
            )
            stages = results[-1]["stages"]
            assert isinstance(stages, dict)
            print("   " + ", ".join(f"{k} {v:.1f}s" for k, v in stages.items()))
    finally:
        llm.stop()


if __name__ == "__main__":
    main()
