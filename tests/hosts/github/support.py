"""GitHub fixtures shared by the GitHub test modules (registered in conftest.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.conftest import GitRepo
from tests.hosts.cart import TITLE, cart_change
from tests.servers.github_server import FakeGitHub, PullSpec

REPO = "acme/shop"
TOKEN = "ghs_testtoken0000000000000000000000"


def pull_from_repo(repo: GitRepo, base: str, head: str, number: int = 1, **kw) -> PullSpec:
    """A pull request whose files and patches are git's own diff of base..head."""
    files = files_between(repo, base, head)
    contents = {}
    for path in repo.git("ls-tree", "-r", "--name-only", head).split():
        blob = repo.git("show", f"{head}:{path}") if not path.endswith(".png") else ""
        contents[path] = blob
    return PullSpec(
        repo=REPO, number=number, head_sha=head, base_sha=base, files=files, contents=contents, **kw
    )


def files_between(repo: GitRepo, base: str, head: str) -> list[dict]:
    """The files API's entries (with patches) for git's diff of base..head."""
    files = []
    for row in repo.git("diff", "--name-status", "-M", base, head).splitlines():
        status, *paths = row.split("\t")
        new, old = paths[-1], paths[0]
        kind = {"A": "added", "D": "removed", "M": "modified", "R": "renamed"}[status[0]]
        raw = repo.git("diff", "-M", base, head, "--", *dict.fromkeys([old, new]))
        patch = raw[raw.index("@@") :] if "@@" in raw else None
        body = patch or ""
        entry = {
            "filename": new,
            "status": kind,
            "patch": patch,
            "additions": len(re.findall(r"^\+", body, re.M)),
            "deletions": len(re.findall(r"^-", body, re.M)),
        }
        if kind == "renamed":
            entry["previous_filename"] = old
        files.append(entry)
    return files


@pytest.fixture
def gh(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    server = FakeGitHub(TOKEN).start()
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", server.base_url)
    monkeypatch.setenv("NOVA_GITHUB_WRITE_INTERVAL", "0")
    yield server
    server.stop()


@pytest.fixture
def pr(repo: GitRepo, gh: FakeGitHub) -> PullSpec:
    base, head = cart_change(repo)
    return gh.add_pull(pull_from_repo(repo, base, head, title=TITLE))
