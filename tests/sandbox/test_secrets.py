"""No process a generated test can reach holds a readable secret, on every isolation tier,
with Nova and the test running as an ordinary user (``nobody``), as the defect was found:
a real ``nova serve`` holding webhook secrets and tokens in its environment, and a real
``nova testgen`` job (its own token in its environment) whose model writes a test that
reads ``/proc/<pid>/environ`` of every process it can see, its parents first.

No process at all leaks: the children Nova keeps running (GitPython's ``git cat-file
--batch``, dumpable again after ``exec``) are started with the credentials blanked."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.sandbox.test_sandbox import AVAILABLE
from tests.servers.openai_server import FakeOpenAI, text, tool_call
from tests.testgen.test_testgen import GOOD, HEADER, build_python_sample

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534
SYSTEM_PYTHON = Path("/usr/bin/python3")
SECRETS = {
    "NOVA_GITHUB_WEBHOOK_SECRET": "fake-webhook-secret-0038-serve",
    "NOVA_GITLAB_WEBHOOK_TOKEN": "fake-gitlab-hook-0038-serve",
    "GITHUB_TOKEN": "fake-github-token-0038-serve",
    "GITLAB_TOKEN": "fake-gitlab-token-0038-job",
}

HOSTILE = (
    HEADER
    + """import json
import os

SECRETS = [bytes.fromhex(h) for h in {hexes!r}]
LOOT = pathlib.Path({loot!r})


def test_reads_every_environment():
    seen, readable, leaked, parents = [], [], [], []
    pid = os.getppid()
    while pid > 1 and len(parents) < 20:
        parents.append(pid)
        try:
            stat = pathlib.Path(f"/proc/{{pid}}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        seen.append(int(entry.name))
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        readable.append(int(entry.name))
        if any(s in env for s in SECRETS):
            cmd = (entry / "cmdline").read_bytes().replace(b"\\0", b" ")
            leaked.append([int(entry.name), cmd.decode(errors="replace")[:120]])
    try:
        LOOT.write_text(json.dumps({{"seen": seen, "readable": readable, "leaked": leaked,
                                    "parents": parents, "uid": os.getuid()}}))
    except OSError:
        pass
    assert len(leaked) == 0 and discount(100, 150) == 0
"""
)


def _as_nobody(cmd: list[str]) -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *cmd]


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory ``nobody`` owns, outside /tmp's pytest base (root's, mode 0700)."""
    if os.getuid() != 0 or shutil.which("setpriv") is None or not SYSTEM_PYTHON.exists():
        pytest.skip("needs root, setpriv and /usr/bin/python3 to run Nova as nobody")
    base = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="nova-nobody-"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def nobody_python(base: Path) -> Path:
    """A venv of the system Python that ``nobody`` can run, with this checkout's code and
    its dependencies (an editable install's ``.pth``, and the test venv's packages)."""
    venv = base / "venv"
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    (site / "a_nova_editable.pth").write_text(f"{ROOT}\n")
    (site / "z_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin" / "python"


def _chown(root: Path) -> None:
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(root)], check=True)


@pytest.mark.slow
@pytest.mark.parametrize("isolation", AVAILABLE)
def test_a_generated_test_reads_no_secret_of_any_nova_process(
    isolation: str, shared: Path, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    python = nobody_python(shared)
    sample = build_python_sample(GitRepo(shared / "repo"))
    loot = shared / "loot.json"
    hexes = [v.encode().hex() for v in SECRETS.values()]
    (shared / "home").mkdir()
    (shared / "patches").mkdir()
    _chown(shared)
    env = {k: v for k, v in os.environ.items() if k.startswith(("NOVA_LLM", "PATH", "LANG"))}
    env |= {"HOME": str(shared / "home"), "NOVA_TEST_ISOLATION": isolation}
    server = subprocess.Popen(
        _as_nobody([str(python), "-m", "bot", "serve", "--port", "0", "--data-dir", "data"]),
        cwd=shared,
        env=env | SECRETS,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        started = [server.stderr.readline()]
        while started[-1] and "http://" not in started[-1]:  # the URL, or EOF: it failed
            started.append(server.stderr.readline())
        assert "http://" in started[-1], started
        llm_env.enqueue(
            tool_call(
                "write_test_file", {"path": "tests/test_nova_good.py", "content": HEADER + GOOD}
            ),
            tool_call(
                "write_test_file",
                {
                    "path": "tests/test_nova_hostile.py",
                    "content": HOSTILE.format(hexes=hexes, loot=str(loot)),
                },
            ),
            text('{"summary": "tests"}'),
        )
        job = subprocess.run(
            _as_nobody(
                [str(python), "-m", "bot", "testgen", "HEAD", "--repo", str(sample.path), "-q"]
                + ["--patch-dir", str(shared / "patches"), "-o", "json", "--runs", "1"]
            ),
            cwd=shared,
            env=env | {"GITLAB_TOKEN": SECRETS["GITLAB_TOKEN"]},
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        if server.stderr is not None:
            server.stderr.close()
    assert job.returncode == 0, job.stdout[-2000:] + job.stderr[-2000:]
    data = json.loads(job.stdout)
    assert data["isolation"]["name"] == isolation
    if isolation == "none":  # nothing confines its writes: it says what it saw
        found = json.loads(loot.read_text())
        assert found["uid"] == NOBODY
        assert found["leaked"] == [] and server.pid in found["seen"]
        assert server.pid not in found["readable"]
        assert not set(found["parents"]) & set(found["readable"])
    reasons = {c["name"]: c["reason"] for c in data["dropped"]}
    kept = {c["name"] for c in data["kept"]}
    assert "test_good" in kept
    # the hostile test ran; it fails exactly when it read a secret
    assert "test_reads_every_environment" in kept | set(reasons)
    assert reasons.get("test_reads_every_environment") != "fails", reasons
    for secret in SECRETS.values():
        assert secret not in job.stdout + job.stderr
