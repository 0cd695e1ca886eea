"""The host harnesses every contract test runs against: a new host adds its harness module
and one entry in ``HARNESSES``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import GitRepo
from tests.hosts.contract import HostChange, HostHarness, build_change, new_side_lines
from tests.hosts.harness_github import GitHubHarness
from tests.hosts.harness_gitlab import GitLabHarness
from tests.hosts.harness_phabricator import PhabricatorHarness

HARNESSES: tuple[type[HostHarness], ...] = (GitHubHarness, GitLabHarness, PhabricatorHarness)


@pytest.fixture(params=HARNESSES, ids=lambda harness: harness.name)
def host(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[HostHarness]:
    harness: HostHarness = request.param()
    harness.start(request, monkeypatch)
    yield harness
    harness.stop()


@pytest.fixture
def change(host: HostHarness, repo: GitRepo) -> HostChange:
    """The shared change (tests/hosts/contract.py), made on the host's server."""
    base, head = build_change(repo)
    ref = host.add_change(repo, base, head)
    return HostChange(ref, base, head, new_side_lines(repo, base, head))
