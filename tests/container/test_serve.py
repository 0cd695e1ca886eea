"""``nova serve`` in the image, as the one-shot job runs: uid 10001, a read-only root, a
writable data volume. It listens, is ready because its queue's storage is writable, verifies
a webhook before anything else, and keeps its queue on the volume."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.container.conftest import PODMAN, RUN, Image
from tests.serve.support import GH_SECRET, sign

pytestmark = pytest.mark.container


@pytest.fixture
def served(image: Image, shared: Path) -> Iterator[tuple[str, list[str], Path]]:
    """The image's ``serve`` on a free port of the host network; (url, its log, data dir)."""
    name = f"nova-serve-smoke-{os.getpid()}"
    data = shared / "data"
    data.mkdir()
    data.chmod(0o777)
    cmd = [*RUN, "--name", name, "-e", "NOVA_GITHUB_WEBHOOK_SECRET", "-v", f"{data}:/data"]
    cmd += [image.tag, "serve", "--port", "0", "--host", "127.0.0.1"]
    env = {**os.environ, "NOVA_GITHUB_WEBHOOK_SECRET": GH_SECRET}
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    log: list[str] = []
    url = ""
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # ends when the container exits
            log.append(line)
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                url = m.group(1)
                break
        assert url, "".join(log)
        yield url, log, data
    finally:
        subprocess.run([*PODMAN, "rm", "-f", name], capture_output=True, timeout=60)
        log.append(proc.communicate(timeout=60)[1] or "")  # the rest, and the pipe closed


def test_the_image_serves_webhooks_on_a_read_only_root(
    served: tuple[str, list[str], Path],
) -> None:
    url, log, data = served
    with httpx.Client(base_url=url, timeout=10) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200, "".join(log)
        body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
        headers = {"X-GitHub-Event": "ping", "X-GitHub-Delivery": "container-1"}
        bad = client.post("/webhooks/github", content=body, headers=headers)
        assert bad.status_code == 401  # no signature: refused before anything is parsed
        signed = {**headers, "X-Hub-Signature-256": sign(body)}
        ok = client.post("/webhooks/github", content=body, headers=signed)
        assert ok.status_code == 200, ok.text
        assert "nova_serve" in client.get("/metrics").text
    assert (data / "queue.sqlite3").is_file(), list(data.rglob("*"))  # on the volume
    assert GH_SECRET not in "".join(log)
