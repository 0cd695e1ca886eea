"""Starting ``nova serve`` as a real process (uvicorn on port 0) and talking to it with
httpx: signed deliveries, waiting on /metrics, the fake job's records."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx

from tests.servers.base import JsonHandler, LocalHTTPServer

GH_SECRET = "gh-webhook-secret-0123456789"
GL_TOKEN = "gl-webhook-token-0123456789"
PHAB_SECRET = "phab-webhook-secret-0123456789"
HM_AUTH = "harbor:master-pass-0123456789"
SECRETS = {
    "NOVA_GITHUB_WEBHOOK_SECRET": GH_SECRET,
    "NOVA_GITLAB_WEBHOOK_TOKEN": GL_TOKEN,
    "NOVA_PHABRICATOR_WEBHOOK_SECRET": PHAB_SECRET,
    "NOVA_HARBORMASTER_AUTH": HM_AUTH,
}
FAKE_JOB = f"{sys.executable} {Path(__file__).with_name('fake_job.py')}"


class ServeProcess:
    """``nova serve`` in a subprocess; ``url`` once it listens."""

    def __init__(self, data_dir: Path, env: dict[str, str], *args: str) -> None:
        self.data_dir = data_dir
        self.env = env
        self.args = args
        self.lines: list[str] = []
        self.url = ""

    def start(self) -> ServeProcess:
        cmd = [sys.executable, "-m", "bot", "serve", "--port", "0"]
        cmd += ["--data-dir", str(self.data_dir), *self.args]
        self.proc = subprocess.Popen(
            cmd, env=self.env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
        )
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                self.url = m.group(1)
                break
        assert self.url, "".join(self.lines)
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()
        self.client = httpx.Client(base_url=self.url, timeout=10)
        return self

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(15)
        self._closed()

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait(5)
        self._closed()

    def _closed(self) -> None:
        self.drain.join(5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        self.client.close()

    def metrics(self) -> dict[str, float]:
        text = self.client.get("/metrics").text
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def wait_for(self, predicate: Any, what: str, timeout: float = 60.0) -> dict[str, float]:
        """Poll /metrics until ``predicate(metrics)``; fails with the server's log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.metrics()
            if predicate(m):
                return m
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}: {m}\n{''.join(self.lines)}")


def ended(m: dict[str, float]) -> float:
    return sum(v for k, v in m.items() if k.startswith("nova_serve_jobs_total{"))


def base_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOVA_")}
    env.update(SECRETS)
    env.update({"NOVA_FAKE_DIR": str(tmp), **extra})
    return env


def sign(body: bytes, secret: str = GH_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def github_post(
    client: httpx.Client,
    event: str,
    payload: dict[str, Any],
    delivery: str,
    secret: str | None = GH_SECRET,
) -> httpx.Response:
    body = json.dumps(payload).encode()
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery}
    if secret is not None:
        headers["X-Hub-Signature-256"] = sign(body, secret)
    return client.post("/webhooks/github", content=body, headers=headers)


def pull_request(
    repo: str, number: int, head: str, action: str = "opened", **extra: Any
) -> dict[str, Any]:
    return {
        "action": action,
        "number": number,
        "pull_request": {"number": number, "draft": False, "head": {"sha": head}},
        "repository": {"full_name": repo, "default_branch": "main"},
        "sender": {"login": "octocat", "type": "User"},
        **extra,
    }


def basic(auth: str = HM_AUTH) -> str:
    return "Basic " + base64.b64encode(auth.encode()).decode()


def started(tmp: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(tmp.glob("started-*.json"))]


def ended_records(tmp: Path) -> list[dict[str, Any]]:
    path = tmp / "ended.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def max_overlap(records: list[dict[str, Any]]) -> int:
    """The most jobs alive at once, from their start and end times."""
    edges = sorted([(r["start"], 1) for r in records] + [(r["end"], -1) for r in records])
    alive = peak = 0
    for _, step in edges:
        alive += step
        peak = max(peak, alive)
    return peak


class GitHTTP(LocalHTTPServer):
    """Git's "dumb" HTTP protocol over a directory of bare repositories (``<root>/<path>``
    after ``git update-server-info``), recording each request's path and Authorization."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seen: list[tuple[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def publish(self, repo: Path, path: str) -> None:
        bare = self.root / path
        subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
        subprocess.run(["git", "-C", str(bare), "update-server-info"], check=True)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:  # noqa: N802
                owner.seen.append((self.path, self.headers.get("authorization", "")))
                file = (owner.root / self.path.split("?")[0].lstrip("/")).resolve()
                if not file.is_file() or owner.root.resolve() not in file.parents:
                    self.send_json(404, {})
                    return
                data = file.read_bytes()
                self.send_response(200)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (the peak) of a process, in KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = int(value.split()[0])
    return out


class SlowClient(threading.Thread):
    """An unauthenticated httpx client that posts ``size`` MiB to a webhook with a
    well-formed but wrong signature, sends all but the last ``held`` MiB, then waits for
    ``release`` before it sends the rest. ``sent`` is set once the server took everything
    but the held part; ``status`` is the answer (or the error) once the request ended."""

    MIB = b"x" * (1 << 20)

    def __init__(
        self,
        url: str,
        release: threading.Event,
        path: str = "/webhooks/github",
        headers: dict[str, str] | None = None,
        size: int = 25,
    ) -> None:
        super().__init__(daemon=True)
        self.url, self.release, self.path, self.size, self.held = url, release, path, size, 1
        self.headers = {"X-Hub-Signature-256": "sha256=" + "0" * 64} if headers is None else headers
        self.sent = threading.Event()
        self.status: int | str | None = None

    def body(self) -> Any:
        for n in range(self.size):
            if n == self.size - self.held:
                self.sent.set()
                self.release.wait()
            yield self.MIB

    def run(self) -> None:
        headers = {"X-GitHub-Event": "push", "Content-Length": str(self.size << 20), **self.headers}
        try:
            with httpx.Client(timeout=120) as client:
                answer = client.post(self.url + self.path, content=self.body(), headers=headers)
                self.status = answer.status_code
        except httpx.HTTPError as exc:
            self.status = type(exc).__name__

    def settled(self) -> bool:
        """Either the server read all it can get, or it answered (refused, timed out)."""
        return self.sent.is_set() or not self.is_alive()
