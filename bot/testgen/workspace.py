"""A git worktree at the change's head where tests are written and run (the user's
checkout is never touched), and the guard on what an agent may write there."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bot.errors import SourceError
from bot.testgen.frameworks import Framework
from bot.testgen.sandbox import RunResult, run_sandboxed

__all__ = ["Workspace", "WriteRefused"]

MAX_TEST_BYTES = 100_000
PLUGIN = Path(__file__).with_name("pytest_limits.py")


class WriteRefused(ValueError):
    """The path or content is not allowed; the message goes back to the agent."""


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SourceError(f"git {args[0]} failed: {proc.stderr.strip()[-300:]}")
    return proc.stdout


@dataclass
class Workspace:
    repo: Path  # the user's repository
    head: str
    framework: Framework | None
    root: Path = field(init=False)
    written: dict[str, str] = field(default_factory=dict)  # path -> content
    bin_dirs: tuple[str, ...] = ()  # first on the runs' PATH (the project's interpreter's)
    memory_limit: int | None = None  # bytes of address space per run (RLIMIT_AS)

    def __post_init__(self) -> None:
        self._tmp = Path(tempfile.mkdtemp(prefix="nova-testgen-"))
        self.root = self._tmp / "tree"
        self._stamp = 0
        _git(self.repo, "worktree", "add", "--detach", "--quiet", str(self.root), self.head)
        # installed JavaScript dependencies are not in git: the tree sees the checkout's
        modules = self.repo / "node_modules"
        if modules.is_dir() and not (self.root / "node_modules").exists():
            (self.root / "node_modules").symlink_to(modules.resolve(), target_is_directory=True)

    def run(
        self,
        cmd: list[str],
        timeout: float = 120.0,
        env: dict[str, str] | None = None,
        *,
        limit_memory: bool = True,
    ) -> RunResult:
        """Run ``cmd`` in the tree, sandboxed (``env``: extra variables). The tree's own
        code comes first on PYTHONPATH (and its ``src/``): an editable install of the
        project points at the user's checkout, where mutants and the parent's code are not.
        Nova's pytest plugins come last. ``limit_memory``: apply ``memory_limit`` (node
        reserves more address space than it uses: its runner limits the heap instead)."""
        paths = [str(self.root / "src")] if (self.root / "src").is_dir() else []
        extra = {"PYTHONPATH": os.pathsep.join([str(self.root), *paths, str(self.plugin_dir())])}
        return run_sandboxed(
            cmd,
            self.root,
            timeout=timeout,
            env=extra | (env or {}),
            memory_limit=self.memory_limit if limit_memory else None,
            bin_dirs=self.bin_dirs,
        )

    def plugin_dir(self) -> Path:
        """A directory with only Nova's pytest plugin (``-p nova_limits``): nothing else of
        Nova's can shadow a module of the project."""
        target = self._tmp / "plugins"
        if not (target / "nova_limits.py").is_file():
            target.mkdir(exist_ok=True)
            shutil.copyfile(PLUGIN, target / "nova_limits.py")
        return target

    def scratch(self) -> Path:
        """A directory for Nova's own files of this run (plans, reports); not in the tree."""
        target = self._tmp / "scratch"
        target.mkdir(exist_ok=True)
        return target

    def _write(self, path: Path, text: str) -> None:
        """Write a file with a new mtime, a whole second later than any before it: cached
        bytecode (Python's, pytest's rewrites) is checked by mtime in seconds and size, and
        a mutant written in the same second with the same size must not run stale code."""
        path.write_text(text, encoding="utf-8")
        self._stamp = max(self._stamp + 1, int(time.time()) + 1)
        os.utime(path, (self._stamp, self._stamp))

    def close(self) -> None:
        subprocess.run(
            ["git", "-C", str(self.repo), "worktree", "remove", "--force", str(self.root)],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the write guard ---------------------------------------------------------------
    def check_test_path(self, path: str) -> str:
        """The normalised relative path, or ``WriteRefused`` with the reason."""
        raw = str(path).strip().replace("\\", "/")
        rel = PurePosixPath(raw)
        if not raw or rel.is_absolute() or raw.startswith("~"):
            raise WriteRefused(f"{path!r}: only relative paths inside the repository")
        if ".." in rel.parts:
            raise WriteRefused(f"{path!r}: '..' is not allowed")
        fw = self.framework
        if fw is None:
            raise WriteRefused("no test framework was detected, so there is no test path")
        if not fw.is_test_name(rel.as_posix()):
            raise WriteRefused(f"{path!r}: not a test file name ({', '.join(fw.name_patterns)})")
        dirs = [d.strip("/") for d in fw.test_dirs]
        if "." not in dirs and not any(rel.as_posix().startswith(d + "/") for d in dirs):
            raise WriteRefused(f"{path!r}: tests go under {', '.join(d + '/' for d in dirs)}")
        target = (self.root / rel).resolve()
        if not target.is_relative_to(self.root.resolve()):
            raise WriteRefused(f"{path!r}: leaves the repository (a symlink?)")
        if target.exists() and rel.as_posix() not in self.written:
            raise WriteRefused(f"{path!r}: an existing test file; write a new file instead")
        return rel.as_posix()

    def write_test(self, path: str, content: str) -> str:
        rel = self.check_test_path(path)
        if len(content.encode()) > MAX_TEST_BYTES:
            raise WriteRefused(
                f"{path!r}: {len(content.encode())} bytes is over the {MAX_TEST_BYTES} byte limit"
            )
        target = self.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        self._write(target, content)
        self.written[rel] = content
        return rel

    def remove_test(self, rel: str) -> None:
        (self.root / rel).unlink(missing_ok=True)
        self.written.pop(rel, None)

    @contextmanager
    def replaced(self, texts: dict[str, str | None]) -> Iterator[None]:
        """Temporarily give files other contents (None: the file is absent)."""
        originals: dict[str, str | None] = {}
        try:
            for rel, text in texts.items():
                path = self.root / rel
                originals[rel] = path.read_text(encoding="utf-8") if path.exists() else None
                if text is None:
                    path.unlink(missing_ok=True)
                else:
                    self._write(path, text)
            yield
        finally:
            for rel, text in originals.items():
                if text is None:
                    (self.root / rel).unlink(missing_ok=True)
                else:
                    self._write(self.root / rel, text)

    # -- reading -----------------------------------------------------------------------
    def read(self, rel: str) -> str | None:
        target = (self.root / rel).resolve()
        if not target.is_relative_to(self.root.resolve()) or not target.is_file():
            return None
        return target.read_text(encoding="utf-8", errors="replace")

    def files(self) -> list[str]:
        return _git(self.root, "ls-files").splitlines()

    def parent_text(self, rel: str, parent: str) -> str | None:
        proc = subprocess.run(
            ["git", "-C", str(self.root), "show", f"{parent}:{rel}"],
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.stdout if proc.returncode == 0 else None

    # -- proposing ---------------------------------------------------------------------
    def commit(self, branch: str, message: str) -> tuple[str, str]:
        """Commit the written tests on ``branch``; return (commit sha, patch text)."""
        _git(self.root, "checkout", "--quiet", "-B", branch)
        _git(self.root, "add", "--", *self.written)
        _git(
            self.root,
            "-c",
            "user.name=Nova",
            "-c",
            "user.email=nova@localhost",
            "commit",
            "--quiet",
            "-m",
            message,
        )
        sha = _git(self.root, "rev-parse", "HEAD").strip()
        return sha, _git(self.root, "format-patch", "--stdout", "-1", "HEAD")

    def head_diff(self) -> str:
        """The last commit as a plain git diff (what Conduit's createrawdiff reads)."""
        return _git(
            self.root, "diff", "--no-color", "--src-prefix=a/", "--dst-prefix=b/", "HEAD~1", "HEAD"
        )
