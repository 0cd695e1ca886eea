"""A testgen job's checkout, local and in a Kubernetes init container: the token reaches
the git server as an Authorization header, never in the URL; the checkout is the head."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from bot.errors import ServiceError
from bot.serve.checkout import checkout
from bot.serve.executors.kubernetes import CLONE_SCRIPT
from bot.serve.jobs import JobRequest
from bot.serve.origins import Origins
from tests.conftest import GitRepo
from tests.serve.support import GitHTTP
from tests.servers.base import LocalHTTPServer

TOKEN = "ghs_checkout_token_0123456789"


class GitRefusing(LocalHTTPServer):
    """A git HTTP server that records each request's path and Authorization, and answers
    404 (nothing to clone)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                owner.seen.append((self.path, self.headers.get("authorization", "")))
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def git_server() -> Iterator[GitRefusing]:
    server = GitRefusing().start()
    yield server
    server.stop()


def _request(clone_url: str, head: str) -> JobRequest:
    return JobRequest("github", "testgen", "github:a/b@main", "a/b", head, "d", clone_url=clone_url)


def _expected() -> str:
    return "Basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()


def _commit(repo: GitRepo) -> str:
    repo.write("a.py", "x = 1\n")
    head = repo.commit("one")
    repo.write("a.py", "x = 2\n")
    repo.commit("two")  # the branch moved on: the checkout must be the merged head
    return head


def _head(path: Path) -> str:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True)
    return done.stdout.decode().strip()


@pytest.fixture
def git_http(tmp_path: Path) -> Iterator[GitHTTP]:
    server = GitHTTP(tmp_path / "served").start()
    yield server
    server.stop()


def test_local_checkout_at_the_head(repo: GitRepo, git_http: GitHTTP, tmp_path: Path) -> None:
    head = _commit(repo)
    git_http.publish(repo.path, "a/b.git")
    env = {"PATH": os.environ["PATH"], "GITHUB_TOKEN": TOKEN, "HOME": str(tmp_path)}
    origins = Origins({"github": git_http.url})
    path = asyncio.run(checkout(_request(f"{git_http.url}/a/b.git", head), tmp_path, env, origins))
    assert _head(path) == head
    assert {auth for _, auth in git_http.seen} == {_expected()}


def test_local_checkout_sends_the_token_as_a_header(
    git_server: GitRefusing, tmp_path: Path
) -> None:
    env = {"PATH": os.environ["PATH"], "GITHUB_TOKEN": TOKEN, "HOME": str(tmp_path)}
    base = f"http://127.0.0.1:{git_server.port}"
    with pytest.raises(ServiceError, match="git clone failed") as failed:
        asyncio.run(
            checkout(
                _request(f"{base}/a/b.git", "f" * 40), tmp_path, env, Origins({"github": base})
            )
        )
    assert TOKEN not in str(failed.value)
    (path, auth), *_ = git_server.seen
    assert path.startswith("/a/b.git/info/refs") and TOKEN not in path
    assert auth == _expected()


def test_a_queued_clone_url_on_another_host_is_never_cloned(
    git_server: GitRefusing, tmp_path: Path
) -> None:
    env = {"PATH": os.environ["PATH"], "GITHUB_TOKEN": TOKEN, "HOME": str(tmp_path)}
    request = _request(f"http://127.0.0.1:{git_server.port}/a/b.git", "f" * 40)
    with pytest.raises(ServiceError, match="no clone URL on the configured host"):
        asyncio.run(checkout(request, tmp_path, env, Origins({"github": "https://github.com"})))
    assert git_server.seen == []


def _script(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {"PATH": os.environ["PATH"], "HOME": env["NOVA_WORK"], **env}
    return subprocess.run(["sh", "-c", CLONE_SCRIPT], env=full, capture_output=True, text=True)


def test_the_init_containers_script_checks_out_the_head(
    repo: GitRepo, git_http: GitHTTP, tmp_path: Path
) -> None:
    head = _commit(repo)
    git_http.publish(repo.path, "a/b.git")
    work = tmp_path / "work"
    work.mkdir()
    done = _script(
        {
            "NOVA_WORK": str(work),
            "NOVA_HOST": "github",
            "NOVA_CLONE_URL": f"{git_http.url}/a/b.git",
            "NOVA_GIT_BASE": git_http.url,
            "NOVA_HEAD": head,
            "GITHUB_TOKEN": TOKEN,
        }
    )
    assert done.returncode == 0, done.stderr
    assert _head(work / "checkout") == head


def test_the_init_containers_script_sends_the_token_as_a_header(
    git_server: GitRefusing, tmp_path: Path
) -> None:
    base = f"http://127.0.0.1:{git_server.port}"
    done = _script(
        {
            "NOVA_WORK": str(tmp_path),
            "NOVA_HOST": "github",
            "NOVA_CLONE_URL": f"{base}/a/b.git",
            "NOVA_GIT_BASE": base,
            "NOVA_HEAD": "f" * 40,
            "GITHUB_TOKEN": TOKEN,
        }
    )
    assert done.returncode != 0 and TOKEN not in done.stderr + done.stdout
    (path, auth), *_ = git_server.seen
    assert TOKEN not in path and auth == _expected()


def test_the_init_containers_script_refuses_another_host(
    git_server: GitRefusing, tmp_path: Path
) -> None:
    done = _script(
        {
            "NOVA_WORK": str(tmp_path),
            "NOVA_HOST": "github",
            "NOVA_CLONE_URL": f"http://127.0.0.1:{git_server.port}/a/b.git",
            "NOVA_GIT_BASE": "https://github.com",
            "NOVA_HEAD": "f" * 40,
            "GITHUB_TOKEN": TOKEN,
        }
    )
    assert done.returncode == 2 and "refused" in done.stderr
    assert git_server.seen == []
