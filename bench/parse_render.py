"""Parse + render time of a large real diff: two released sdists of a PyPI package, diffed.

    python bench/parse_render.py [--package Django --old 4.2 --new 5.0] [--runs 9]

Downloads both sdists once into bench/.cache (PyPI), diffs them with `git diff --no-index`,
then times parse_diff + render_files (median of --runs) and checks exactness: every parsed
line's text equals the line of the real old/new file at its number.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.diff import decode_diff, diff_to_dict, parse_diff, render_files  # noqa: E402

CACHE = Path(__file__).parent / ".cache"


def sdist(package: str, version: str) -> Path:
    target = CACHE / f"{package}-{version}"
    if target.is_dir():
        return target
    CACHE.mkdir(exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            "-d",
            str(CACHE),
            f"{package}=={version}",
        ],
        check=True,
    )
    archive = next(
        p
        for p in CACHE.glob("*.tar.gz")
        if p.name.lower().startswith(f"{package.lower()}-{version}")
    )
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return target


def real_diff(old: Path, new: Path) -> bytes:
    proc = subprocess.run(
        [
            "git",
            "diff",
            "--no-index",
            "--no-color",
            "-M",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            ".",
            str(new.resolve()),
        ],
        cwd=old,
        capture_output=True,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr.decode())
    return proc.stdout


def check_exact(files, old_root: Path, new_root: Path) -> tuple[int, int]:
    checked = mismatched = 0
    cache: dict[Path, list[str]] = {}

    def lines(path: Path) -> list[str]:
        if path not in cache:
            text = decode_diff(path.read_bytes())
            rows = text.split("\n")
            cache[path] = [r[:-1] if r.endswith("\r") else r for r in rows]
        return cache[path]

    for f in files:
        for h in f.hunks:
            for ln in h.lines:
                if ln.new_no is not None:
                    real = lines(new_root / f.new_path)[ln.new_no - 1]
                else:
                    real = lines(old_root / f.old_path)[ln.old_no - 1]
                checked += 1
                mismatched += real != ln.text
    return checked, mismatched


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", default="Django")
    ap.add_argument("--old", default="4.2")
    ap.add_argument("--new", default="5.0")
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    old_dir = next(sdist(args.package, args.old).iterdir())
    new_dir = next(sdist(args.package, args.new).iterdir())
    raw = real_diff(old_dir, new_dir)
    # git --no-index names files relative to the old dir ("a/x") and absolute for the new one
    text = decode_diff(raw).replace(f"b{new_dir.resolve()}/", "b/")
    print(
        f"{args.package} {args.old} -> {args.new}: {len(raw) / 1e6:.1f} MB, "
        f"{text.count(chr(10))} diff lines"
    )
    parse_times, render_times = [], []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        files = parse_diff(text)
        t1 = time.perf_counter()
        render_files(files)
        t2 = time.perf_counter()
        parse_times.append(t1 - t0)
        render_times.append(t2 - t1)
    p, r = statistics.median(parse_times), statistics.median(render_times)
    t0 = time.perf_counter()
    diff_to_dict(files)
    j = time.perf_counter() - t0
    print(f"files {len(files)}, hunks {sum(len(f.hunks) for f in files)}")
    print(
        f"parse {p * 1000:.0f} ms + render {r * 1000:.0f} ms = {(p + r) * 1000:.0f} ms "
        f"(median of {args.runs}); json structure {j * 1000:.0f} ms"
    )
    checked, bad = check_exact(files, old_dir, new_dir)
    print(f"exactness: {checked} lines checked against the real files, {bad} mismatched")


if __name__ == "__main__":
    main()
