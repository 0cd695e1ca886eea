"""A real ``nova serve`` under load it never authenticated: slow clients that each send
24 of 25 MiB with a wrong signature and hold back the last MiB. The server's peak memory
stays within its body budget (before: 40 → 252 MiB with 8 such clients), and a small
signed delivery is still answered while they hold on."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.support import (
    FAKE_JOB,
    ServeProcess,
    SlowClient,
    base_env,
    github_post,
    memory_kib,
    pull_request,
)

pytestmark = pytest.mark.slow
MIB = 1024  # KiB


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    env = base_env(
        tmp_path,
        NOVA_SERVE_JOB_COMMAND=FAKE_JOB,
        NOVA_SERVE_BODY_MEMORY=str(64 << 20),
        NOVA_SERVE_BODY_TIMEOUT="4",
    )
    s = ServeProcess(tmp_path / "data", env).start()
    yield s
    s.stop()


def test_slow_unauthenticated_bodies_keep_memory_within_the_budget(server: ServeProcess) -> None:
    github_post(server.client, "pull_request", pull_request("a/b", 1, "a" * 40), "warm")
    before = memory_kib(server.proc.pid)["VmRSS"]
    release = threading.Event()
    clients = [SlowClient(server.url, release) for _ in range(8)]
    for c in clients:
        c.start()
    try:
        deadline = time.monotonic() + 120
        while not all(c.settled() for c in clients) and time.monotonic() < deadline:
            time.sleep(0.05)
        signed = github_post(server.client, "pull_request", pull_request("a/b", 2, "b" * 40), "ok")
        peak = memory_kib(server.proc.pid)["VmHWM"]
    finally:
        release.set()
        for c in clients:
            c.join(60)
    assert signed.status_code == 202  # a real delivery still gets in
    # the budget (64 MiB) + one body copied once (25 MiB) + slack; 8 bodies would be 200
    assert peak - before < (64 + 25 + 30) * MIB, (before, peak)
    assert all(c.status in (401, 408, 503) or isinstance(c.status, str) for c in clients)
    assert server.proc.poll() is None


def test_a_wrong_gitlab_token_or_a_malformed_signature_is_refused_before_the_body(
    server: ServeProcess,
) -> None:
    """The refusal comes while the client still withholds part of its body: the server
    answered from the headers alone."""
    for path, headers in (
        ("/webhooks/gitlab", {"X-Gitlab-Token": "wrong"}),
        ("/webhooks/github", {"X-Hub-Signature-256": "sha1=abc"}),
        ("/webhooks/phabricator", {}),
    ):
        release = threading.Event()
        client = SlowClient(server.url, release, path, headers)
        client.start()
        client.join(60)  # ends without release: answered before the body was read
        assert client.status == 401 or isinstance(client.status, str), client.status
        assert not client.sent.is_set()
        release.set()
