"""A small pull request on the local GitHub server and a scripted model that finds one
`error` and one `warning` on it; helpers to run Nova and read what it posted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from bot.cli import cli
from tests.conftest import GitRepo
from tests.hosts.github.support import REPO, files_between, pull_from_repo
from tests.servers.github_server import FakeGitHub, PullSpec

BASE = "def pay(order):\n    return order.total\n"
HEAD = (
    "def pay(order):\n"
    "    total = order.total\n"
    "    fee = total * 0.3\n"
    "    print('paid', total)\n"
    "    return total + fee\n"
)
ERROR = {"path": "pay.py", "line": 3, "code": "    fee = total * 0.3", "severity": "error"}
WARNING = {"path": "pay.py", "line": 4, "code": "    print('paid', total)", "severity": "warning"}


def findings(*which: dict[str, Any]) -> str:
    bodies = {"error": "the fee is 30%, not 3%", "warning": "print left in"}
    return json.dumps(
        {
            "summary": "Payment fee.",
            "comments": [{**w, "body": bodies[w["severity"]]} for w in which],
        }
    )


def open_pull(repo: GitRepo, gh: FakeGitHub) -> PullSpec:
    repo.write("pay.py", BASE)
    base = repo.commit("base")
    repo.write("pay.py", HEAD)
    head = repo.commit("fee")
    return gh.add_pull(pull_from_repo(repo, base, head, title="Payment fee"))


def push(repo: GitRepo, gh: FakeGitHub, pr: PullSpec, text: str) -> PullSpec:
    """A new commit on the pull request (its files, and the comparison since the last head)."""
    repo.write("pay.py", text)
    head = repo.commit("push")
    gh.comparisons[(pr.head_sha, head)] = ("ahead", files_between(repo, pr.head_sha, head))
    return gh.add_pull(pull_from_repo(repo, pr.base_sha, head, title="Payment fee"))


def nova(tmp_path: Path, *args: str) -> Result:
    empty = tmp_path / "no-checkout"
    empty.mkdir(exist_ok=True)
    return CliRunner().invoke(
        cli, [*args[:1], "--repo", str(empty), "-q", *args[1:]], catch_exceptions=False
    )


def review(tmp_path: Path, *args: str) -> Result:
    return nova(
        tmp_path, "review", f"{REPO}#1", "--publish", "github", "--analyzers", "none", *args
    )


def inline(gh: FakeGitHub, severity: str) -> dict[str, Any]:
    """Nova's inline comment of that severity."""
    return next(
        c for c in gh.review_comments if "nova:fp:" in c["body"] and f"**{severity}**" in c["body"]
    )


def nova_replies(gh: FakeGitHub) -> list[dict[str, Any]]:
    return [
        c for c in gh.review_comments if c.get("in_reply_to_id") and c["user"]["login"] == gh.login
    ]


def names_dismissal(summary: str, who: str, reason: str = "") -> bool:
    """A line of the summary names the dismissal, who made it and why (however rendered)."""
    return any(
        "dismissed" in line and who in line and reason in line for line in summary.splitlines()
    )
