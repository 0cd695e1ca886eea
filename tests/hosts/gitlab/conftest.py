"""The GitLab tests' fixtures: the local GitLab server and the cart merge request on it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.conftest import GitRepo
from tests.hosts.cart import TITLE, cart_change
from tests.hosts.gitlab.test_gitlab import JOB_TOKEN, TOKEN, mr_from_repo
from tests.servers.gitlab_server import FakeGitLab, MergeRequestSpec


@pytest.fixture(autouse=True)
def no_gitlab_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite may itself run in GitLab CI: none of its variables leak in."""
    for name in list(os.environ):
        if name.startswith(("GITLAB_", "CI_")):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def gl(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitLab]:
    server = FakeGitLab(TOKEN, job_token=JOB_TOKEN).start()
    monkeypatch.setenv("GITLAB_TOKEN", TOKEN)
    monkeypatch.setenv("GITLAB_URL", server.url)
    yield server
    server.stop()


@pytest.fixture
def mr(repo: GitRepo, gl: FakeGitLab) -> MergeRequestSpec:
    base, head = cart_change(repo)
    return gl.add_merge_request(mr_from_repo(repo, base, head, title=TITLE))
