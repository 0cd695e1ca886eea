"""What reaches the model on a real release change, measured at the model's socket.

    python bench/prompt_size.py [--old 2.28.0] [--new 2.32.3] [--probe] [--env K=V ...]
    python bench/prompt_size.py --diff FILE      (chars per diff line of each style only)

The default builds a git repository from the requests sdists (``pip download`` into
bench/.cache, git-ignored): one commit with the old tree, one with the new. ``nova review``
then runs as a subprocess against a local OpenAI-compatible server that records every
request (tests/servers/openai_server.py). Reported: model calls, prompt characters (the
text of every message of every request), private key blocks in any request, and the files
with added code or docs that reached no prompt. ``--probe`` first asks for ``read_file`` of a
committed key and ``search_code`` for key headers, so tool results are checked too.

Reference: PR-Agent 0.49 sends 113,515 prompt characters for 2.28.0 -> 2.32.3 in one call.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.diff import decode_diff, parse_diff, render_files  # noqa: E402
from bot.llm.factory import estimate_tokens  # noqa: E402
from bot.prompts import render_prompt  # noqa: E402
from tests.servers.openai_server import FakeOpenAI, Reply, text, tool_call  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
PR_AGENT = 113_515
# a key header followed by key material (after a line break, a line number or a diff mark)
KEY_BLOCK = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:\\n|[\s\d+:|])*[A-Za-z0-9+/]{40}")
CODE_OR_DOCS = re.compile(r"\.(py|pyi|md|rst|toml|cfg|ini|in|txt|ya?ml|cnf)$|(^|/)Makefile$")
METADATA = re.compile(r"(^|/)(PKG-INFO$|[^/]*\.egg-info/)")


def _sdist(version: str) -> Path:
    tar = CACHE / f"requests-{version}.tar.gz"
    if not tar.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"requests=={version}",
                "-d",
                str(CACHE),
            ],
            check=True,
        )
    out = CACHE / "src"
    if not (out / f"requests-{version}").is_dir():
        with tarfile.open(tar) as tf:
            tf.extractall(out, filter="data")
    return out / f"requests-{version}"


def build_repo(old: str, new: str) -> Path:
    repo = CACHE / f"repo-{old}-{new}"
    if (repo / ".git").is_dir():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x.invalid",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    for version in (old, new):
        for child in repo.iterdir():
            if child.name != ".git":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        shutil.copytree(_sdist(version), repo, dirs_exist_ok=True)
        git("add", "-A")
        git("commit", "-q", "-m", f"requests {version}")
    return repo


def _prompt_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
        parts.append(content or "")
    return "\n".join(parts)


def _responder(probe: bool, key_path: str):
    def respond(body: dict[str, Any]) -> Reply:
        roles = [m.get("role") for m in body.get("messages", [])]
        if probe and "tool" not in roles and body.get("tools"):
            return tool_call("read_file", {"path": key_path})
        if probe and roles.count("tool") == 1 and body.get("tools"):
            return tool_call("search_code", {"pattern": "PRIVATE KEY"})
        return text(json.dumps({"summary": "ok", "comments": []}))

    return respond


def review(repo: Path, probe: bool, extra_env: dict[str, str]) -> dict[str, Any]:
    changed = subprocess.run(
        ["git", "diff", "--name-only", "-M", "HEAD~1", "HEAD", "--diff-filter=d"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    key_path = next((p for p in changed if p.endswith(".key")), "missing.key")
    server = FakeOpenAI().start()
    server.responder = _responder(probe, key_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOVA_")}
    env.update(
        {
            "NOVA_LLM_MODEL": "openai:bench-model",
            "NOVA_LLM_BASE_URL": server.base_url,
            "NOVA_LLM_API_KEY": "sk-bench",
            "NOVA_LLM_MAX_RETRIES": "0",
            **extra_env,
        }
    )
    events = CACHE / "events.jsonl"
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "from bot.cli import main; main()",
                "review",
                "HEAD",
                "--repo",
                str(repo),
                "-o",
                "json",
                "-q",
                "--events-file",
                str(events),
            ],
            env=env,
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
    finally:
        server.stop()
    if proc.returncode not in (0, 1):
        sys.exit(f"nova review failed ({proc.returncode}): {proc.stderr[-2000:]}")
    prompts = [_prompt_text(b) for b in server.requests]
    modes = [
        e["content"].split(" in ")[-1]
        for e in map(json.loads, events.read_text(encoding="utf-8").splitlines())
        if e.get("content", "").startswith("model call answered")
    ]
    return {
        "result": json.loads(proc.stdout),
        "prompts": prompts,
        "requests": server.requests,
        "modes": modes,
        "schema_chars": sum(
            len(json.dumps(b.get("response_format") or "")) + len(json.dumps(b.get("tools") or ""))
            for b in server.requests
        ),
        "key_blocks": len(KEY_BLOCK.findall("\n".join(prompts))),
        "changed": changed,
    }


def report(run: dict[str, Any], repo: Path) -> None:
    prompts, result = run["prompts"], run["result"]
    total = sum(len(p) for p in prompts)
    files = parse_diff(
        decode_diff(
            subprocess.run(
                ["git", "diff", "-M", "HEAD~1", "HEAD"], cwd=repo, capture_output=True, check=True
            ).stdout
        )
    )
    wanted = [
        f.path
        for f in files
        if f.added_count and CODE_OR_DOCS.search(f.path) and not METADATA.search(f.path)
    ]
    joined = "\n".join(prompts)
    missing = [p for p in wanted if f"File: {p} (" not in joined]
    keys = [
        c
        for c in result.get("comments", []) + result.get("unplaced", [])
        if c.get("origin") == "secrets"
    ]
    notes = [ln[6:] for ln in result.get("summary", "").splitlines() if ln.startswith("Note: ")]
    modes = [n for n in notes if "structured" in n] + [
        f"answer modes per call: {', '.join(run['modes'])}; tool and response_format schemas "
        f"(request body, not messages): {run['schema_chars']:,} characters"
    ]
    print(
        f"{len(files)} files changed; model calls {len(prompts)}; prompt characters "
        f"{total:,} ({total / PR_AGENT:.2f}x PR-Agent's {PR_AGENT:,}; target <= "
        f"{int(PR_AGENT * 0.7):,})"
    )
    print(f"  per call: {', '.join(f'{len(p):,}' for p in prompts)}")
    print(f"  private key blocks in requests: {run['key_blocks']}")
    print(
        f"  secret findings: {len(keys)} "
        f"({sum(1 for c in keys if c.get('severity') == 'error')} error)"
    )
    print(
        f"  code/doc files with added lines: {len(wanted)}, in no prompt: {len(missing)} "
        f"{missing if missing else ''}"
    )
    skipped = [n for n in notes if n.startswith("skipped ")]
    print(
        f"  skipped (in the summary): {sum(n.split(':')[0].count(',') + 1 for n in skipped)} "
        f"files in {len(skipped)} notes"
    )
    for note in modes:
        print(f"  {note}")


def per_line(path: Path) -> None:
    files = parse_diff(decode_diff(path.read_bytes()))
    lines = sum(len(h.lines) for f in files for h in f.hunks)
    raw_chars = sum(len(ln.text) + 1 for f in files for h in f.hunks for ln in h.lines)
    print(
        f"{len(files)} files, {lines} diff lines; raw line text {raw_chars / lines:.1f} chars/line"
    )
    for style in ("compact", "labeled"):
        diff = render_files(files, style)  # type: ignore[arg-type]
        system = render_prompt(
            "review/system.j2",
            style=style,
            has_tools=True,
            extra_instructions="",
            mode="json_schema",
        )
        user = render_prompt(
            "review/user.j2",
            title="t",
            description="",
            batch_index=1,
            batch_count=1,
            diff=diff,
            findings=[],
        )
        print(
            f"{style:8} diff {len(diff) / lines:5.1f} chars/line (numbering overhead "
            f"{(len(diff) - raw_chars) / lines:4.1f}), whole prompt "
            f"{(len(system) + len(user)) / lines:5.1f} chars/line, "
            f"~{estimate_tokens(system + user) / lines:4.1f} tokens/line"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--diff", type=Path, help="a unified diff file: chars per line only")
    ap.add_argument("--old", default="2.28.0")
    ap.add_argument("--new", default="2.32.3")
    ap.add_argument("--probe", action="store_true", help="call read_file/search_code first")
    ap.add_argument("--env", action="append", default=[], help="K=V for nova's environment")
    ap.add_argument("--dump", type=Path, help="write every recorded request here (JSON)")
    args = ap.parse_args()
    if args.diff:
        per_line(args.diff)
        return
    repo = build_repo(args.old, args.new)
    run = review(repo, args.probe, dict(kv.split("=", 1) for kv in args.env))
    if args.dump:
        args.dump.write_text(json.dumps(run["requests"], indent=1), encoding="utf-8")
    report(run, repo)


if __name__ == "__main__":
    main()
