"""Where generated tests are written and run: a copy of the change's head in a private
directory (no ``.git``: nothing in it leads back to the user's checkout, which is never
written), the guard on what an agent may write there, and the checks that what is proposed
is what was checked: each written test file's bytes are compared after every run, and a
run that leaves processes or writes outside the workspace is recorded against its tests.
The proposal is made with Nova's own git (``bot.testgen.gitstore``)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import InitVar, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from bot.errors import SourceError
from bot.hosts.base import GrepHit
from bot.sandbox.run import Isolation, RunResult, View, choose_isolation, run_sandboxed
from bot.testgen.frameworks import Framework
from bot.testgen.gitstore import Store, UserRepo

__all__ = ["Workspace", "WriteRefused", "token_url"]

MAX_TEST_BYTES = 100_000
# files in the tree that change how the tests run: a run that adds or changes one is
# recorded against its tests, and the file is put back
_STEERS = re.compile(
    r"(^|/)(conftest\.py|sitecustomize\.py|usercustomize\.py|[^/]*\.pth|pytest\.ini)$"
    r"|^(pyproject\.toml|setup\.cfg|tox\.ini|package\.json)$"
)
_NOT_STEERING = {"__pycache__", ".pytest_cache", ".hypothesis", "node_modules", ".git"}
# generated modules of the user's working tree brought into the checkout (a version file
# written at install): at most this many, each at most this big, none that names a secret
MAX_GENERATED = 20
MAX_GENERATED_BYTES = 256_000
_SECRETISH = re.compile(
    r"(?i)(secret|token|passw(or)?d|api_?key|private_?key|credential)\w*['\"]?\s*[:=]"
)
PLUGIN = Path(__file__).with_name("pytest_limits.py")
# an import statement's module part (and the names of ``from . import x``)
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]+[\w, \t(]+|import[ \t]+[\w., \t]+)", re.M
)


class WriteRefused(ValueError):
    """The path or content is not allowed; the message goes back to the agent."""


def token_url(url: str) -> str | None:
    """The HTTPS URL a token pushes to for a remote ``url`` (an SSH remote's host and path;
    credentials in the URL dropped: the token's header authenticates); None for a path."""
    if not re.match(r"https?://", url):
        ssh = re.match(r"^(?:ssh://)?[^@/]+@([^:/]+)[:/](?:\d+/)?(.+)$", url)
        if ssh is None:
            return None
        url = f"https://{ssh.group(1)}/{ssh.group(2)}"
    return re.sub(r"^(https?://)[^/@]*@", r"\1", url)


class _Case(Protocol):
    path: str
    name: str
    reason: str | None


@dataclass
class Workspace:
    repo: Path  # the user's repository (read, never written)
    head: str
    framework: Framework | None
    root: Path = field(init=False)
    written: dict[str, str] = field(default_factory=dict)  # path -> content
    bin_dirs: tuple[str, ...] = ()  # first on the runs' PATH (the project's interpreter's)
    memory_limit: int | None = None  # bytes a run may write (RLIMIT_DATA)
    isolation: Isolation | None = None  # None: the strongest this machine allows
    # rel -> why the file cannot be trusted (it changed while its tests ran)
    tampered: dict[str, str] = field(default_factory=dict)
    # "rel::name" -> why the test cannot be trusted (processes left, writes outside)
    escapes: dict[str, str] = field(default_factory=dict)
    # the repository as first seen, before any code ran (a second workspace of the same run
    # shares the first one's: its fingerprint is from before any test ran)
    shared: InitVar[UserRepo | None] = None
    user: UserRepo = field(init=False)
    # git-ignored modules of the user's working tree that the package imports, copied in
    generated: list[str] = field(default_factory=list)

    def __post_init__(self, shared: UserRepo | None) -> None:
        self.isolation = self.isolation or choose_isolation()
        self.user = shared or UserRepo.open(self.repo)
        self._tmp = Path(tempfile.mkdtemp(prefix="nova-testgen-"))
        self.root = self._tmp / "tree"
        self.root.mkdir()
        self._stamp = 0
        self._runs = 0
        self._expected: dict[str, tuple[str, str]] = {}  # rel -> (sha256, text)
        self._parents: dict[tuple[str, str], str | None] = {}  # (parent, rel) -> text
        self._store: Store | None = None
        try:
            head = self.user.git("rev-parse", "--verify", f"{self.head}^{{commit}}")
            self.head = head.decode().strip()
            self.user.checkout(self.head, self.root)
            self._files = self.user.files(self.head)
            self._replacing: set[str] = set()
            self.generated = self._bring_generated()
            self._steers = self._steering()
        except SourceError:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        # installed JavaScript dependencies are not in git: the tree sees the checkout's
        self._modules: Path | None = None
        modules = self.repo / "node_modules"
        if modules.is_dir() and not (self.root / "node_modules").exists():
            self._modules = modules.resolve()
            (self.root / "node_modules").symlink_to(self._modules, target_is_directory=True)

    def _bring_generated(self) -> list[str]:
        """Copy in the git-ignored modules of the user's working tree that the checkout's
        own packages import (``_version.py`` written by setuptools-scm or hatch-vcs at
        install): without them the package imports on neither side. Only ``.py`` files
        directly in a directory whose ``__init__.py`` is tracked, named by an import of a
        tracked module, small, and with no assignment that looks like a secret; never a
        file the commit has."""
        packages = sorted(
            {str(PurePosixPath(f).parent) for f in self._files if f.endswith("/__init__.py")}
        )
        top = self._work_tree()
        if not packages or top is None:
            return []
        specs = [f":(glob){d}/*.py" for d in packages[:500]]
        try:
            out = self.user.git(
                f"--work-tree={top}",
                "-C",
                str(top),
                "ls-files",
                "-z",
                "--others",
                "--ignored",
                "--exclude-standard",
                "--",
                *specs,
            )
        except SourceError:
            return []
        tracked = set(self._files)
        found = [p for p in out.decode("utf-8", "replace").split("\0") if p and p not in tracked]
        if not found:
            return []
        imports = self._imports_in(packages)
        brought: list[str] = []
        for rel in sorted(found):
            stem = PurePosixPath(rel).stem
            source = top / rel
            if (
                len(brought) >= MAX_GENERATED
                or stem not in imports
                or source.is_symlink()
                or not source.is_file()
                or source.stat().st_size > MAX_GENERATED_BYTES
                or (self.root / rel).exists()
            ):
                continue
            data = source.read_bytes()
            if _SECRETISH.search(data.decode("utf-8", "replace")):
                continue
            (self.root / rel).write_bytes(data)
            brought.append(rel)
        return brought

    def _work_tree(self) -> Path | None:
        """The top of the user's working tree (of a linked worktree too); None for a
        bare repository or one whose git directory is elsewhere."""
        git_dir = self.user.git_dir
        pointer = git_dir / "gitdir"  # a linked worktree's: "<its top>/.git"
        if pointer.is_file():
            top = Path(pointer.read_text(encoding="utf-8").strip()).parent
        elif git_dir.name == ".git":
            top = git_dir.parent
        else:
            return None
        return top if top.is_dir() else None

    def generated_note(self) -> str:
        return (
            f"the workspace has {', '.join(self.generated)} from your working tree (parent "
            "and head): git ignores it, and the package imports it (generated at install)"
        )

    def _imports_in(self, packages: list[str]) -> set[str]:
        """The module names (last parts) the tracked modules of ``packages`` import."""
        names: set[str] = set()
        inside = set(packages)
        for rel in self._files:
            if not rel.endswith(".py") or str(PurePosixPath(rel).parent) not in inside:
                continue
            path = self.root / rel
            if path.is_symlink() or not path.is_file() or path.stat().st_size > 1_000_000:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for m in _IMPORT.finditer(text):
                names.update(re.findall(r"\w+", m.group(0)))
        return names

    def view(self) -> View:
        """What the runs see: the checkout hidden (its node_modules shown read-only), the
        workspace writable, Nova's plugins read-only."""
        return View(
            hidden=(self.repo.resolve(), self.user.common_dir),
            readonly=tuple(p for p in (self._modules,) if p is not None),
            writable=(self._tmp,),
            protected=(self.plugin_dir(),),
        )

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
        reserves more address space than it uses: its runner limits the heap instead).
        Afterwards every written test file is compared with what Nova wrote."""
        paths = [str(self.root / "src")] if (self.root / "src").is_dir() else []
        extra = {"PYTHONPATH": os.pathsep.join([str(self.root), *paths, str(self.plugin_dir())])}
        if self.isolation is not None and self.isolation.name == "bubblewrap":
            # site-packages is read-only there: bytecode (and pytest's rewrites of plugins)
            # is cached for the whole job here instead of redone on every run (1.4 s a run
            # instead of 2.8 s; the first run pays once)
            extra["PYTHONPYCACHEPREFIX"] = str(self._tmp / "pycache")
        self._runs += 1
        try:
            result = run_sandboxed(
                cmd,
                self.root,
                timeout=timeout,
                env=extra | (env or {}),
                memory_limit=self.memory_limit if limit_memory else None,
                bin_dirs=self.bin_dirs,
                isolation=self.isolation,
                view=self.view(),
            )
        finally:
            self._compare()
            planted = self._planted()
        return dataclasses.replace(result, planted=planted) if planted else result

    def _steering(self) -> dict[str, bytes]:
        """The tree's files that change how tests run (conftest.py, .pth, tool configs)."""
        out: dict[str, bytes] = {}
        for top, dirs, names in os.walk(self.root):
            dirs[:] = [d for d in dirs if d not in _NOT_STEERING]
            for name in names:
                rel = Path(top, name).relative_to(self.root).as_posix()
                if _STEERS.search(rel) and rel not in self._replacing:
                    out[rel] = Path(top, name).read_bytes()
        return out

    def _planted(self) -> tuple[str, ...]:
        """Such files a run added or changed, put back as they were."""
        now = self._steering()
        changed = sorted(
            rel
            for rel in {*now, *self._steers}
            if rel not in self._replacing and now.get(rel) != self._steers.get(rel)
        )
        for rel in changed:
            if rel in self._steers:
                (self.root / rel).write_bytes(self._steers[rel])
            else:
                (self.root / rel).unlink(missing_ok=True)
        return tuple(changed)

    def _compare(self) -> None:
        for rel, (digest, text) in self._expected.items():
            path = self.root / rel
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            if data is None or hashlib.sha256(data).hexdigest() != digest:
                self.tampered.setdefault(
                    rel,
                    f"the test file changed while tests ran (run {self._runs}): what would "
                    "be proposed is not what was checked",
                )
                self._write(path, text)  # later runs check Nova's text

    def _expect(self, rel: str, text: str | None) -> None:
        """Fix the bytes ``rel`` must have after every run (None: not checked)."""
        if text is None:
            self._expected.pop(rel, None)
        else:
            self._expected[rel] = (hashlib.sha256(text.encode("utf-8")).hexdigest(), text)

    def distrust(self, rel: str, cases: Sequence[_Case]) -> None:
        """Drop, with the reason, the tests of ``rel`` whose file changed while tests ran
        or that left processes or wrote outside the workspace (in any run)."""
        for case in cases:
            why = self.tampered.get(rel) or self.escapes.get(f"{rel}::{case.name}")
            if why and not (case.reason or "").startswith(why):
                case.reason = why

    @contextmanager
    def outputs(self) -> Iterator[Path]:
        """A directory the runs can write their reports to (junit, coverage, logs)."""
        base = self._tmp / "out"
        base.mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            yield Path(tmp)

    def plugin_dir(self) -> Path:
        """A directory with only Nova's pytest plugin (``-p nova_limits``): nothing else of
        Nova's can shadow a module of the project."""
        target = self._tmp / "plugins"
        if not (target / "nova_limits.py").is_file():
            target.mkdir(exist_ok=True)
            shutil.copyfile(PLUGIN, target / "nova_limits.py")
        return target

    def sibling(self, ref: str, framework: Framework | None) -> Workspace:
        """A workspace of the same repository at ``ref`` (the change's parent), with this
        one's limits, isolation and first look at the repository (enter it with ``with``)."""
        return Workspace(
            self.repo,
            ref,
            framework,
            bin_dirs=self.bin_dirs,
            memory_limit=self.memory_limit,
            isolation=self.isolation,
            shared=self.user,
        )

    def side_run(
        self, command: Sequence[str], script: Path, plan: str, tag: str, seed: int, seconds: float
    ) -> dict[str, Any]:
        """Run a side-runner ``script`` (copied into scratch) with ``command`` (the
        project's interpreter) on ``plan``; its ``modules`` answer, or ``{"error": ...}``
        (the run's last line when it wrote nothing, "unreadable output" when not a dict)."""
        scratch = self.scratch()
        plan_file, out_file = (
            scratch / f"{script.stem}-plan-{tag}.json",
            scratch / f"{script.stem}-{tag}.json",
        )
        plan_file.write_text(plan, encoding="utf-8")
        out_file.unlink(missing_ok=True)
        run = self.run(
            [*command, str(script), str(plan_file), str(out_file)],
            timeout=seconds,
            env={"PYTHONHASHSEED": str(seed), "PYTHONDONTWRITEBYTECODE": "1"},
        )
        if not out_file.is_file():
            tail = run.output.strip().splitlines()[-1:] or ["no output"]
            return {"error": tail[0][:200]}
        data = json.loads(out_file.read_text(encoding="utf-8"))
        modules = data.get("modules") if isinstance(data, dict) else None
        return modules if isinstance(modules, dict) else {"error": "unreadable output"}

    def scratch(self) -> Path:
        """A directory for Nova's own files of this run (plans, reports); not in the tree."""
        target = self._tmp / "scratch"
        target.mkdir(exist_ok=True)
        return target

    def _write(self, path: Path, text: str) -> None:
        """Write a file with a new mtime, a whole second later than any before it: cached
        bytecode (Python's, pytest's rewrites) is checked by mtime in seconds and size, and
        a mutant written in the same second with the same size must not run stale code."""
        if path.is_symlink():
            path.unlink()
        path.write_text(text, encoding="utf-8")
        self._stamp = max(self._stamp + 1, int(time.time()) + 1)
        os.utime(path, (self._stamp, self._stamp))

    def close(self) -> None:
        for p in self._tmp.rglob("*"):  # a test may have taken its own write permission
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o700)
        shutil.rmtree(self._tmp, ignore_errors=True)
        if self._store is not None:
            self._store.remove()

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
        if (
            "." not in dirs
            and not any(rel.as_posix().startswith(d + "/") for d in dirs)
            and not self._holds_tests(rel.parent)
        ):
            raise WriteRefused(f"{path!r}: tests go under {', '.join(d + '/' for d in dirs)}")
        target = (self.root / rel).resolve()
        if not target.is_relative_to(self.root.resolve()):
            raise WriteRefused(f"{path!r}: leaves the repository (a symlink?)")
        if target.exists() and rel.as_posix() not in self.written:
            raise WriteRefused(f"{path!r}: an existing test file; write a new file instead")
        return rel.as_posix()

    def _holds_tests(self, folder: PurePosixPath) -> bool:
        """Whether the project keeps test files of its own in ``folder`` (tests inside
        the package, ``pkg/tests/``): a test written beside them imports as they do. The
        top folder only when the project has no test folder (``test_x.py`` beside
        ``x.py``): a copy of such a test goes beside it."""
        fw = self.framework
        if fw is None:
            return False
        if folder == PurePosixPath(".") and any(
            f.startswith(d.strip("/") + "/") for d in fw.test_dirs for f in self._files
        ):
            return False
        return any(PurePosixPath(f).parent == folder and fw.is_test_name(f) for f in self._files)

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
        self._expect(rel, content)
        self.tampered.pop(rel, None)  # new text: what happens to it is checked anew
        for node in [n for n in self.escapes if n.startswith(rel + "::")]:
            del self.escapes[node]
        return rel

    def remove_test(self, rel: str) -> None:
        (self.root / rel).unlink(missing_ok=True)
        self.written.pop(rel, None)
        self._expected.pop(rel, None)

    @contextmanager
    def replaced(self, texts: dict[str, str | None]) -> Iterator[None]:
        """Temporarily give files other contents (None: the file is absent); a written
        test file is checked against its temporary text meanwhile."""
        originals: dict[str, str | None] = {}
        checked = {rel: self._expected[rel] for rel in texts if rel in self._expected}
        created: list[Path] = []  # folders the tree lacks (the change removed them)
        self._replacing |= set(texts)
        try:
            for rel, text in texts.items():
                path = self.root / rel
                originals[rel] = (
                    self.written[rel]
                    if rel in self.written
                    else (path.read_text(encoding="utf-8") if path.exists() else None)
                )
                if rel in checked:
                    self._expect(rel, text)
                if text is None:
                    path.unlink(missing_ok=True)
                elif self._folder_for(path, created):
                    self._write(path, text)
            yield
        finally:
            for rel, text in originals.items():
                if text is None:
                    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                        (self.root / rel).unlink()
                else:
                    self._write(self.root / rel, text)
            for folder in created:
                shutil.rmtree(folder, ignore_errors=True)
            self._expected.update(checked)
            self._replacing -= set(texts)

    def _folder_for(self, path: Path, created: list[Path]) -> bool:
        """Make ``path``'s folder if the tree lacks it (noting the topmost one made in
        ``created``); False when it cannot be (a file of the tree stands in its way)."""
        folder = path.parent
        if folder.is_dir():
            return True
        top = folder
        while not top.parent.exists():
            top = top.parent
        try:
            folder.mkdir(parents=True)
        except OSError:
            return False
        created.append(top)
        return True

    # -- reading -----------------------------------------------------------------------
    def read(self, rel: str) -> str | None:
        target = (self.root / rel).resolve()
        if not target.is_relative_to(self.root.resolve()) or not target.is_file():
            return None
        # a UTF-8 byte order mark is no text: Python skips it, and so must ast.parse
        return target.read_text(encoding="utf-8-sig", errors="replace")

    def files(self) -> list[str]:
        """The files of the change's head (in git; the tests written since are not)."""
        return list(self._files)

    def parent_text(self, rel: str, parent: str) -> str | None:
        """``rel`` as ``parent`` has it (None: absent there); read once per job, since the
        matrix, the module-state probe, amplification and the gates all ask."""
        key = (parent, rel)
        if key not in self._parents:
            shown = self.user.show(parent, rel)
            self._parents[key] = shown.removeprefix("\ufeff") if shown is not None else None
        return self._parents[key]

    # -- a reader of the tree for the agent's tools (bot.hosts.base.LocalTree) ----------
    def read_text(self, path: str) -> str | None:
        return self.read(path)

    def list_files(self) -> list[str]:
        return sorted({*self._files, *self.written})

    def grep(self, pattern: str, *, regex: bool = False, limit: int = 50) -> list[GrepHit]:
        """Lines of the tree's text files that hold ``pattern`` (a fixed string, or an RE2
        regex through ``bot.search``)."""
        from bot.search import line_matcher

        matches = line_matcher(pattern, regex=regex)
        hits: list[GrepHit] = []
        for rel in self.list_files():
            text = self.read(rel) if not re.search(r"\.(png|jpg|gif|zip|gz)$", rel) else None
            for n, line in enumerate((text or "").split("\n"), 1):
                if matches(line):
                    hits.append((rel, n, line[:300]))
                    if len(hits) >= limit:
                        return hits
        return hits

    # -- proposing ---------------------------------------------------------------------
    def commit(self, branch: str, message: str) -> tuple[str, str]:
        """Commit the written tests on ``branch`` in a fresh store, from the bytes Nova
        wrote and checked (never from the files on disk); return (commit sha, patch)."""
        self._store = self._store or Store(self.user)
        files = {rel: text.encode("utf-8") for rel, text in self.written.items()}
        self._commit = self._store.commit(self.head, files, branch, message)
        return self._commit, self._store.patch(self._commit)

    def keep_branch(self, branch: str) -> None:
        """Add ``branch`` to the user's repository (a ref only: see ``gitstore``)."""
        assert self._store is not None, "commit first"
        self._store.branch_into_user_repo(branch)

    def push(self, url: str, branch: str, auth: tuple[str, str] | None = None) -> None:
        """Push the committed ``branch`` to ``url`` from Nova's store. With ``auth`` (a
        token), an SSH remote is pushed to over HTTPS (Nova's git reads no SSH keys) and
        credentials in the URL give way to the token."""
        assert self._store is not None, "commit first"
        if auth is not None:
            https = token_url(url)
            url, auth = (https, auth) if https else (url, None)  # a path: no header
        self._store.push(url, branch, auth)

    def head_diff(self) -> str:
        """The last commit as a plain git diff (what Conduit's createrawdiff reads)."""
        assert self._store is not None, "commit first"
        return self._store.diff(self._commit)
