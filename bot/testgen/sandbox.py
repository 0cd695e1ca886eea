"""Run generated tests (untrusted code) in a subprocess: scrubbed environment without any
token, a timeout, an output cap, a memory limit (``RLIMIT_AS``) and no network where the
OS allows (``unshare --net``)."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["RunResult", "network_isolation", "run_sandboxed"]

OUTPUT_CAP = 20_000
_KEEP = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")


@dataclass(frozen=True)
class RunResult:
    returncode: int
    output: str  # stdout + stderr, capped (the tail is kept: failures are at the end)
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and not self.timed_out


@lru_cache(maxsize=1)
def network_isolation() -> list[str]:
    """The command prefix that removes network access, if this machine allows it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    try:
        ok = (
            subprocess.run(
                [unshare, "--net", "--map-root-user", "true"], capture_output=True, timeout=10
            ).returncode
            == 0
        )
        if ok:
            return [unshare, "--net", "--map-root-user"]
        ok = (
            subprocess.run([unshare, "--net", "true"], capture_output=True, timeout=10).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [unshare, "--net"] if ok else []


def clean_env(
    extra: dict[str, str] | None = None, bin_dirs: tuple[str, ...] = ()
) -> dict[str, str]:
    """Only what a test run needs: no tokens, no NOVA_* settings, a throwaway HOME.

    Bytecode is written as Python normally does (PYTHONDONTWRITEBYTECODE is not passed
    on): pytest caches its assertion rewrites of plugin modules that way, and without the
    cache it redoes them on every run (2.2 s instead of 1.0 s for a one-test run with
    hypothesis and anyio installed). ``Workspace`` makes sure no stale bytecode of a file
    it rewrote can run. ``bin_dirs`` come first on PATH (the project's interpreter's, its
    ``node_modules/.bin``); else the directory of the Python that runs Nova."""
    env = {k: v for k, v in os.environ.items() if k in _KEEP}
    first = bin_dirs or (str(Path(sys.executable).parent),)
    env["PATH"] = os.pathsep.join([*first, env.get("PATH", "")])
    env["HOME"] = tempfile.gettempdir()
    env["PYTHONHASHSEED"] = "0"
    env.update(extra or {})
    return env


def _address_space_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:  # in the child, before exec: the limit is inherited by its children
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run_sandboxed(
    cmd: list[str],
    cwd: Path,
    *,
    timeout: float = 120.0,
    env: dict[str, str] | None = None,
    memory_limit: int | None = None,
    bin_dirs: tuple[str, ...] = (),
) -> RunResult:
    """Run ``cmd`` in its own process group; on timeout the whole group is killed (test
    runners start workers: node --test runs each file in a child process).
    ``memory_limit``: bytes of address space (RLIMIT_AS) for the process and its children;
    an allocation past it fails (Python raises MemoryError)."""
    try:
        proc = subprocess.Popen(
            [*network_isolation(), *cmd],
            cwd=cwd,
            env=clean_env(env, bin_dirs),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
            preexec_fn=(_address_space_limit(memory_limit) if memory_limit else None),
        )
    except OSError as exc:
        return RunResult(-1, f"could not run {cmd[0]}: {exc}")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return RunResult(-1, (out + err)[-OUTPUT_CAP:] + f"\n[timed out after {timeout:g}s]", True)
    return RunResult(proc.returncode, (out + err)[-OUTPUT_CAP:])
