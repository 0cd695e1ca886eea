"""What a sandboxed run sees and where its traces are looked for: the run's own directories
(HOME, TMPDIR, and the empty stand-ins bubblewrap shows in place of ``/tmp`` and of hidden
paths), and bubblewrap's command line for a ``View``.

Hidden under bubblewrap, whatever the caller asks: every home (``HOME``, the home of the
user Nova runs as from the password database, ``/root``, ``/home``), ``/tmp``, and the
directories named in ``NOVA_SANDBOX_HIDE`` (``os.pathsep``-separated; ``nova serve`` names
its data directory there for its jobs). Shown again read-only inside them: Nova's own
package (``bot/``, the reaper included), wherever it is installed.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BWRAP_BASE",
    "HIDE_ENV",
    "NOVA_PACKAGE",
    "RunBox",
    "View",
    "always_hidden",
    "bwrap_argv",
    "install_prefixes",
]

HIDE_ENV = "NOVA_SANDBOX_HIDE"
NOVA_PACKAGE = Path(__file__).resolve().parent.parent  # bot/: the reaper and the plugins
# never hidden whole (a HOME of /usr would hide the interpreter): only what is inside
_SYSTEM = {Path(p) for p in ("/", "/usr", "/bin", "/lib", "/lib64", "/etc", "/dev", "/proc")}


@dataclass(frozen=True)
class View:
    """What a run sees besides the read-only root: ``hidden`` paths are empty,
    ``readonly`` ones are shown again (inside hidden ones), ``writable`` ones are
    writable, ``protected`` ones (inside writable ones) are read-only again."""

    hidden: tuple[Path, ...] = ()
    readonly: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    protected: tuple[Path, ...] = ()


BWRAP_BASE = ("--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL")


def always_hidden() -> list[Path]:
    """Every home and the directories ``NOVA_SANDBOX_HIDE`` names (see the module): the
    run's HOME is its own, so none of these is needed, and a job given another HOME (a work
    directory) must not show the real one, nor the server's data directory."""
    found = [Path.home(), Path("/root"), Path("/home")]
    with contextlib.suppress(KeyError):
        found.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    named = os.environ.get(HIDE_ENV, "")  # set by the server for its jobs (a deployment fact)
    found += [Path(p) for p in named.split(os.pathsep) if p and Path(p).is_absolute()]
    return [p for p in found if p not in _SYSTEM]


def install_prefixes(path: Path) -> list[Path]:
    """A program's install prefix and its real one (a venv's python links elsewhere)."""
    if not path.is_absolute():
        return []
    out = [path.parent.parent]
    with contextlib.suppress(OSError):
        out.append(path.resolve().parent.parent)
    return out


def _inside(path: Path, dirs: Iterable[Path]) -> bool:
    return any(path.is_relative_to(d) for d in dirs)


def _depth(paths: Iterable[Path]) -> list[Path]:
    return sorted({p for p in paths if p.exists()}, key=lambda p: (len(p.parts), str(p)))


@dataclass
class RunBox:
    """The run's own directories: HOME, TMPDIR, and the empty directories bubblewrap
    shows in place of ``/tmp`` and of hidden paths, which Nova looks into afterwards."""

    base: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="nova-run-")))
    observed: list[tuple[Path, Path]] = field(default_factory=list)  # (in the box, shown as)
    mounts: list[Path] = field(default_factory=list)  # where the sandbox mounted something

    def __post_init__(self) -> None:
        for name in ("home", "tmp"):
            (self.base / name).mkdir()
        self.observed.append((self.path("home"), Path("~")))

    def path(self, name: str) -> Path:
        return self.base / name

    def stand_in(self, shown: Path) -> Path:
        """An empty, observed directory to show at ``shown``."""
        host = self.base / f"seen-{len(self.observed)}"
        host.mkdir()
        self.observed.append((host, shown))
        return host

    def outside(self) -> tuple[str, ...]:
        """What the run wrote in HOME, ``/tmp`` or a hidden path (bubblewrap), besides the
        mount points bubblewrap made there."""
        found: list[str] = []
        for host, shown in self.observed:
            skeleton = {
                host / p.relative_to(shown)
                for m in self.mounts
                for p in [m, *m.parents]
                if p.is_relative_to(shown)
            }
            found += [str(shown / p.relative_to(host)) for p in _leaves(host) if p not in skeleton]
        return tuple(sorted(found))

    def remove(self) -> None:
        for p in self.base.rglob("*"):  # a test may have taken its own write permission
            with contextlib.suppress(OSError):
                if p.is_dir() and not p.is_symlink():
                    p.chmod(0o700)
        shutil.rmtree(self.base, ignore_errors=True)


def _leaves(root: Path) -> list[Path]:
    """Files, links and empty directories under ``root``."""
    out: list[Path] = []
    with contextlib.suppress(OSError):
        for p in sorted(root.rglob("*")):
            if not p.is_dir() or p.is_symlink() or not any(p.iterdir()):
                out.append(p)
    return out


def bwrap_argv(
    bwrap: str, proc: list[str], box: RunBox, view: View, cwd: Path, needs: list[Path]
) -> list[str]:
    """``proc``: how the run gets /proc (``--proc /proc``: its own).

    Every bind is made at the path its source resolves to (bubblewrap cannot mount onto
    a symlink whose target is not there yet, e.g. a ``.venv`` linked elsewhere), and the
    binds of all kinds are made outermost first: a path inside a read-only one is made
    after it, and its mount point is created beforehand in a writable place when it lies
    in ``/tmp``'s stand-in. A shown symlink that no other bind shows (in a stand-in, say)
    is made again."""
    argv = [bwrap, *BWRAP_BASE, "--ro-bind", "/", "/", "--dev", "/dev", *proc]
    tmp = Path("/tmp")
    if tmp.is_dir() and not tmp.is_symlink():
        argv += ["--bind", str(box.stand_in(tmp)), str(tmp)]
    hidden = [*view.hidden, *always_hidden()]
    writable = [*view.writable, box.path("home"), box.path("tmp")]
    shown = [
        p
        for p in [*view.readonly, *needs, NOVA_PACKAGE, cwd]
        if not _inside(_real(p), map(_real, writable))
    ]
    groups: list[tuple[str, list[Path]]] = [
        ("hide", [h for h in hidden if not _real(h).is_relative_to(tmp) and h.is_dir()]),
        ("--ro-bind", shown),
        ("--bind", writable),
        ("--ro-bind", list(view.protected)),
    ]
    binds = [(flag, p) for flag, paths in groups for p in _depth(map(_real, paths))]
    binds.sort(key=lambda b: len(b[1].parts))  # stable: same depth keeps the group order
    for flag, dest in binds:
        source = box.stand_in(dest) if flag == "hide" else dest
        argv += ["--bind" if flag == "hide" else flag, str(source), str(dest)]
        box.mounts.append(dest)
    real = {dest for flag, dest in binds if flag != "hide"}  # a stand-in shows nothing
    for link in _depth(p for p in shown if p.is_symlink()):
        if not any(link.is_relative_to(d) for d in real) and link.parent.exists():
            argv += ["--symlink", str(_real(link)), str(link)]
            box.mounts.append(link)
    return [*argv, "--chdir", str(cwd), "--"]


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop of links: bubblewrap names it
        return path
