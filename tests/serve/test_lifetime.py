"""Jobs die with the server: a real ``nova serve`` with a running job, stopped with SIGTERM
or killed with ``kill -9``; the job's process must be gone either way (a job left running
would run a second time after the restart, and holds its token)."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.serve.support import FAKE_JOB, ServeProcess, base_env, github_post, pull_request, started
from tests.servers.base import JsonHandler, LocalHTTPServer

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its new parent to reap it counts as dead)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _alive(pid)


@pytest.mark.parametrize("how", ["kill9", "stop"])
def test_a_running_job_dies_with_its_server(how: str, tmp_path: Path) -> None:
    env = base_env(
        tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_HOLD=str(tmp_path / "never")
    )
    server = ServeProcess(tmp_path / "data", env).start()
    try:
        github_post(server.client, "pull_request", pull_request("a/b", 1, "a" * 40), "d")
        deadline = time.monotonic() + 60
        while not started(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.02)
        (job,) = started(tmp_path)
        assert _alive(job["pid"])
        getattr(server, how)()
        assert _gone(job["pid"]), f"job {job['pid']} outlived its server ({how})"
    finally:
        server.stop()


class Hanging(LocalHTTPServer):
    """A git host that never answers (a stalled clone)."""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:  # noqa: N802
                owner.stopping.wait(60)

        return Handler


def _children(pid: int, name: str) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm, rest = text.split("(", 1)[1].rsplit(")", 1)
        if int(rest.split()[1]) == pid and comm == name:
            found.append(int(stat.parent.name))
    return found


def test_a_clone_in_progress_dies_with_its_server(tmp_path: Path) -> None:
    git = Hanging().start()
    env = base_env(
        tmp_path,
        NOVA_SERVE_JOB_COMMAND=FAKE_JOB,
        NOVA_SERVE_TESTGEN="true",
        GITHUB_API_URL=f"http://127.0.0.1:{git.port}",
        GITHUB_TOKEN="ghs_clone_token_0123",
    )
    server = ServeProcess(tmp_path / "data", env).start()
    try:
        push = {
            "ref": "refs/heads/main",
            "after": "a" * 40,
            "repository": {"full_name": "acme/shop", "default_branch": "main"},
        }
        assert github_post(server.client, "push", push, "p").status_code == 202
        deadline = time.monotonic() + 60
        while not _children(server.proc.pid, "git") and time.monotonic() < deadline:
            time.sleep(0.02)
        (clone,) = _children(server.proc.pid, "git")
        server.kill9()
        assert _gone(clone), "the clone (holding the job's token) outlived its server"
    finally:
        server.stop()
        git.stop()
