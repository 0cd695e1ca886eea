"""The local GitLab and Phorge of the conversation tests (GitHub's ``gh`` is global)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hosts.gitlab.test_gitlab import JOB_TOKEN, TOKEN
from tests.servers.conduit_server import TOKEN as CONDUIT_TOKEN
from tests.servers.conduit_threads import FakePhorge
from tests.servers.gitlab_server import FakeGitLab


@pytest.fixture
def gl(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitLab]:
    server = FakeGitLab(TOKEN, job_token=JOB_TOKEN).start()
    monkeypatch.setenv("GITLAB_TOKEN", TOKEN)
    monkeypatch.setenv("GITLAB_URL", server.url)
    yield server
    server.stop()


@pytest.fixture
def phorge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePhorge]:
    server = FakePhorge(extension=True, respond_extension=True).start()
    monkeypatch.setenv("PHABRICATOR_URL", server.url)
    monkeypatch.setenv("PHABRICATOR_API_TOKEN", CONDUIT_TOKEN)
    yield server
    server.stop()
