"""Run generated tests (untrusted code) isolated by the strongest means this machine allows,
chosen at run time (``choose_isolation``) and named in the report:

- ``bubblewrap``: user, mount, PID, network, IPC and UTS namespaces. The root filesystem is
  read-only; the run sees its workspace and its own HOME and TMPDIR writable; ``/tmp``,
  the user's checkout, every home and the directories in ``NOVA_SANDBOX_HIDE`` are empty
  directories in its place, which Nova looks into afterwards; Nova's own package is shown
  read-only inside them (``confine``). Every process dies with the run.
- ``unshare``: PID and network namespaces (``unshare --pid --net --fork --kill-child``):
  every process dies with the run, no network, only the run's processes are visible. The
  filesystem is not confined.
- ``none``: a process group, and Nova's reaper kills what the run leaves behind; every
  Nova process is non-dumpable from its start (``bot/sandbox/guard.py``), so its
  ``/proc/<pid>/environ`` is root's: a test of the same (non-root) user cannot read it.

On every tier a run dies with the Nova process that started it (``PR_SET_PDEATHSIG``: the
first process of the run is killed, or under ``none`` the reaper is told and kills the
run's tree), also when that process is killed with SIGKILL; output is capped while it is
read.

On every tier: a scrubbed environment (no token), a fresh HOME and TMPDIR per run (removed
after it), a time limit, an output cap and a memory limit (``RLIMIT_DATA``, and
``RLIMIT_AS`` far above it). The reaper (``bot/sandbox/reaper.py``) is the run's first
process; it names the processes a run left behind, and files written to HOME (or, under
bubblewrap, to ``/tmp``) are named too: the runners drop the test that did it.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from bot.errors import ConfigError
from bot.sandbox.confine import BWRAP_BASE, RunBox, View, bwrap_argv, install_prefixes
from bot.sandbox.guard import set_parent_death_signal, undumpable

__all__ = [
    "ISOLATIONS",
    "Isolation",
    "RunResult",
    "View",
    "choose_isolation",
    "run_sandboxed",
]

OUTPUT_CAP = 20_000
REAPER = Path(__file__).with_name("reaper.py")
ISOLATIONS = ("auto", "bubblewrap", "unshare", "none")
_KEEP = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")
_TERM_GRACE = 5.0  # seconds the reaper has to kill a timed-out tree (tier "none")
_REPORT_CAP = 1 << 16  # bytes of the reaper's report read


@dataclass(frozen=True)
class Isolation:
    name: str  # bubblewrap | unshare | none
    why: str  # what holds, in plain words

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "why": self.why}


_WHY = {
    "bubblewrap": "bubblewrap: user, mount, PID and network namespaces; read-only root, "
    "only the workspace and the run's own HOME and TMPDIR writable; /tmp, the checkout, "
    "every home and the directories in NOVA_SANDBOX_HIDE are empty stand-ins Nova looks "
    "into afterwards; every process dies with the run",
    "unshare": "unshare: PID and network namespaces; every process dies with the run; the "
    "filesystem is not confined (install bubblewrap for that)",
    "none": "none: no namespaces are allowed here; every Nova process is non-dumpable, "
    "the reaper ends every process of a run and dies with the job; the network is the "
    "job's and the filesystem is not confined",
}


@dataclass(frozen=True)
class RunResult:
    returncode: int
    output: str  # stdout + stderr, capped (the tail is kept: failures are at the end)
    timed_out: bool = False
    left: tuple[str, ...] = ()  # command lines of the processes the run left behind
    outside: tuple[str, ...] = ()  # files the run wrote outside its workspace
    left_count: int = 0
    planted: tuple[str, ...] = ()  # files that change how tests run, added to the tree

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def escape(self, *, outside: bool = True) -> str | None:
        """Why the tests of this run cannot be trusted (processes left, files written
        outside -- unless ``outside`` is False --, files planted), or None."""
        why = []
        if self.left_count:
            names = ", ".join(self.left[:3])
            why.append(f"left {self.left_count} process(es) running after its run ({names})")
        if self.outside and outside:
            why.append(f"wrote outside its workspace: {', '.join(self.outside[:3])}")
        if self.planted:
            why.append(f"changed how tests run: wrote {', '.join(self.planted[:3])}")
        return "; ".join(why) or None


def _works(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@lru_cache(maxsize=1)
def _bwrap() -> tuple[str, ...]:
    """bwrap and how the run gets ``/proc``: its own, or (where a container runtime masks
    parts of ``/proc``, so a new one cannot be mounted) the container's, read-only, with
    Nova's process made non-dumpable; empty when bwrap does not work here."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return ()
    for proc in (("--proc", "/proc"), ("--ro-bind", "/proc", "/proc")):
        probe = [bwrap, *BWRAP_BASE, "--ro-bind", "/", "/", "--dev", "/dev", *proc]
        if _works([*probe, "--", "true"]):
            return (bwrap, *proc)
    return ()


@lru_cache(maxsize=1)
def _unshare() -> tuple[str, ...]:
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    base = (unshare, "--net", "--pid", "--fork", "--kill-child", "--mount-proc")
    for prefix in ((unshare, "--user", "--map-root-user", *base[1:]), base):
        if _works([*prefix, "true"]):
            return prefix
    return ()


def choose_isolation(wanted: str = "auto") -> Isolation:
    """The strongest isolation this machine allows (``auto``), or the named one; a named
    one that does not work here is a ``ConfigError``."""
    if wanted not in ISOLATIONS:
        raise ConfigError(f"test isolation {wanted!r}: one of {', '.join(ISOLATIONS)}")
    available = [
        name
        for name, ok in (("bubblewrap", _bwrap()), ("unshare", _unshare()), ("none", True))
        if ok
    ]
    why = dict(_WHY)
    if _bwrap()[1:] == ("--ro-bind", "/proc", "/proc"):
        why["bubblewrap"] += (
            "; /proc is the container's (a new one cannot be mounted here), and Nova's "
            "process is non-dumpable, so its environment there is not readable"
        )
    if os.geteuid() == 0:  # a root test may read any process: nothing above stops it
        why["none"] += (
            "; Nova runs as root here, so its tests do too and can read every process's "
            "environment: run Nova as an ordinary user"
        )
    if wanted == "auto":
        return Isolation(available[0], why[available[0]])
    if wanted not in available:
        raise ConfigError(
            f"test isolation {wanted!r} does not work on this machine "
            f"(available: {', '.join(available)}); see docs/testgen.md, Isolation"
        )
    return Isolation(wanted, why[wanted])


def clean_env(
    extra: dict[str, str] | None = None, bin_dirs: tuple[str, ...] = ()
) -> dict[str, str]:
    """Only what a test run needs: no tokens, no NOVA_* settings (HOME and TMPDIR are the
    run's own: ``run_sandboxed`` sets them).

    Bytecode is written as Python normally does (PYTHONDONTWRITEBYTECODE is not passed
    on): pytest caches its assertion rewrites of plugin modules that way, and without the
    cache it redoes them on every run (2.2 s instead of 1.0 s for a one-test run with
    hypothesis and anyio installed). ``Workspace`` makes sure no stale bytecode of a file
    it rewrote can run. ``bin_dirs`` come first on PATH (the project's interpreter's, its
    ``node_modules/.bin``); else the directory of the Python that runs Nova."""
    env = {k: v for k, v in os.environ.items() if k in _KEEP}
    first = bin_dirs or (str(Path(sys.executable).parent),)
    env["PATH"] = os.pathsep.join([*first, env.get("PATH", "")])
    env["PYTHONHASHSEED"] = "0"
    env.update(extra or {})
    return env


# a run's address space, in memory limits: shared libraries' code and the reservations
# of thread pools take far more address space than memory (torch: 3.2 GB for 0.8 GB)
ADDRESS_SPACE_TIMES = 16


def _in_child(limit: int | None, parent: int, deathsig: int) -> Callable[[], None]:
    """Runs in the child, before exec: it dies with ``parent`` (the job killed, even with
    SIGKILL), and ``limit`` bytes of written memory (``RLIMIT_DATA``; its address space
    ``ADDRESS_SPACE_TIMES`` that) are inherited by its children."""

    def apply() -> None:
        set_parent_death_signal(deathsig)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)
        if limit:
            # the memory a run writes (heap, private mappings): a library's code mapped
            # from disk is not counted, so a project importing torch runs under 1 GiB;
            # its address space is capped too, far above, for what that leaves out
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
            space = limit * ADDRESS_SPACE_TIMES
            resource.setrlimit(resource.RLIMIT_AS, (space, space))

    return apply


def run_sandboxed(
    cmd: list[str],
    cwd: Path,
    *,
    timeout: float = 120.0,
    env: dict[str, str] | None = None,
    memory_limit: int | None = None,
    bin_dirs: tuple[str, ...] = (),
    isolation: Isolation | None = None,
    view: View | None = None,
) -> RunResult:
    """Run ``cmd`` isolated (``isolation``: the strongest here when None); see the module.
    ``memory_limit``: bytes of memory the process and each of its children may write
    (RLIMIT_DATA; address space, RLIMIT_AS, ``ADDRESS_SPACE_TIMES`` that); an allocation
    past it fails (Python raises MemoryError)."""
    tier = isolation or choose_isolation()
    view = view or View()
    box = RunBox()
    needs = [
        p
        for exe in [cmd[0], sys.executable, *(str(Path(b) / "x") for b in bin_dirs)]
        for p in install_prefixes(Path(exe))
    ] + [Path(sys.prefix), Path(sys.base_prefix), *_own_site_dirs()]
    own_proc = True  # the run sees only its own processes in /proc
    if tier.name == "bubblewrap" and _bwrap():
        bwrap, *proc = _bwrap()
        prefix = bwrap_argv(bwrap, proc, box, view, cwd, needs)
        own_proc = proc[0] == "--proc"
    elif tier.name in ("bubblewrap", "unshare") and _unshare():
        prefix = list(_unshare())
    else:
        prefix, own_proc = [], False
    if not own_proc:  # (``nova`` does this at its start; a library caller gets it here)
        undumpable()
    run_env = clean_env(env, bin_dirs)
    tmp = box.path("tmp")
    # caches and configs that libraries keep (matplotlib, platformdirs) go to TMPDIR: only
    # what a test writes to HOME itself counts as a write outside its workspace
    run_env.update(
        HOME=str(box.path("home")),
        TMPDIR=str(tmp),
        XDG_CACHE_HOME=str(tmp / ".cache"),
        XDG_CONFIG_HOME=str(tmp / ".config"),
        XDG_DATA_HOME=str(tmp / ".local" / "share"),
        XDG_STATE_HOME=str(tmp / ".local" / "state"),
    )
    try:
        return _run(prefix, cmd, cwd, run_env, timeout, memory_limit, box, tier)
    finally:
        box.remove()


def _run(
    prefix: list[str],
    cmd: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    memory_limit: int | None,
    box: RunBox,
    tier: Isolation,
) -> RunResult:
    read, write = os.pipe()
    reaper = [sys.executable, "-I", "-S", str(REAPER), str(write)]
    # without namespaces the reaper is told (SIGTERM) and kills the run's tree; else its
    # first process is killed and the namespace ends with it
    deathsig = signal.SIGTERM if not prefix else signal.SIGKILL
    try:
        proc = subprocess.Popen(
            [*prefix, *reaper, *cmd],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=(write,),
            preexec_fn=_in_child(memory_limit, os.getpid(), deathsig),
        )
    except OSError as exc:
        os.close(read)
        return RunResult(-1, f"could not run {cmd[0]}: {exc}")
    finally:
        os.close(write)
    capture = _Capture(proc)
    deadline = time.monotonic() + timeout
    timed_out = not (capture.pump(deadline) and _waited(proc, deadline))
    if timed_out:
        _stop(proc, tier, capture)
    capture.close()
    with os.fdopen(read, "rb") as pipe:
        raw = pipe.read(_REPORT_CAP)
    try:
        report = json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        report = {}
    names = tuple(str(n) for n in report.get("names", []))
    text = capture.text()
    if not raw and not timed_out and prefix:
        text = f"[the sandbox ({tier.name}) could not start the run]\n{text}"
    if timed_out:
        text += f"\n[timed out after {timeout:g}s]"
    return RunResult(
        proc.returncode if not timed_out else -1,
        text,
        timed_out,
        names,
        box.outside(),
        int(report.get("left", 0)) if not timed_out else 0,
    )


def _own_site_dirs() -> list[Path]:
    """The package directories Nova's own Python imports from (its venv's, a ``.pth``'s,
    the user site under HOME): a run with Nova's interpreter needs them (pytest, coverage),
    wherever they are, also inside a hidden directory. Only package directories, read-only:
    never a checkout or a home as a whole."""
    return [
        Path(p)
        for p in sys.path
        if p.rstrip("/").endswith(("site-packages", "dist-packages")) and os.path.isdir(p)
    ]


class _Capture:
    """A run's stdout and stderr, read as they come; only the last ``OUTPUT_CAP``
    characters of each are kept, the rest is read and dropped: a test that prints 300 MiB
    costs Nova a few hundred kB, not 300 MiB."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self._streams = (proc.stdout, proc.stderr)
        self._kept = {s.fileno(): bytearray() for s in self._streams}  # stdout, stderr
        self._selector = selectors.DefaultSelector()
        for fd in self._kept:
            self._selector.register(fd, selectors.EVENT_READ)
        self.dropped = 0

    def pump(self, deadline: float) -> bool:
        """Read until both streams end (True) or ``deadline`` (monotonic) passes."""
        keep = OUTPUT_CAP * 4  # bytes: a character is at most 4 of them in UTF-8
        while self._selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for key, _ in self._selector.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    self._selector.unregister(key.fd)
                    continue
                kept = self._kept[key.fd]
                kept += chunk
                if len(kept) > 2 * keep:
                    self.dropped += len(kept) - keep
                    del kept[: len(kept) - keep]
        return True

    def text(self) -> str:
        """stdout then stderr, the tail kept (failures are at the end)."""
        both = "".join(kept.decode("utf-8", "replace") for kept in self._kept.values())
        return both[-OUTPUT_CAP:]

    def close(self) -> None:
        self._selector.close()
        for stream in self._streams:
            stream.close()


def _waited(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return False
    return True


def _stop(proc: subprocess.Popen[bytes], tier: Isolation, capture: _Capture) -> None:
    """End a timed-out run: namespaces end with their first process; without them the
    reaper is asked first (it kills the detached processes a group kill would miss). A
    process that escaped both and holds the output open is not waited for."""
    if tier.name == "none":
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        grace = time.monotonic() + _TERM_GRACE
        if capture.pump(grace) and _waited(proc, grace):
            return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    capture.pump(time.monotonic() + _TERM_GRACE)
    proc.wait()
