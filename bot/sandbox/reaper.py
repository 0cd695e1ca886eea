"""Runs inside the sandbox, with Nova's own interpreter (``python -I -S``: the standard
library only): the first process of every test run. It starts the command, and when the
command ends, every process the command left behind (its descendants, and the orphans it
collects as the run's child subreaper) is counted, named and killed. The count goes to
Nova through an inherited pipe, never through a file the tests could write.

``python -I -S reaper.py FD cmd...``; on SIGTERM (Nova's timeout, or Nova's death: Nova
arms it as the reaper's parent-death signal) the whole tree is killed at once. The reaper
is non-dumpable (a test cannot open its report pipe through ``/proc``), and the command
it starts is killed by the kernel if the reaper itself dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_MAX_NAMED = 5


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            out.setdefault(int(fields[1]), []).append(int(entry))
    return out


def _descendants(root: int) -> list[int]:
    tree = _children()
    found, todo = [], list(tree.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += tree.get(pid, [])
    return found


def _own_pid(pid: int) -> int:
    """``pid`` as /proc numbers it, in this process's own PID namespace (they differ when
    /proc belongs to an outer namespace: bubblewrap in a container)."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return pid


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()[:80] or "?"


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def kill_tree(me: int) -> list[str]:
    """Kill every descendant of ``me`` until none is left; their command lines."""
    named: dict[int, str] = {}
    for _ in range(200):  # processes may fork while they are killed
        left = _descendants(me)
        if not left:
            break
        for pid in left:
            named.setdefault(pid, _name(pid))
            with contextlib.suppress(ProcessLookupError):
                os.kill(_own_pid(pid), signal.SIGKILL)
        _reap()
    return list(named.values())


def main(argv: list[str]) -> int:
    report, cmd = int(argv[1]), argv[2:]
    me = int(os.readlink("/proc/self"))  # as /proc numbers it (see _own_pid)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        libc = None
    if libc is not None:
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    parent = os.getpid()

    def dies_with_me() -> None:  # in the child, before exec
        if libc is not None:
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the reaper died before the signal was armed
            os._exit(1)

    def done(rc: int, timed_out: bool) -> int:
        names = kill_tree(me)
        row = {"rc": rc, "left": len(names), "names": names[:_MAX_NAMED], "timed_out": timed_out}
        with contextlib.suppress(OSError):
            os.write(report, json.dumps(row).encode())
            os.close(report)
        return rc

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(done(-9, True)))
    try:
        # the report pipe is not inherited (close_fds)
        child = subprocess.Popen(cmd, preexec_fn=dies_with_me)
    except OSError as exc:
        print(f"could not run {cmd[0]}: {exc}", file=sys.stderr)
        return done(127, False)
    rc = child.wait()
    return done(rc if rc >= 0 else 128 - rc, False)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
