"""The image, built once per session from the Dockerfile exactly as shipped, with podman.

Runs only with NOVA_CONTAINER_TESTS=1 (scripts/container/smoke.sh sets it): building takes
minutes and the image store is the machine's. Without podman, or when the build cannot run,
every test here is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TAG = os.environ.get("NOVA_TEST_IMAGE", "localhost/nova:smoke")
# runc: crun fails on hosts with hybrid cgroups; podman's default rlimits are refused there.
PODMAN = ("podman", "--runtime", "runc")
ULIMITS = ("--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024")
# What every smoke run gets: the host network (the in-repo servers listen on 127.0.0.1),
# a read-only root, and tmpfs for /tmp and HOME.
RUN = (
    *PODMAN,
    "run",
    "--rm",
    "--network=host",
    *ULIMITS,
    "--read-only",
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/home/nova:rw,U",  # U: owned by the image user
    "-e",
    "HOME=/home/nova",
)


@dataclass
class Image:
    tag: str
    build_log: str

    def run(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        mounts: dict[Path, str] | None = None,
        entrypoint: str | None = None,
        timeout: float = 600,
    ) -> subprocess.CompletedProcess:
        """``podman run`` the image; ``env`` values are passed through the environment of
        podman itself (``-e NAME``), never on its command line. ``mounts``: host path ->
        path in the container."""
        cmd = [*RUN]
        for name in env or {}:
            cmd += ["-e", name]
        for host, inside in (mounts or {}).items():
            cmd += ["-v", f"{host}:{inside}"]
        if entrypoint:
            cmd += ["--entrypoint", entrypoint]
        cmd += [self.tag, *args]
        return subprocess.run(
            cmd, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout
        )


def _why_not() -> str | None:
    if os.environ.get("NOVA_CONTAINER_TESTS") != "1":
        return "container tests run with NOVA_CONTAINER_TESTS=1 (scripts/container/smoke.sh)"
    if shutil.which("podman") is None:
        return "podman is not installed (apt-get install podman runc debootstrap)"
    return None


@pytest.fixture(scope="session")
def image() -> Iterator[Image]:
    reason = _why_not()
    if reason:
        pytest.skip(reason)
    base = subprocess.run(
        ["bash", str(ROOT / "scripts/container/base.sh")],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if base.returncode != 0:
        pytest.skip(f"no base image: {base.stderr.strip().splitlines()[-1:]}")
    build = subprocess.run(
        [*PODMAN, "build", "--pull=never", "--network=host", *ULIMITS, "-t", TAG, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    yield Image(TAG, build.stdout)


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A tmp dir the image's user (uid 10001) may write to, like a CI workspace."""
    tmp_path.chmod(0o777)
    return tmp_path


def open_to_all(path: Path) -> None:
    """Let uid 10001 write a repository the test (root) made."""
    for p in [path, *path.rglob("*")]:
        p.chmod(0o777 if p.is_dir() else 0o666)
