"""Pull requests from GitHub (PyGithub; GitHub Enterprise through ``GITHUB_API_URL``).

The diff is built from the files API's per-file patches. GitHub omits a patch when a file's
diff is too large (and answers 406 for whole diffs past ~20,000 lines / 300 files): then the
change is diffed locally from the checkout (``--repo``) when it has both commits, and
otherwise the files without a patch are listed as skipped, with what to do about it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bot.change import Change
from bot.diff.parse import decode_diff, parse_diff
from bot.hosts.api_tree import ApiTree
from bot.hosts.base import TreeReader
from bot.hosts.github.client import PullState, github_client, github_error, parse_pr_ref

if TYPE_CHECKING:
    from bot.hosts.git.source import GitSource

__all__ = ["GitHubSource", "GitHubTree"]


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

    def __init__(self, session: PullState) -> None:
        self.session = session

    def fetch(self, ref: str) -> Change:
        session = self.session
        repo_name, number, api_url = parse_pr_ref(ref, session.github.api_url)
        what = f"pull request {repo_name}#{number}"
        from github import GithubException
        from requests import RequestException

        try:
            session.client = github_client(session.github, api_url)
            session.repo = session.client.get_repo(repo_name)
            pr = session.pull = session.repo.get_pull(number)
            files = list(pr.get_files())
        except (GithubException, RequestException) as exc:
            raise github_error(exc, what) from exc
        parts, missing = [], []
        for f in files:
            text, lacks_patch = _file_diff(f)
            parts.append(text)
            if lacks_patch:
                missing.append(f.filename)
        raw = decode_diff("\n".join(parts) + ("\n" if parts else ""))
        notes: list[str] = []
        change_files = tuple(parse_diff(raw))
        truncated = (pr.changed_files or 0) > len(files)  # the files API stops at 3,000
        if truncated:
            missing.append(f"{pr.changed_files - len(files)} more file(s) the API did not list")
        if missing:
            local = self._local_diff(pr.base.sha, pr.head.sha)
            if local is not None:
                raw, change_files = local.raw_diff, local.files
                notes.append(
                    f"GitHub sent no patch for {len(missing)} file(s); the diff was "
                    "made from the local checkout"
                )
            else:
                notes += [
                    f"skipped {p}: GitHub sent no patch (diff too large); check out the "
                    "repository with both commits (fetch-depth: 0) and pass --repo"
                    for p in missing
                ]
                if truncated:
                    notes.append(
                        f"GitHub listed {len(files)} of {pr.changed_files} files; "
                        "the rest were not reviewed"
                    )
        return Change(
            id=f"{repo_name}#{number}",
            source="github",
            title=pr.title or "",
            description=pr.body or "",
            author=pr.user.login if pr.user else "",
            base_ref=pr.base.sha,
            head_ref=pr.head.sha,
            url=pr.html_url,
            files=change_files,
            raw_diff=raw,
            notes=tuple(notes),
        )

    def _local_checkout(self, *shas: str) -> GitSource | None:
        """The local git repository when it has every one of ``shas``, else None."""
        from bot.hosts.git.source import checkout_with

        return checkout_with(self.session.repo_path, *shas)

    def _local_diff(self, base: str, head: str) -> Change | None:
        source = self._local_checkout(base, head)
        return source.fetch(f"{base}..{head}") if source else None

    def tree(self, change: Change) -> TreeReader | None:
        if change.head_ref is None:
            return None
        local = self._local_checkout(change.head_ref)
        if local is not None:
            return local.tree(change)
        if self.session.repo is None:
            return None
        return GitHubTree(self.session.repo, change.head_ref, [f.path for f in change.files])

    def changes_since(self, change: Change, since: str) -> Change | None:
        """``since..head`` from the checkout when it has both, else the compare API."""
        head = change.head_ref
        if head is None:
            return None
        local = self._local_checkout(since, head)
        if local is not None:
            return local.changes_since(change, since)
        from github import GithubException
        from requests import RequestException

        assert self.session.repo is not None, "fetch the change first"
        try:
            comparison = self.session.repo.compare(since, head)
            files = list(comparison.files) if comparison.status in ("ahead", "identical") else None
        except GithubException as exc:
            if exc.status in (404, 422):  # the old head is gone (force-push)
                return None
            raise github_error(exc, f"comparing {since[:12]}..{head[:12]}") from exc
        except RequestException as exc:
            raise github_error(exc, f"comparing {since[:12]}..{head[:12]}") from exc
        if files is None:
            return None
        parts = []
        for f in files:
            text, lacks_patch = _file_diff(f)
            if lacks_patch:
                return None  # a file too big to compare: review the whole change
            parts.append(text)
        raw = decode_diff("\n".join(parts) + ("\n" if parts else ""))
        return replace(change, base_ref=since, files=tuple(parse_diff(raw)), raw_diff=raw, notes=())

    def read_base(self, change: Change, path: str) -> bytes | None:
        if change.base_ref is None:
            return None
        local = self._local_checkout(change.base_ref)
        if local is not None:
            return local.read_base(change, path)
        if self.session.repo is None:
            return None
        return GitHubTree(self.session.repo, change.base_ref, []).fetch(path)


class GitHubTree(ApiTree):
    """Files at the head SHA through the contents API (no checkout at hand)."""

    def __init__(self, gh_repo: Any, sha: str, changed: list[str]) -> None:
        super().__init__(sha, changed)
        self.gh_repo = gh_repo

    def fetch(self, path: str) -> bytes | None:
        from github import GithubException

        try:
            content = self.gh_repo.get_contents(path, ref=self.sha)
        except GithubException:
            return None
        if isinstance(content, list) or content.encoding != "base64":
            return None
        return bytes(content.decoded_content)

    def paths(self) -> list[str] | None:
        from github import GithubException

        try:
            tree = self.gh_repo.get_git_tree(self.sha, recursive=True)
        except GithubException:
            return None
        return [e.path for e in tree.tree if e.type == "blob"]
