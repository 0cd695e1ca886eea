"""Changes from a local git repository (GitPython): commits, ranges, the index, stdin."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING

from bot.change import Change
from bot.diff.parse import decode_diff, parse_diff
from bot.errors import RevisionNotFound, SourceError
from bot.hosts.base import GrepHit
from bot.sandbox.guard import secret_names
from bot.search import line_matcher

if TYPE_CHECKING:  # GitPython is imported lazily (keeps --help fast)
    import git

__all__ = ["GitSource", "GitTree", "STAGED", "STDIN", "checkout_with", "read_diff"]

STAGED = ":staged"
STDIN = "-"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_READ_BYTES = 512 * 1024
GREP_TIMEOUT = 20.0  # seconds one search may take
_DIFF_OPTS = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "-M",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-U3",
)


def _open_repo(path: Path) -> git.Repo:
    import git

    try:
        repo = git.Repo(path, search_parent_directories=True)
    except git.NoSuchPathError as exc:
        raise SourceError(f"--repo {path}: no such directory") from exc
    except git.InvalidGitRepositoryError as exc:
        raise SourceError(f"--repo {path}: not a git repository") from exc
    # reading needs no credential: the git processes GitPython keeps running (cat-file
    # --batch) would otherwise hold the job's tokens where a generated test under the
    # ``none`` isolation can read them (they are dumpable again after exec)
    repo.git.update_environment(**dict.fromkeys(secret_names(os.environ), ""))
    return repo


def read_diff(stream: IO[str]) -> str:
    """A diff from a stream, decoded the way git's own output is (``decode_diff``): the raw
    bytes under a text stream when there are any, so a Latin-1 byte is U+FFFD, not the
    lone surrogate Python's ``surrogateescape`` stdin would hand on to the model client."""
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        return decode_diff(buffer.read())
    return decode_diff(stream.read())


class GitSource:
    name = "git"

    def __init__(self, repo: Path, *, stdin: IO[str] | None = None) -> None:
        self.path = Path(repo)
        self._stdin = stdin
        self._repo: git.Repo | None = None

    @property
    def repo(self) -> git.Repo:
        if self._repo is None:
            self._repo = _open_repo(self.path)
        return self._repo

    def _git(self, *args: str) -> bytes:
        import git

        try:
            return self.repo.git.execute(
                ["git", "-c", "core.quotepath=false", *args],
                stdout_as_string=False,
                strip_newline_in_stdout=False,
            )
        except git.GitCommandError as exc:
            detail = (exc.stderr or "").strip().splitlines()
            raise SourceError(f"git {args[0]} failed: {detail[-1] if detail else exc}") from exc

    def commit(self, ref: str) -> git.Commit:
        import git
        from gitdb.exc import BadName, BadObject

        try:
            return self.repo.commit(ref)
        except (BadName, BadObject, ValueError, git.GitCommandError) as exc:
            raise RevisionNotFound(f"unknown revision {ref!r} in {self.repo.working_dir}") from exc

    def fetch(self, ref: str) -> Change:
        if ref == STDIN:
            return self._from_stdin()
        if ref == STAGED:
            return self._staged()
        if ".." in ref:
            sep = "..." if "..." in ref else ".."
            base_ref, head_ref = ref.split(sep, 1)
            base = self.commit(base_ref or "HEAD")
            head = self.commit(head_ref or "HEAD")
            if sep == "...":
                merge_base = self.repo.merge_base(base, head)
                base = merge_base[0] if merge_base else base
            return self._change(ref, base.hexsha, head)
        commit = self.commit(ref)
        parent = commit.parents[0].hexsha if commit.parents else EMPTY_TREE
        return self._change(commit.hexsha[:12], parent, commit)

    def _change(self, change_id: str, base: str, head: git.Commit) -> Change:
        raw = decode_diff(self._git("diff", *_DIFF_OPTS, base, head.hexsha))
        title, _, body = decode_diff(head.message).strip().partition("\n")
        return Change(
            id=change_id,
            source="git",
            title=title.strip(),
            description=body.strip(),
            author=decode_diff(head.author.name or ""),
            base_ref=base,
            head_ref=head.hexsha,
            url=None,
            files=tuple(parse_diff(raw)),
            raw_diff=raw,
        )

    def _staged(self) -> Change:
        try:
            base = self.repo.head.commit.hexsha
        except ValueError:  # no commit yet
            base = EMPTY_TREE
        raw = decode_diff(self._git("diff", "--cached", *_DIFF_OPTS, base))
        return Change(
            id="staged",
            source="git",
            title="Staged changes",
            base_ref=base,
            head_ref=STAGED,
            files=tuple(parse_diff(raw)),
            raw_diff=raw,
        )

    def _from_stdin(self) -> Change:
        raw = read_diff(self._stdin or sys.stdin)
        return Change(
            id="stdin",
            source="stdin",
            title="Diff from standard input",
            head_ref=None,
            files=tuple(parse_diff(raw)),
            raw_diff=raw,
        )

    def tree(self, change: Change) -> GitTree | None:
        try:
            repo = self.repo
        except SourceError:
            return None
        if change.source == "stdin":
            return GitTree(repo, None)
        return GitTree(repo, change.head_ref)

    def is_ancestor(self, older: str, newer: str) -> bool:
        return bool(self.repo.is_ancestor(self.commit(older), self.commit(newer)))

    def changes_since(self, change: Change, since: str) -> Change | None:
        """``since..head`` of a host's ``change`` (keeping its id and source), or None when
        ``since`` is not an ancestor of the head (a rebase or force-push)."""
        head = change.head_ref
        if head is None or not self.is_ancestor(since, head):
            return None
        return replace(self.fetch(f"{since}..{head}"), id=change.id, source=change.source)

    def read_base(self, change: Change, path: str) -> bytes | None:
        """At the base commit; a diff on stdin is taken to be against HEAD."""
        base = change.base_ref if change.source != "stdin" else "HEAD"
        if base is None or base == EMPTY_TREE:
            return None
        try:
            commit = self.commit(base)
        except SourceError:
            return None
        return GitTree(self.repo, commit.hexsha).read_bytes(path)


def checkout_with(path: Path | None, *shas: str) -> GitSource | None:
    """The git repository at ``path`` when it has every one of ``shas`` (a code host's
    checkout, ``--repo``), else None: no path, not a repository, or a shallow clone."""
    if path is None:
        return None
    try:
        source = GitSource(path)
        for sha in shas:
            source.commit(sha)
    except SourceError:
        return None
    return source


def _safe_relpath(path: str) -> str | None:
    p = PurePosixPath(path.strip().lstrip("/"))
    if not p.parts or any(part in ("..", "") for part in p.parts) or p.is_absolute():
        return None
    return p.as_posix()


class GitTree:
    """Reads files at ``rev`` (a commit SHA), the index (``:staged``) or the work tree (None)."""

    def __init__(self, repo: git.Repo, rev: str | None) -> None:
        self.repo = repo
        self.rev = rev
        self._read: dict[str, bytes | None] = {}  # prefetch(): path -> blob (None: not one)

    @property
    def root(self) -> Path:
        """The work tree's top directory (where the repository's tool configs live)."""
        return Path(self.repo.working_dir)

    def _run(self, *args: str) -> bytes | None:
        import git

        try:
            return self.repo.git.execute(
                ["git", "-c", "core.quotepath=false", *args],
                stdout_as_string=False,
                strip_newline_in_stdout=False,
            )
        except git.GitCommandError:
            return None

    def read_text(self, path: str) -> str | None:
        data = self.read_bytes(path)
        if data is None or b"\x00" in data[:8192]:
            return None
        return decode_diff(data)

    def read_bytes(self, path: str) -> bytes | None:
        """The file's first ``MAX_READ_BYTES`` bytes, None when it is not there."""
        rel = _safe_relpath(path)
        if rel is None:
            return None
        if self.rev is None:
            root = Path(self.repo.working_dir).resolve()
            target = (root / rel).resolve()
            if not target.is_relative_to(root) or not target.is_file():
                return None
            data = target.read_bytes()[:MAX_READ_BYTES]
        elif rel in self._read:
            blob = self._read[rel]
            if blob is None:
                return None
            data = blob[:MAX_READ_BYTES]
        else:
            spec = f":{rel}" if self.rev == STAGED else f"{self.rev}:{rel}"
            shown = self._run("show", spec)
            if shown is None:
                return None
            data = shown[:MAX_READ_BYTES]
        return data

    def prefetch(self, paths: list[str]) -> None:
        """Read many files at ``rev`` with one ``git cat-file --batch`` (a ``git show`` each
        is a process: 1,200 files took 8 s); ``read_text`` then serves them from memory."""
        if self.rev is None:
            return  # the work tree: files on disk are read directly
        prefix = ":" if self.rev == STAGED else f"{self.rev}:"
        rels = list(
            dict.fromkeys(
                r for r in map(_safe_relpath, paths) if r and "\n" not in r and r not in self._read
            )
        )
        if not rels:
            return
        try:
            out = subprocess.run(
                ["git", "cat-file", "--batch"],
                capture_output=True,
                input="".join(f"{prefix}{r}\n" for r in rels).encode(),
                cwd=self.repo.working_tree_dir or self.repo.git_dir,
                timeout=120,
                check=True,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return  # read_text still reads each file on its own
        pos = 0
        for rel in rels:
            end = out.find(b"\n", pos)
            if end < 0:
                return
            header = out[pos:end].split(b" ")
            pos = end + 1
            if len(header) == 3 and header[2].isdigit():  # "<sha> <type> <size>"
                size = int(header[2])
                self._read[rel] = out[pos : pos + size] if header[1] == b"blob" else None
                pos += size + 1
            else:
                self._read[rel] = None  # "<spec> missing"

    def list_files(self) -> list[str]:
        if self.rev is None or self.rev == STAGED:
            out = self._run("ls-files")
        else:
            out = self._run("ls-tree", "-r", "--name-only", self.rev)
        return decode_diff(out or b"").splitlines()

    def grep(self, pattern: str, *, regex: bool = False, limit: int = 50) -> list[GrepHit]:
        """git lists the lines (a fixed string: only those that contain it; a regex: every
        text line), RE2 matches them (``bot.search``: linear time). Raises ``PatternError``
        for a regex RE2 refuses, ``TimeoutError`` after ``GREP_TIMEOUT`` seconds."""
        matches = line_matcher(pattern, regex=regex)
        args = [
            "git",
            "-c",
            "core.quotepath=false",
            "grep",
            "-z",
            "-n",
            "-I",
            "--no-color",
            "-F",
            "-e",
            "" if regex else pattern,
        ]
        if self.rev == STAGED:
            args.insert(4, "--cached")
        elif self.rev is not None:
            args.append(self.rev)
        prefix = f"{self.rev}:" if self.rev not in (None, STAGED) else ""
        hits: list[GrepHit] = []
        with _Watchdog(args, self.repo.working_tree_dir or self.repo.git_dir, GREP_TIMEOUT) as rows:
            for row in rows:
                path, _, rest = decode_diff(row.rstrip(b"\n")).partition("\0")
                number, _, text = rest.partition("\0")
                path = path[len(prefix) :] if prefix and path.startswith(prefix) else path
                if number.isdigit() and matches(text):
                    hits.append((path, int(number), text[:300]))
                    if len(hits) >= limit:
                        break
        return hits


class _Watchdog:
    """Runs ``args`` and yields its stdout lines; kills it on leaving or after ``timeout``
    seconds (then ``TimeoutError`` is raised)."""

    def __init__(self, args: list[str], cwd: str | os.PathLike[str], timeout: float) -> None:
        self.args, self.cwd, self.timeout = args, cwd, timeout
        self.fired = threading.Event()

    def __enter__(self) -> Iterator[bytes]:
        self.proc = subprocess.Popen(
            self.args,
            cwd=self.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        self.timer = threading.Timer(self.timeout, self._fire)
        self.timer.start()
        assert self.proc.stdout is not None
        return iter(self.proc.stdout)

    def _fire(self) -> None:
        self.fired.set()
        self.proc.kill()

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()
        self.proc.kill()
        self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        if self.fired.is_set():
            raise TimeoutError(f"the search was stopped after {self.timeout:g}s")
