"""Pull requests from GitHub (PyGithub; GitHub Enterprise through ``GITHUB_API_URL``).

The diff is built from the files API's per-file patches. GitHub omits a patch when a file's
diff is too large (and answers 406 for whole diffs past ~20,000 lines / 300 files): then the
change is diffed locally from the checkout (``--repo``) when it has both commits, and
otherwise the files without a patch are listed as skipped, with what to do about it.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import Settings
from bot.diff.parse import parse_diff
from bot.errors import (
    ConfigError,
    RemoteChangeNotFound,
    ServiceError,
    SourceError,
    UsageError,
    redact,
)
from bot.hosts.base import GrepHit, TreeReader
from bot.models import Change

if TYPE_CHECKING:
    from github import Github

__all__ = ["GitHubSource", "GitHubTree", "github_client", "parse_pr_ref", "pr_from_event"]

_REF = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)#(?P<num>\d+)$")
_URL = re.compile(r"^(?P<scheme>https?)://(?P<host>[^/]+)/(?P<repo>[\w.-]+/[\w.-]+)/pull/"
                  r"(?P<num>\d+)")
PUBLIC_API = "https://api.github.com"


def parse_pr_ref(spec: str, api_url: str = PUBLIC_API) -> tuple[str, int, str]:
    """(owner/repo, number, API base URL) of ``owner/repo#12`` or a pull request URL.
    A URL on another host than github.com means GitHub Enterprise at https://HOST/api/v3
    unless ``api_url`` already names a non-default API."""
    m = _REF.match(spec)
    if m:
        return m.group("repo"), int(m.group("num")), api_url
    m = _URL.match(spec)
    if m:
        host = m.group("host")
        if host not in ("github.com", "www.github.com") and api_url == PUBLIC_API:
            api_url = f"{m.group('scheme')}://{host}/api/v3"
        return m.group("repo"), int(m.group("num")), api_url
    raise UsageError(f"{spec!r} is not a pull request reference (owner/repo#12 or a PR URL)")


def pr_from_event(settings: Settings) -> str | None:
    """``owner/repo#N`` of the pull request in the GitHub Actions event, if any."""
    if not settings.github_event_path:
        return None
    try:
        event = json.loads(Path(settings.github_event_path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"GITHUB_EVENT_PATH {settings.github_event_path}: {exc}") from exc
    pr = event.get("pull_request") or {}
    number = pr.get("number") or event.get("number")
    repo = ((pr.get("base") or {}).get("repo") or {}).get("full_name") \
        or settings.github_repository
    if number and repo:
        return f"{repo}#{number}"
    return None


def github_client(settings: Settings, api_url: str | None = None) -> Github:
    """PyGithub with GitHub's retry rules: 403/429 with ``retry-after`` or a rate-limit
    message and ``x-ratelimit-reset`` are waited out (at most 120 s). POST is not retried
    on a plain 500, which could post a review twice."""
    if not settings.github_token:
        raise ConfigError("GITHUB_TOKEN is not set",
                          hint="in Actions pass secrets.GITHUB_TOKEN; by hand use a token "
                               "with pull-requests: write")
    from github import Auth, Github, GithubRetry

    retry = GithubRetry(total=3, backoff_factor=0.5, status_forcelist=[429, 502, 503, 504],
                        secondary_rate_wait=5, max_rate_limit_wait=120)
    # PyGithub spaces every request by 0.25 s by default; only writes need spacing.
    return Github(auth=Auth.Token(settings.github_token),
                  base_url=(api_url or settings.github_api_url).rstrip("/"), timeout=30,
                  retry=retry, per_page=100, seconds_between_requests=0,
                  seconds_between_writes=settings.github_write_interval)


def github_error(exc: BaseException, what: str) -> Exception:
    """Wrap a PyGithub / requests exception once, at the edge."""
    from github import BadCredentialsException, GithubException, UnknownObjectException
    from requests import RequestException

    if isinstance(exc, UnknownObjectException):
        return RemoteChangeNotFound(f"{what}: not found (or the token cannot see it)")
    if isinstance(exc, BadCredentialsException):
        return ConfigError(f"{what}: GitHub refused the token (HTTP 401)",
                           hint="check GITHUB_TOKEN")
    if isinstance(exc, GithubException):
        data = exc.data if isinstance(exc.data, dict) else {}
        detail = data.get("message") or str(exc.data)
        errors = data.get("errors")
        if errors:
            detail += f": {errors[0] if isinstance(errors[0], str) else json.dumps(errors[0])}"
        return ServiceError(redact(f"{what}: GitHub answered HTTP {exc.status}: {detail}"))
    if isinstance(exc, RequestException):
        return ServiceError(redact(f"{what}: GitHub API unreachable ({type(exc).__name__})"))
    return ServiceError(redact(f"{what}: {exc}"))


def _file_diff(f: Any) -> tuple[str, bool]:
    """The unified diff of one files-API entry, and whether its patch is missing."""
    new, old = f.filename, (f.previous_filename or f.filename)
    status, patch, changes = f.status, f.patch, (f.additions or 0) + (f.deletions or 0)
    out = [f"diff --git a/{old} b/{new}"]
    if status == "added":
        out.append("new file mode 100644")
    elif status == "removed":
        out.append("deleted file mode 100644")
    elif status in ("renamed", "copied"):
        verb = "rename" if status == "renamed" else "copy"
        out += [f"{verb} from {old}", f"{verb} to {new}"]
    if patch is None:
        if changes == 0 and status not in ("renamed", "copied", "removed"):
            src = "/dev/null" if status == "added" else f"a/{old}"
            out.append(f"Binary files {src} and b/{new} differ")
        return "\n".join(out), changes > 0
    out.append("--- /dev/null" if status == "added" else f"--- a/{old}")
    out.append("+++ /dev/null" if status == "removed" else f"+++ b/{new}")
    out.append(patch.rstrip("\n"))
    return "\n".join(out), False


class GitHubSource:
    name = "github"

    def __init__(self, settings: Settings, repo: Path | None = None) -> None:
        self.settings = settings
        self.repo_path = repo
        self._gh_repo: Any = None
        self.pull: Any = None  # the PyGithub PullRequest of the last fetch

    def fetch(self, ref: str) -> Change:
        repo_name, number, api_url = parse_pr_ref(ref, self.settings.github_api_url)
        what = f"pull request {repo_name}#{number}"
        from github import GithubException
        from requests import RequestException

        try:
            gh = github_client(self.settings, api_url)
            self._gh_repo = gh.get_repo(repo_name)
            pr = self.pull = self._gh_repo.get_pull(number)
            files = list(pr.get_files())
        except (GithubException, RequestException) as exc:
            raise github_error(exc, what) from exc
        parts, missing = [], []
        for f in files:
            text, lacks_patch = _file_diff(f)
            parts.append(text)
            if lacks_patch:
                missing.append(f.filename)
        raw = "\n".join(parts) + ("\n" if parts else "")
        notes: list[str] = []
        change_files = tuple(parse_diff(raw))
        truncated = (pr.changed_files or 0) > len(files)  # the files API stops at 3,000
        if truncated:
            missing.append(f"{pr.changed_files - len(files)} more file(s) the API did not list")
        if missing:
            local = self._local_diff(pr.base.sha, pr.head.sha)
            if local is not None:
                raw, change_files = local.raw_diff, local.files
                notes.append(f"GitHub sent no patch for {len(missing)} file(s); the diff was "
                             "made from the local checkout")
            else:
                notes += [f"skipped {p}: GitHub sent no patch (diff too large); check out the "
                          "repository with both commits (fetch-depth: 0) and pass --repo"
                          for p in missing]
                if truncated:
                    notes.append(f"GitHub listed {len(files)} of {pr.changed_files} files; "
                                 "the rest were not reviewed")
        return Change(id=f"{repo_name}#{number}", source="github", title=pr.title or "",
                      description=pr.body or "", author=pr.user.login if pr.user else "",
                      base_ref=pr.base.sha, head_ref=pr.head.sha, url=pr.html_url,
                      files=change_files, raw_diff=raw, notes=tuple(notes))

    def _local_checkout(self, *shas: str):
        """The local git repository when it has every one of ``shas``, else None."""
        if self.repo_path is None:
            return None
        from bot.hosts.git.source import GitSource

        source = GitSource(self.repo_path)
        try:
            for sha in shas:
                source._commit(sha)
        except SourceError:
            return None
        return source

    def _local_diff(self, base: str, head: str) -> Change | None:
        source = self._local_checkout(base, head)
        return source.fetch(f"{base}..{head}") if source else None

    def tree(self, change: Change) -> TreeReader | None:
        if change.head_ref is None:
            return None
        local = self._local_checkout(change.head_ref)
        if local is not None:
            return local.tree(change)
        if self._gh_repo is None:
            return None
        return GitHubTree(self._gh_repo, change.head_ref, [f.path for f in change.files])


class GitHubTree:
    """Files at the head SHA through the contents API (no checkout at hand)."""

    def __init__(self, gh_repo: Any, sha: str, changed: list[str]) -> None:
        self.gh_repo = gh_repo
        self.sha = sha
        self.changed = changed
        self.read_text = lru_cache(maxsize=64)(self._read)

    def _read(self, path: str) -> str | None:
        from github import GithubException

        try:
            content = self.gh_repo.get_contents(path.strip("/"), ref=self.sha)
        except GithubException:
            return None
        if isinstance(content, list) or content.encoding != "base64":
            return None
        data = content.decoded_content
        return None if b"\x00" in data[:8192] else data.decode("utf-8", errors="replace")

    def list_files(self) -> list[str]:
        from github import GithubException

        try:
            tree = self.gh_repo.get_git_tree(self.sha, recursive=True)
        except GithubException:
            return list(self.changed)
        return [e.path for e in tree.tree if e.type == "blob"]

    def grep(self, pattern: str, *, regex: bool = False, limit: int = 50) -> list[GrepHit]:
        """Searches the changed files only: the API has no grep at a commit."""
        matcher = re.compile(pattern if regex else re.escape(pattern))
        hits: list[GrepHit] = []
        for path in self.changed:
            text = self.read_text(path)
            for n, line in enumerate((text or "").split("\n"), 1):
                if matcher.search(line):
                    hits.append((path, n, line[:300]))
                    if len(hits) >= limit:
                        return hits
        return hits
