"""Wall time and outcome of `nova testgen` on the sample repositories of the test suite,
and on a real change.

    python bench/testgen.py [--runs 3] [--only python|javascript|ghostwriter|differential]
    python bench/testgen.py --real humanize [--runs 1]

Each scenario builds its sample repo in a tmp dir (tests/test_testgen*.py), scripts the
local OpenAI-compatible server as the issue describes (one good test, one wrong test that
is then fixed, one flaky, one that never runs the change, and a refused write), and runs
`nova testgen HEAD` in a fresh process. Prints the median wall time, the time of each
stage (from the step events), tests proposed / kept / dropped by reason, and LLM calls.

`--real humanize`: humanize 4.10.0's source with 4.9.0's tests, no model (the differential
generator). The sdists come from PyPI with `pip download` into bench/.cache (git-ignored),
once; a git repo gets 4.9.0's tree, then 4.10.0's source. The project's interpreter is a
virtualenv in bench/.cache (pytest, coverage, freezegun and humanize installed), linked
as the repository's .venv/ so Nova finds it as a user's would. Also printed: each kept
test's evidence.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import test_testgen as py  # noqa: E402
from tests import test_testgen_differential as dif  # noqa: E402
from tests import test_testgen_node as js  # noqa: E402
from tests.conftest import GitRepo  # noqa: E402
from tests.servers.openai_server import FakeOpenAI, Reply  # noqa: E402


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


CACHE = ROOT / "bench" / ".cache"
HUMANIZE = ("4.9.0", "4.10.0")


def _pip(*args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-m", "pip", "-q", *args], check=True, env=env)


def humanize_venv() -> Path:
    """bench/.cache/humanize-venv: pytest, coverage, freezegun and humanize 4.10.0 (its
    metadata: humanize reads its version from it at import time)."""
    venv = CACHE / "humanize-venv"
    python = venv / "bin" / "python"
    if not python.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "-q", "install", "pytest", "coverage", "freezegun"],
            check=True,
        )
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "-q",
                "install",
                "--no-deps",
                str(CACHE / f"humanize-{HUMANIZE[1]}.tar.gz"),
            ],
            check=True,
            env={**os.environ, "SETUPTOOLS_SCM_PRETEND_VERSION": HUMANIZE[1]},
        )
    return python


def humanize_repo(path: Path) -> tuple[GitRepo, list[Reply]]:
    """4.9.0's tree, then 4.10.0's source with 4.9.0's tests."""
    CACHE.mkdir(parents=True, exist_ok=True)
    for version in HUMANIZE:
        if not (CACHE / f"humanize-{version}.tar.gz").is_file():
            _pip(
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"humanize=={version}",
                "-d",
                str(CACHE),
            )
    python = humanize_venv()
    unpacked = path.parent / "sdists"
    for version in HUMANIZE:
        with tarfile.open(CACHE / f"humanize-{version}.tar.gz") as tar:
            tar.extractall(unpacked, filter="data")
    repo = GitRepo(path)
    shutil.copytree(unpacked / f"humanize-{HUMANIZE[0]}", path, dirs_exist_ok=True)
    (path / "PKG-INFO").unlink()
    repo.commit(f"humanize {HUMANIZE[0]}")
    shutil.rmtree(path / "src")
    shutil.copytree(unpacked / f"humanize-{HUMANIZE[1]}" / "src", path / "src")
    repo.commit(f"humanize {HUMANIZE[1]} source, {HUMANIZE[0]} tests")
    (path / ".git" / "info" / "exclude").write_text(".venv\n")
    (path / ".venv").symlink_to(python.parent.parent, target_is_directory=True)
    return repo, []


SCENARIOS = {
    "python": python_repo,
    "javascript": js_repo,
    "ghostwriter": ghostwriter_repo,
    "differential": differential_repo,
    "humanize": humanize_repo,
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
    ap.add_argument("--real", choices=["humanize"], help="a real change instead")
    args = ap.parse_args()
    llm = FakeOpenAI().start()
    try:
        for name in [args.real or args.only] if args.real or args.only else DEFAULT:
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
            if args.real:
                _evidence(data)
    finally:
        llm.stop()


def _evidence(data: dict[str, object]) -> None:
    stats = data["stats"]
    assert isinstance(stats, dict)
    print(f"   tests ran with {data['environment']}; full suite passed: {stats['suite_passed']}")
    kept = data["kept"]
    assert isinstance(kept, list)
    print(
        f"   {sum(bool(k['evidence']['fails_on_parent']) for k in kept)} of {len(kept)} "
        "kept tests fail on the parent"
    )
    for k in kept:
        e = k["evidence"]
        bite = (
            "fails on the parent" if e["fails_on_parent"] else f"kills mutant {e['mutant_killed']}"
        )
        print(
            f"   kept {k['path']}::{k['name']}: passed {e['runs']}x, covers "
            f"{e['changed_lines_covered']} changed line(s), {bite}"
        )


if __name__ == "__main__":
    main()
