"""The first screen of Nova's summary on a big change, on every surface (issue 29).

    python bench/summary.py [--every 9] [--show 15] [--nova-src /work/main]  # before

The change: requests 2.28.0 -> 2.32.3 (the PyPI sdists of bench/placement.py, in
bench/.cache), reviewed by `nova review` against the local GitHub, GitLab and Conduit
servers (tests/servers/) and in the terminal, with a scripted model
(tests/report/screen.py ``many_findings``: a finding on every N-th added line of each file
it is shown, one it cannot place, and a walkthrough line per file).

Printed per surface: the first ``--show`` rendered lines (blank lines and hidden markers
left out, as a reader sees them), then the checks: the verdict, the severity counts and the
walkthrough on the first screen, no "skipped" line outside the folded details, and the
counts adding up (every finding inline or listed, once). Exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from placement import CACHE, RELEASES, release_files  # noqa: E402

from tests.conftest import GitRepo  # noqa: E402
from tests.hosts.github.support import REPO, pull_from_repo  # noqa: E402
from tests.hosts.gitlab.test_gitlab import REF, mr_from_repo  # noqa: E402
from tests.report.screen import (  # noqa: E402
    Screen,
    many_findings,
    read_markdown,
    read_remarkup,
    read_text,
)
from tests.servers.conduit_server import TOKEN as PH_TOKEN  # noqa: E402
from tests.servers.conduit_server import FakeConduit, Revision, changes_from_git_diff  # noqa: E402
from tests.servers.github_server import FakeGitHub  # noqa: E402
from tests.servers.gitlab_server import FakeGitLab  # noqa: E402
from tests.servers.openai_server import FakeOpenAI  # noqa: E402

GH_TOKEN = "ghs_benchtoken000000000000000000000000"
GL_TOKEN = "gitlab-bench-token"


@contextlib.contextmanager
def started(server):  # type: ignore[no-untyped-def]
    server.start()
    try:
        yield server
    finally:
        server.stop()


def nova(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as empty:
        cmd = [sys.executable, "-m", "bot", "review", "--repo", empty, "-q", *args]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=empty)


def base_env(llm: FakeOpenAI, src: Path = ROOT) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOVA_", "OPENAI_", "GIT"))}
    env.update(
        NOVA_LLM_MODEL="openai:test-model",
        NOVA_LLM_BASE_URL=llm.base_url,
        NOVA_LLM_API_KEY="sk-bench-not-a-secret-0000000000",
        NOVA_FAIL_ON="error",
        PYTHONPATH=str(src),
    )
    return env


def surfaces(repo: GitRepo, env: dict[str, str]) -> Iterator[tuple[str, str, int]]:
    """(surface, rendered body, findings of the run) for each surface."""
    base, head = repo.git("rev-parse", "HEAD~1").strip(), repo.git("rev-parse", "HEAD").strip()
    with started(FakeGitHub(GH_TOKEN)) as gh:
        gh.add_pull(pull_from_repo(repo, base, head, title="requests 2.28 -> 2.32"))
        run = nova(
            {**env, "GITHUB_TOKEN": GH_TOKEN, "GITHUB_API_URL": gh.base_url,
             "NOVA_GITHUB_WRITE_INTERVAL": "0"},
            f"{REPO}#1", "--publish", "github", "-o", "json",
        )  # fmt: skip
        yield "GitHub summary", _only(gh.issue_comments, "body", run), _count(run)
        _inline_agrees(gh.issue_comments[0]["body"], [c["body"] for c in gh.review_comments])
    with started(FakeGitLab(GL_TOKEN)) as gl:  # type: ignore[no-untyped-call]
        gl.add_merge_request(mr_from_repo(repo, base, head, title="requests 2.28 -> 2.32"))
        run = nova(
            {**env, "GITLAB_TOKEN": GL_TOKEN, "GITLAB_URL": gl.url},
            REF, "--publish", "gitlab", "-o", "json",
        )  # fmt: skip
        notes = [n for n in gl.notes if "nova:summary" in n["body"]]
        yield "GitLab note", _only(notes, "body", run), _count(run)
        threads = [d["notes"][0]["body"] for d in gl.discussions]
        _inline_agrees(notes[0]["body"], threads)
    with started(FakeConduit(extension=True)) as phab:
        changes = changes_from_git_diff(repo.git("diff", "-M", base, head))
        phab.add_revision(Revision(123, "requests 2.28 -> 2.32", "", {4567: changes}, base=base))
        run = nova(
            {**env, "PHABRICATOR_URL": phab.url, "PHABRICATOR_API_TOKEN": PH_TOKEN},
            "D123", "--publish", "phabricator", "-o", "json",
        )  # fmt: skip
        comment = _only([{"t": c} for c in phab.comments(123)], "t", run)
        yield "Phabricator comment", comment, _count(run)
        inline = [i["content"] for i in phab.visible_inlines(123)]  # one finding each
        _inline_agrees(comment, ["**info**"] * len(inline))
    text = nova(env, "HEAD", "--repo", str(repo.path))
    counted = nova(env, "HEAD", "--repo", str(repo.path), "-o", "json")
    yield "terminal", text.stdout, _count(counted)


def _only(items: list[dict[str, str]], key: str, run: subprocess.CompletedProcess[str]) -> str:
    if len(items) != 1:
        raise SystemExit(f"expected one summary, got {len(items)}:\n{run.stderr[-3000:]}")
    return items[0][key]


def _inline_agrees(summary: str, inline: list[str]) -> None:
    """The summary's "N as new inline …" is the number of findings in the inline comments."""
    said = int(re.search(r"(\d+) as new inline", summary)[1])  # type: ignore[index]
    found = sum(len(re.findall(r"\*\*(?:error|warning|info)\*\*", b)) for b in inline)
    print(f"  inline: the summary says {said} findings inline; the inline comments hold {found}")
    if said != found:
        raise SystemExit("the inline count does not add up")


def _count(run: subprocess.CompletedProcess[str]) -> int:
    data = json.loads(run.stdout)
    return len(data["comments"]) + len(data["unplaced"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=9, help="a finding on every N-th added line")
    ap.add_argument("--show", type=int, default=15, help="rendered lines to print")
    ap.add_argument("--nova-src", type=Path, default=ROOT, help="run the `bot` of this checkout")
    args = ap.parse_args()
    files = release_files("requests")
    package, old, new = RELEASES["requests"]
    repo = GitRepo(CACHE / "repos" / f"{package}-{old}..{new}")
    failed = False
    with started(FakeOpenAI()) as llm:
        llm.responder = many_findings(files, args.every)
        readers = {"Phabricator comment": read_remarkup, "terminal": read_text}
        for name, body, findings in surfaces(repo, base_env(llm, args.nova_src)):
            screen: Screen = readers.get(name, read_markdown)(body)
            problems = screen.problems(findings)
            failed |= bool(problems)
            print(f"=== {name}: {len(body):,} characters, {findings} findings, "
                  f"{len(screen.open)} open lines, {len(screen.folded)} folded")  # fmt: skip
            for line in screen.open[: args.show]:
                print(f"  | {line[:110]}")
            print(f"  checks: {'ok' if not problems else '; '.join(problems)}\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
