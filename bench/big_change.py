"""Wall time of `nova review` on big changes, against a model that takes a fixed time per call.

    python bench/big_change.py [--latency 3] [--only one-file|requests|django] [--runs 1]
    python bench/big_change.py --nova-src /tmp/nova-bb0b18c    # another checkout (before)

Three changes, as in issue 18: one file with a ~15 KB diff (the Django 4.2 -> 5.0 file whose
diff is closest to that), requests 2.28.0 -> 2.32.3 and Django 4.2 -> 5.0 (the sdists and
the git repositories of bench/placement.py ``--real``, in bench/.cache). Each run is a fresh
`python -m bot review HEAD --repo … -o json` process (imports included), talking to the
local OpenAI-compatible test server (tests/servers/openai_server.py) that answers every
call after ``--latency`` seconds with an empty review.

Printed per change: wall time, model calls, prompt characters (message texts), files shown
to the model / files with added lines, the most requests in flight at once, and the load
average (the machine is shared: compare runs made at a similar load).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from placement import CACHE, RELEASES, _git, release_files  # noqa: E402

from bot.change import FileDiff  # noqa: E402
from tests.servers.openai_server import FakeOpenAI, text  # noqa: E402

EMPTY_REVIEW = json.dumps({"summary": "looks fine", "comments": []})
ONE_FILE_BYTES = 15_000


@dataclass
class Row:
    change: str
    wall: float
    calls: int
    prompt_chars: int
    shown: int
    with_added: int
    max_in_flight: int
    exit_code: int


def _repo_of(name: str) -> Path:
    package, old, new = RELEASES[name]
    return CACHE / "repos" / f"{package}-{old}..{new}"


def one_file_repo() -> tuple[Path, list[FileDiff]]:
    """A repository whose HEAD commit changes one file of Django by ~15 KB of diff."""
    repo = CACHE / "repos" / "one-file"
    django = _repo_of("django")
    files = release_files("django")
    if not (repo / ".git").is_dir():

        def size(f: FileDiff) -> int:
            old = subprocess.run(
                ["git", "show", f"HEAD~1:{f.old_path or f.path}"],
                cwd=django,
                capture_output=True,
                text=True,
            ).stdout
            new = (django / f.path).read_text(encoding="utf-8", errors="replace")
            diff = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True)))
            return abs(len(diff.encode()) - ONE_FILE_BYTES)

        edited = [
            f
            for f in files
            if f.status == "modified" and f.path.endswith(".py") and not f.is_binary
        ]
        # the diff size grows with the changed lines: look only near the right size
        near = sorted(edited, key=lambda f: abs(_changed(f) * 60 - ONE_FILE_BYTES))[:20]
        pick = min(near, key=size)
        repo.mkdir(parents=True, exist_ok=True)
        _git(repo, "init", "-q")
        target = repo / pick.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            subprocess.run(
                ["git", "show", f"HEAD~1:{pick.path}"],
                cwd=django,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "before")
        target.write_text((django / pick.path).read_text())
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "after")
    from bot.hosts.git.source import GitSource

    return repo, list(GitSource(repo).fetch("HEAD").files)


def _changed(f: FileDiff) -> int:
    return f.added_count + f.removed_count


def _added(files: list[FileDiff]) -> set[str]:
    return {f.path for f in files if f.added_count}


def measure(
    name: str,
    repo: Path,
    files: list[FileDiff],
    latency: float,
    nova_src: Path | None,
    extra_env: dict[str, str],
) -> Row:
    server = FakeOpenAI().start()
    server.latency = latency
    server.responder = lambda body: text(EMPTY_REVIEW)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOVA_", "OPENAI_"))}
    env.update(
        {"NOVA_LLM_MODEL": "openai:test-model", "NOVA_LLM_BASE_URL": server.base_url, **extra_env}
    )
    if nova_src is not None:
        env["PYTHONPATH"] = str(nova_src)
    cmd = [sys.executable, "-m", "bot", "review", "HEAD", "--repo", str(repo), "-q", "-o", "json"]
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=repo)
    wall = time.perf_counter() - started
    server.stop()
    if proc.returncode not in (0, 1):
        print(proc.stderr[-2000:], file=sys.stderr)
    prompts = [
        "\n".join(str(m.get("content") or "") for m in r.get("messages", []))
        for r in server.requests
    ]
    shown = {p for prompt in prompts for p in re.findall(r"^File: (.+?) \(", prompt, re.M)}
    added = _added(files)
    return Row(
        name,
        wall,
        len(server.requests),
        sum(map(len, prompts)),
        len(shown & added),
        len(added),
        server.max_in_flight,
        proc.returncode,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=3.0, help="seconds per model call")
    ap.add_argument("--only", action="append", choices=["one-file", "requests", "django"])
    ap.add_argument("--runs", type=int, default=1, help="runs per change (all are printed)")
    ap.add_argument("--nova-src", type=Path, help="run the `bot` package of this checkout")
    ap.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra environment for nova (e.g. NOVA_MAX_CONCURRENCY=4)",
    )
    args = ap.parse_args()
    extra_env = dict(item.split("=", 1) for item in args.env)
    changes = args.only or ["one-file", "requests", "django"]
    print(f"latency {args.latency:g}s per call; nova from {args.nova_src or ROOT}")
    print(
        f"{'change':<10} {'wall':>7} {'calls':>5} {'prompt chars':>12} "
        f"{'files shown':>13} {'max in flight':>13} {'load':>5} exit"
    )
    for name in changes:
        if name == "one-file":
            repo, files = one_file_repo()
        else:
            files = release_files(name)
            repo = _repo_of(name)
        for _ in range(args.runs):
            row = measure(name, repo, files, args.latency, args.nova_src, extra_env)
            load = os.getloadavg()[0]
            print(
                f"{row.change:<10} {row.wall:6.1f}s {row.calls:5} {row.prompt_chars:12,} "
                f"{row.shown:>6}/{row.with_added:<6} {row.max_in_flight:13} {load:5.1f} "
                f"{row.exit_code}",
                flush=True,
            )


if __name__ == "__main__":
    main()
