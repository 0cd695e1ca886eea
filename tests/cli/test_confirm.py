"""``--confirm``: on a real terminal (a pty), Nova shows what it will post and asks; declined
means nothing is posted and exit 0. In CI (CI=true) it never asks."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hosts.github.support import REPO, TOKEN
from tests.servers.github_server import FakeGitHub, PullSpec

pytestmark = pytest.mark.slow  # every test here takes seconds: not in the fast lane


def _run_on_a_terminal(args: list[str], answer: str, env: dict[str, str]) -> tuple[int, str]:
    """Run nova with stdin and stderr on a pty; answer the first question asked."""
    controller, terminal = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", *args],
        stdin=terminal,
        stdout=subprocess.DEVNULL,
        stderr=terminal,
        env=env,
    )
    os.close(terminal)
    seen = b""
    answered = False
    while True:
        ready, _, _ = select.select([controller], [], [], 60)
        if not ready:
            proc.kill()
            raise AssertionError(f"no output for 60 s: {seen.decode(errors='replace')}")
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
        if not answered and b"Publish?" in seen:
            os.write(controller, answer.encode() + b"\n")
            answered = True
    proc.wait(timeout=60)
    os.close(controller)
    return proc.returncode, seen.decode(errors="replace")


@pytest.fixture
def env(gh: FakeGitHub, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": gh.base_url,
        "NOVA_GITHUB_WRITE_INTERVAL": "0",
        "PYTHONPATH": str(Path.cwd()),
    }


ARGS = ["review", f"{REPO}#1", "--publish", "github", "--confirm", "-q"]


@pytest.mark.parametrize(("answer", "posted"), [("n", False), ("y", True)])
def test_confirm_shows_what_will_be_posted_and_asks(
    pr: PullSpec, gh: FakeGitHub, env: dict[str, str], tmp_path: Path, answer: str, posted: bool
) -> None:
    events = tmp_path / "events.jsonl"
    args = [*ARGS, "--repo", str(tmp_path), "--events-file", str(events)]
    code, screen = _run_on_a_terminal(args, answer, env)
    assert code == 0, screen
    assert "About to publish the review of acme/shop#1: 1 inline" in screen
    assert "Not blocking (fail-on: " in screen and "1 finding: 0 errors, 1 warning" in screen
    assert "shop/total.py:1 [warning] F401" in screen
    assert bool(gh.issue_comments) is posted and bool(gh.reviews) is posted
    # the answer is a human-in-the-loop decision, as the host conversation's are
    (decision,) = [e for e in events.read_text().splitlines() if '"decision"' in e]
    assert '"handler": "terminal"' in decision and f'"allowed": {str(posted).lower()}' in decision


def test_ci_never_asks(pr: PullSpec, gh: FakeGitHub, env: dict[str, str], tmp_path: Path) -> None:
    args = [*ARGS, "--repo", str(tmp_path)]
    code, screen = _run_on_a_terminal(args, "n", {**env, "CI": "true"})
    assert code == 0 and "Publish?" not in screen
    assert len(gh.issue_comments) == 1
