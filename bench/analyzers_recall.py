"""Do Nova's built-in analyzers report what the linters report, on real changes by others?

For each change (a repository, a base and a head): the linters are run directly on the
head checkout, the way their users run them (oxlint and ruff on the whole tree, actionlint
with no arguments, shellcheck and hadolint on every file ``identify`` tags as shell or
Dockerfile from the disk: executable bit and shebang), and their findings on the change's
added lines are what Nova should report. Then ``nova review BASE..HEAD -o json`` runs with
no model, timed. Printed per change and tool: expected, reported, recall; findings Nova put
on a line that is not an added line (must be 0); the review's seconds (must be ≤ 60).
Findings in files the review skips on purpose (``dist/`` bundles, lockfiles, generated
code: ``bot/review/filter.py``, NOVA_EXCLUDE) are counted apart, not in the recall.

    python bench/analyzers_recall.py                      # the six changes below
    python bench/analyzers_recall.py name=GITDIR:BASE..HEAD ...

The default changes come from public repositories fetched as bare mirrors under
``$NOVA_BENCH_MIRRORS`` (default /work/.mirror, as ``owner+name/repo``); a missing one is
skipped. Exit 1 when a change misses recall 0.9 for a tool, has a finding off the added
lines, or takes more than 60 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.analyzers.base import find_program  # noqa: E402
from bot.diff import parse_diff  # noqa: E402
from bot.review.filter import select_files  # noqa: E402

MIRRORS = Path(os.environ.get("NOVA_BENCH_MIRRORS", "/work/.mirror"))
CASES = [
    # a TypeScript library's release
    ("typescript: ky v1.14.3..v2.0.0", "sindresorhus+ky", "v1.14.3", "v2.0.0"),
    # shell scripts, most without an extension (libexec/rbenv-*)
    ("shell: rbenv v0.4.0..v1.1.2", "rbenv+rbenv", "v0.4.0", "v1.1.2"),
    # GitHub workflows and Dockerfiles
    (
        "workflows+docker: docker-stacks 2021-06..2022-01",
        "jupyter+docker-stacks",
        "b58d8347168c23c1c323ef3a4a788d1f6231c428",
        "12460db878e33e4e5ee481d1b7f0acd03d2a6fbc",
    ),
    # Python and shell in one change
    ("python+shell: cibuildwheel v1.0.0..v2.0.0", "pypa+cibuildwheel", "v1.0.0", "v2.0.0"),
    # two more: checked after the set and the code were settled
    ("shell+python: pyenv v2.0.0..v2.3.0", "pyenv+pyenv", "v2.0.0", "v2.3.0"),
    ("javascript: axios v1.0.0..v1.6.0", "axios+axios", "v1.0.0", "v1.6.0"),
]
Key = tuple[str, str, int, str]  # tool, path, line, rule
NOT_SHELLCHECK = {"zsh", "fish", "tcsh", "csh"}


def sh(cwd: Path, *args: str, ok: tuple[int, ...] = (0,)) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode not in ok:
        raise RuntimeError(f"{args[0]} exited {proc.returncode}: {proc.stderr[-400:]}")
    return proc.stdout


def tool(name: str) -> str:
    found = find_program(name)
    if found is None:
        raise SystemExit(f"{name} is not installed: pip install 'nova-bot[lint]'")
    return found


def added_lines(repo: Path, base: str, head: str) -> tuple[dict[str, set[int]], dict[str, str]]:
    """Each changed file's added lines, and the files the review skips (with why: Nova's
    built-in exclusions, e.g. ``dist/`` bundles and lockfiles, and NOVA_EXCLUDE)."""
    files = parse_diff(sh(repo, "git", "diff", "--no-color", "-M", base, head))

    def read(path: str) -> str | None:
        target = repo / path
        return target.read_text("utf-8", "replace") if target.is_file() else None

    skipped = dict(select_files(files, read=read).skipped)
    added = {
        f.path: {ln.new_no for h in f.hunks for ln in h.lines if ln.kind == "added" and ln.new_no}
        for f in files
        if f.status != "deleted"
    }
    return added, skipped


def by_tags(repo: Path, paths: list[str], wanted: str) -> list[str]:
    from identify.identify import tags_from_path

    out = []
    for p in paths:
        if not (repo / p).is_file() or (repo / p).is_symlink():
            continue
        tags = tags_from_path(str(repo / p))
        if wanted in tags and not tags & NOT_SHELLCHECK:
            out.append(p)
    return out


def direct(repo: Path, changed: list[str]) -> list[Key]:
    """Every linter run directly on the head, the way its users run it."""
    keys: list[Key] = []
    for item in json.loads(
        sh(repo, tool("ruff"), "check", "--output-format=json", "--no-cache", "--exit-zero", ".")
        or "[]"
    ):
        rel = os.path.relpath(item["filename"], repo)
        keys.append(("ruff", rel, item["location"]["row"], item.get("code") or "syntax"))
    out = sh(repo, tool("oxlint"), "--format=json", ".", ok=(0, 1))
    doc = json.loads(out[out.find("{") :] if "{" in out else "{}")
    for d in doc.get("diagnostics", []):
        span = (d.get("labels") or [{}])[0].get("span") or {}
        keys.append(("oxlint", os.path.normpath(d["filename"]), span.get("line", 0), d["code"]))
    shells = by_tags(repo, changed, "shell")
    for start in range(0, len(shells), 200):
        out = sh(repo, tool("shellcheck"), "-f", "json1", *shells[start : start + 200], ok=(0, 1))
        for c in json.loads(out or "{}").get("comments", []):
            keys.append(("shellcheck", os.path.normpath(c["file"]), c["line"], f"SC{c['code']}"))
    for path in by_tags(repo, changed, "dockerfile"):
        out = sh(repo, tool("hadolint"), "-f", "json", "--no-fail", path)
        keys += [("hadolint", path, c["line"], c["code"]) for c in json.loads(out or "[]")]
    if (repo / ".github" / "workflows").is_dir():
        out = sh(repo, tool("actionlint"), "-format", "{{json .}}", ok=(0, 1))
        for c in json.loads(out or "[]"):
            keys.append(("actionlint", os.path.normpath(c["filepath"]), c["line"], c["kind"]))
    return keys


def nova(repo: Path, base: str, head: str) -> tuple[dict, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOVA_") and "KEY" not in k}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "review", f"{base}..{head}", "--repo", str(repo)]
        + ["-o", "json", "-q", "--no-llm"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    seconds = time.monotonic() - start
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"nova exited {proc.returncode}: {proc.stderr[-600:]}")
    data: dict = json.loads(proc.stdout)
    return data, seconds


def measure(name: str, gitdir: Path, base: str, head: str) -> bool:
    with tempfile.TemporaryDirectory(prefix="nova-bench-") as tmp:
        repo = Path(tmp) / "repo"
        sh(Path(tmp), "git", "clone", "-q", "--no-checkout", str(gitdir), str(repo))
        base_sha = sh(repo, "git", "rev-parse", f"{base}^{{commit}}").strip()
        head_sha = sh(repo, "git", "rev-parse", f"{head}^{{commit}}").strip()
        sh(repo, "git", "checkout", "-q", head_sha)
        added, skipped = added_lines(repo, base_sha, head_sha)
        on_added = [k for k in direct(repo, sorted(added)) if k[2] in added.get(k[1], set())]
        expected = Counter(k for k in on_added if k[1] not in skipped)
        excluded = Counter(skipped[k[1]] for k in on_added if k[1] in skipped)
        data, seconds = nova(repo, base_sha, head_sha)
    reported = Counter(
        (c["origin"], c["path"], c["line"], c["rule"] or "") for c in data["comments"]
    )
    off = [c for c in data["comments"] if c["line"] not in added.get(c["path"], set())]
    ok = not off and seconds <= 60
    print(f"\n{name}  ({len(added)} files, {sum(map(len, added.values()))} added lines)")
    tools = sorted({k[0] for k in expected} | {k[0] for k in reported})
    for t in tools:
        want = Counter({k: n for k, n in expected.items() if k[0] == t})
        got = sum((want & reported).values())
        total = sum(want.values())
        recall = got / total if total else 1.0
        ok = ok and recall >= 0.9
        extra = sum(n for k, n in reported.items() if k[0] == t) - got
        print(f"  {t:<11} expected {total:>4}  reported {got:>4}  recall {recall:.2f}  (+{extra})")
        rules = Counter(k[3] for k in want.elements()).most_common(6)
        print("      rules: " + ", ".join(f"{r} {n}" for r, n in rules))
        missed = list((want - reported).elements())[:3]
        for k in missed:
            print(f"      missed {k}")
    print(f"  off the added lines: {len(off)}   unplaced: {len(data['unplaced'])}")
    for why, n in excluded.items():  # not counted above: the review skips these files
        print(f"  in files the review skips ({why}): {n} findings, not reported")
    print(f"  review: {seconds:.1f} s with no model")
    return ok


def main(argv: list[str]) -> int:
    cases = []
    for arg in argv:
        name, _, spec = arg.partition("=")
        gitdir, _, span = spec.rpartition(":")
        base, _, head = span.partition("..")
        cases.append((name, Path(gitdir), base, head))
    if not cases:
        for name, mirror, base, head in CASES:
            gitdir = MIRRORS / mirror / "repo"
            if gitdir.is_dir():
                cases.append((name, gitdir, base, head))
            else:
                print(f"skipped {name}: no {gitdir}")
    results = [measure(*case) for case in cases]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
