"""Nova's own git for test generation, which never runs what generated tests wrote.

- The tests' tree is checked out from the user's repository through a private index: it
  has no ``.git``, so nothing in it leads back to the checkout, and the checkout (work
  tree, index, HEAD, config, hooks) is never written.
- Before any generated code runs, the repository's config and hooks are fingerprinted;
  every git command Nova runs afterwards first checks that nothing there changed, and runs
  with hooks off (``core.hooksPath``), no system or global config, and no fsmonitor.
- The commit and the patch are made in a fresh bare store (the user's objects borrowed
  read-only through ``objects/info/alternates``) created after the tests ran, from the
  bytes Nova checked, not from files on disk. A push names its credentials in the push's
  own environment (``GIT_CONFIG_*``), never in a file or on a command line.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bot.errors import ServiceError, SourceError, redact

__all__ = ["Store", "UserRepo"]

_SAFE_ARGS = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "safe.directory=*",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "core.quotepath=false",
)
# what git needs from Nova's environment to reach a server: proxies and CA bundles
_PASSED = {
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
}
_IDENTITY = {
    "GIT_AUTHOR_NAME": "Nova",
    "GIT_AUTHOR_EMAIL": "nova@localhost",
    "GIT_COMMITTER_NAME": "Nova",
    "GIT_COMMITTER_EMAIL": "nova@localhost",
}


def _strict_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """No system or global config, no prompts, no tokens from Nova's environment."""
    env = {k: v for k, v in os.environ.items() if k in _PASSED}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        HOME=os.devnull,
    )
    return env | (extra or {})


def run_git(
    git_dir: Path,
    *args: str,
    data: bytes | None = None,
    env: dict[str, str] | None = None,
    strict: bool = True,
) -> bytes:
    """``git --git-dir=GIT_DIR ARGS`` with hooks off (``strict``: and no system/global
    config, see ``_strict_env``); SourceError with git's message (redacted) on failure."""
    full = _strict_env(env) if strict else {**os.environ, "GIT_OPTIONAL_LOCKS": "0", **(env or {})}
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", *_SAFE_ARGS, *args],
        input=data,
        capture_output=True,
        cwd=git_dir,
        env=full,
        check=False,
    )
    if proc.returncode != 0:
        message = redact(proc.stderr.decode("utf-8", "replace").strip()[-300:])
        raise SourceError(f"git {args[0]} failed: {message}")
    return proc.stdout


@dataclass
class UserRepo:
    """The user's repository, read only; opened before any generated code runs."""

    git_dir: Path
    common_dir: Path
    fingerprint: str = ""
    # where ``git push origin`` goes (``remote.origin.pushurl`` first, then ``url``, with the
    # user's ``insteadOf`` rules), read before any generated code ran
    origin: str | None = None

    @classmethod
    def open(cls, repo: Path) -> UserRepo:
        out = subprocess.run(
            ["git", "-C", str(repo), *_SAFE_ARGS, "rev-parse", "--absolute-git-dir"],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            raise SourceError(f"--repo {repo}: not a git repository ({out.stderr.strip()})")
        git_dir = Path(out.stdout.strip())
        common = Path(run_git(git_dir, "rev-parse", "--git-common-dir", strict=False).decode())
        common = (git_dir / common.as_posix().strip()).resolve()
        made = cls(git_dir, common)
        made.fingerprint = made.measure()
        try:
            url = run_git(git_dir, "remote", "get-url", "--push", "origin", strict=False)
            made.origin = url.decode().strip().splitlines()[0] or None
        except (SourceError, IndexError):
            made.origin = None
        return made

    def measure(self) -> str:
        """A hash of what could make git run code: config files and hooks."""
        digest = hashlib.sha256()
        files = [self.common_dir / "config", self.git_dir / "config.worktree"]
        hooks = self.common_dir / "hooks"
        if hooks.is_dir():
            files += sorted(hooks.rglob("*"))
        for path in files:
            digest.update(str(path).encode() + b"\0")
            if path.is_file():
                digest.update(path.read_bytes())
        return digest.hexdigest()

    def verify(self) -> None:
        if self.measure() != self.fingerprint:
            raise SourceError(
                f"the git config or hooks of {self.common_dir} changed while generated "
                "tests ran: Nova runs no git there any more (nothing is proposed)"
            )

    def git(self, *args: str, data: bytes | None = None) -> bytes:
        """A read-only git command on the user's repository (fingerprint checked first)."""
        self.verify()
        return run_git(self.git_dir, *args, data=data)

    def checkout(self, sha: str, target: Path) -> None:
        """The files of ``sha`` into ``target``, through a private index (before any
        generated code runs: the user's own config applies, filters included)."""
        self.verify()
        with tempfile.TemporaryDirectory(prefix="nova-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            run_git(self.git_dir, "read-tree", sha, env=env, strict=False)
            run_git(
                self.git_dir,
                f"--work-tree={target}",
                "checkout-index",
                "--all",
                "--force",
                env=env,
                strict=False,
            )

    def files(self, sha: str) -> list[str]:
        out = self.git("ls-tree", "-r", "-z", "--name-only", sha)
        return [p for p in out.decode("utf-8", "replace").split("\0") if p]

    def show(self, sha: str, rel: str) -> str | None:
        """The file at ``sha``, None when it is not there."""
        self.verify()
        try:
            return run_git(self.git_dir, "cat-file", "blob", f"{sha}:{rel}").decode(
                "utf-8", "replace"
            )
        except SourceError:
            return None


@dataclass
class Store:
    """A fresh bare repository for the proposal, made after the generated tests ran."""

    user: UserRepo
    path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.user.verify()  # before anything is made: a refused store leaves nothing behind
        self.path = Path(tempfile.mkdtemp(prefix="nova-store-"))
        try:
            run_git(self.path, "init", "--quiet", "--bare", str(self.path))
        except SourceError:
            self.remove()
            raise
        alternates = self.path / "objects" / "info" / "alternates"
        alternates.write_text(str(self.user.common_dir / "objects") + "\n", encoding="utf-8")

    def git(
        self, *args: str, data: bytes | None = None, env: dict[str, str] | None = None
    ) -> bytes:
        return run_git(self.path, *args, data=data, env=env)

    def commit(self, head: str, files: dict[str, bytes], branch: str, message: str) -> str:
        """A commit on ``head`` with ``files`` (the bytes Nova checked) on ``branch``."""
        env = {"GIT_INDEX_FILE": str(self.path / "nova-index")}
        self.git("read-tree", head, env=env)
        for rel, data in sorted(files.items()):
            blob = self.git("hash-object", "-w", "--stdin", data=data).decode().strip()
            self.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
        tree = self.git("write-tree", env=env).decode().strip()
        sha = (
            self.git("commit-tree", tree, "-p", head, "-m", message, env=_IDENTITY).decode().strip()
        )
        self.git("update-ref", f"refs/heads/{branch}", sha)
        return sha

    def patch(self, sha: str) -> str:
        return self.git("format-patch", "--stdout", "-1", sha).decode("utf-8", "replace")

    def diff(self, sha: str) -> str:
        return self.git(
            "diff", "--no-color", "--src-prefix=a/", "--dst-prefix=b/", f"{sha}~1", sha
        ).decode("utf-8", "replace")

    def branch_into_user_repo(self, branch: str) -> None:
        """Only a new ref (and its objects) in the user's repository; the work tree, index,
        HEAD, config and hooks stay as they are."""
        self.user.git(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            str(self.path),
            f"+refs/heads/{branch}:refs/heads/{branch}",
        )

    def push(self, url: str, branch: str, auth: tuple[str, str] | None = None) -> None:
        """Push ``branch`` to ``url``; ``auth`` (user, token) goes in an HTTP header set
        through the push's environment."""
        config = {"remote.nova.url": url}
        if auth is not None:
            basic = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
            config["http.extraHeader"] = f"Authorization: Basic {basic}"
        env = {"GIT_CONFIG_COUNT": str(len(config))}
        for i, (key, value) in enumerate(config.items()):
            env |= {f"GIT_CONFIG_KEY_{i}": key, f"GIT_CONFIG_VALUE_{i}": value}
        try:
            self.git(
                "push", "--quiet", "--force", "--no-verify", "nova", f"{branch}:{branch}", env=env
            )
        except SourceError as exc:
            raise ServiceError(f"pushing {branch} failed: {exc}") from exc

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
