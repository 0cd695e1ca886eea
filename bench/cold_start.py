"""Wall time of `nova --help` and `nova --version` (median of --runs fresh processes).

python bench/cold_start.py [--runs 15]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def timed(cmd: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    nova = shutil.which("nova")
    base = [nova] if nova else [sys.executable, "-m", "bot"]
    python = timed([sys.executable, "-c", "pass"], args.runs)
    print(f"python -c pass      {python * 1000:6.0f} ms (interpreter floor)")
    for extra in (["--help"], ["--version"], ["review", "--help"]):
        t = timed(base + extra, args.runs)
        print(f"nova {' '.join(extra):<14} {t * 1000:6.0f} ms (median of {args.runs})")
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot", "--help"], capture_output=True, text=True
    ).stderr
    heavy = [
        ln
        for ln in out.splitlines()
        if any(
            m in ln
            for m in ("langchain", "langgraph", "github", "openai", "anthropic", "git.", "mcp")
        )
    ]
    print(f"heavy modules imported by --help: {len(heavy)}")


if __name__ == "__main__":
    main()
