"""Merge requests from GitLab (python-gitlab; self-managed servers from GITLAB_URL, the CI
server, or the merge request URL).

The change is the merge request's ``diff_refs`` (base, start, head SHA) and its per-file
diffs from the paginated ``/merge_requests/:iid/diffs`` API (GitLab 15.7+; older servers
answer 404 and ``/changes`` is read instead). GitLab sends an empty diff for a file past its
diff limits (collapsed or too large) and cuts the file list of a very large merge request
(``changes_count`` "1000+"): then the change is diffed from the local checkout (``--repo``)
when it has both commits, and otherwise the files without a diff are listed as skipped.

With only ``CI_JOB_TOKEN`` (which GitLab may not let read merge requests), the checkout's
``CI_MERGE_REQUEST_DIFF_BASE_SHA..CI_COMMIT_SHA`` stands in for the API.

What the pushes after a reviewed head changed (``changes_since``, incremental review) comes
from the checkout too when it has both commits, else from the merge base and compare APIs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bot.change import Change
from bot.diff.parse import decode_diff, parse_diff
from bot.errors import ServiceError
from bot.hosts.api_tree import ApiTree
from bot.hosts.base import TreeReader
from bot.hosts.gitlab.client import (
    MergeRequestRef,
    MergeState,
    gitlab_client,
    gitlab_error,
    parse_mr_ref,
)

if TYPE_CHECKING:
    from bot.hosts.git.source import GitSource

__all__ = ["GitLabSource", "GitLabTree", "file_diff"]


def file_diff(entry: dict[str, Any]) -> tuple[str, bool]:
    """One ``/diffs`` entry as a git-style diff, and whether GitLab left its diff out."""
    old, new = entry.get("old_path") or "", entry.get("new_path") or ""
    a_mode, b_mode = entry.get("a_mode") or "100644", entry.get("b_mode") or "100644"
    added, deleted = bool(entry.get("new_file")), bool(entry.get("deleted_file"))
    renamed = bool(entry.get("renamed_file")) and old != new
    out = [f"diff --git a/{old} b/{new}"]
    if added:
        out.append(f"new file mode {b_mode}")
    elif deleted:
        out.append(f"deleted file mode {a_mode}")
    elif a_mode != b_mode:
        out += [f"old mode {a_mode}", f"new mode {b_mode}"]
    if renamed:
        out += [f"rename from {old}", f"rename to {new}"]
    text = str(entry.get("diff") or "")
    if text.startswith("Binary files"):
        return "\n".join([*out, text.rstrip("\n")]), False
    if not text.strip():
        # GitLab sends no diff past its limits; a pure rename or mode change has none anyway
        cut = bool(entry.get("too_large") or entry.get("collapsed"))
        return "\n".join(out), cut or added or deleted or not (renamed or a_mode != b_mode)
    out.append("--- /dev/null" if added else f"--- a/{old}")
    out.append("+++ /dev/null" if deleted else f"+++ b/{new}")
    out.append(text.rstrip("\n"))
    return "\n".join(out), False


class GitLabSource:
    name = "gitlab"

    def __init__(self, session: MergeState) -> None:
        self.session = session

    def fetch(self, ref: str) -> Change:
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        session = self.session
        mr_ref = session.ref = parse_mr_ref(ref, session.gitlab)
        what = f"merge request {mr_ref.id}"
        try:
            session.client = gitlab_client(session.gitlab, mr_ref.url)
            session.project = session.client.projects.get(mr_ref.project, lazy=True)
            mr = session.mr = session.project.mergerequests.get(mr_ref.iid)
        except (GitlabError, RequestException) as exc:
            code = getattr(exc, "response_code", None)
            if session.job_token_only and code in (401, 403, 404):
                session.mr = None
                local = self._job_token_change(mr_ref)
                if local is not None:
                    return local
            raise gitlab_error(exc, what) from exc
        refs = dict(mr.diff_refs or {})
        if not refs.get("head_sha") or not refs.get("base_sha"):
            raise ServiceError(
                f"{what}: GitLab has not prepared its diff yet (no diff_refs); "
                "run the job again in a moment"
            )
        refs.setdefault("start_sha", refs["base_sha"])
        session.diff_refs = refs
        try:
            entries, listed_all = self._diffs(mr_ref)
        except (GitlabError, RequestException) as exc:
            raise gitlab_error(exc, f"{what}: reading its diffs") from exc
        return self._change(mr, mr_ref, entries, listed_all)

    def _diffs(self, mr_ref: MergeRequestRef) -> tuple[list[dict[str, Any]], bool]:
        """Every file's diff, and whether GitLab listed every changed file."""
        from gitlab.exceptions import GitlabError

        mr, client = self.session.mr, self.session.client
        assert mr is not None and client is not None, "fetch the change first"
        path = f"/projects/{mr_ref.encoded}/merge_requests/{mr_ref.iid}/diffs"
        try:
            entries = list(client.http_list(path, iterator=True, per_page=100))
        except GitlabError as exc:
            if exc.response_code != 404:
                raise
            changes = mr.changes()  # GitLab < 15.7
            if not isinstance(changes, dict):  # a raw response: only when streamed
                raise
            return list(changes.get("changes") or []), not changes.get("overflow")
        return entries, not str(mr.changes_count or "").endswith("+")

    def _change(
        self, mr: Any, mr_ref: MergeRequestRef, entries: list[dict[str, Any]], listed_all: bool
    ) -> Change:
        parts, missing = [], []
        for entry in entries:
            text, cut = file_diff(entry)
            parts.append(text)
            if cut:
                missing.append(entry.get("new_path") or entry.get("old_path") or "?")
        raw = decode_diff("\n".join(parts) + ("\n" if parts else ""))
        files = tuple(parse_diff(raw))
        base, head = self.session.diff_refs["base_sha"], self.session.diff_refs["head_sha"]
        notes: list[str] = []
        if missing or not listed_all:
            local = self._local_diff(base, head)
            if local is not None:
                raw, files = local.raw_diff, local.files
                notes.append(
                    "GitLab left out part of the diff (over its diff limits); the diff "
                    "was made from the local checkout"
                )
            else:
                notes += [
                    f"skipped {p}: GitLab sent no diff (collapsed or too large); check "
                    "out the repository with both commits (GIT_DEPTH: 0) and pass --repo"
                    for p in missing
                ]
                if not listed_all:
                    notes.append(
                        f"GitLab listed {len(entries)} of {mr.changes_count} files; "
                        "the rest were not reviewed"
                    )
        author = (mr.author or {}).get("username", "") if isinstance(mr.author, dict) else ""
        return Change(
            id=mr_ref.id,
            source="gitlab",
            title=mr.title or "",
            description=mr.description or "",
            author=author,
            base_ref=base,
            head_ref=head,
            url=mr.web_url,
            files=files,
            raw_diff=raw,
            notes=tuple(notes),
        )

    def _job_token_change(self, mr_ref: MergeRequestRef) -> Change | None:
        """CI_JOB_TOKEN may not read merge requests: the pipeline's own checkout has them."""
        s = self.session.gitlab
        base, head = s.merge_request_diff_base_sha, s.commit_sha
        local = self._local_diff(base, head) if base and head else None
        if local is None:
            return None
        return replace(
            local,
            id=mr_ref.id,
            source="gitlab",
            url=None,
            notes=(
                *local.notes,
                "CI_JOB_TOKEN cannot read the merge request through the API: the "
                "diff was made from the checkout (CI_MERGE_REQUEST_DIFF_BASE_SHA.."
                "CI_COMMIT_SHA)",
            ),
        )

    def _local_checkout(self, *shas: str) -> GitSource | None:
        """The local git repository when it has every one of ``shas``, else None."""
        from bot.hosts.git.source import checkout_with

        return checkout_with(self.session.repo_path, *shas)

    def _local_diff(self, base: str, head: str) -> Change | None:
        source = self._local_checkout(base, head)
        return source.fetch(f"{base}..{head}") if source else None

    def changes_since(self, change: Change, since: str) -> Change | None:
        """``since..head``: from the checkout when it has both commits, else GitLab's merge
        base (is ``since`` still in the branch?) and compare APIs. None after a force-push,
        when GitLab no longer has ``since``, or when a file is past its diff limits."""
        head = change.head_ref
        if head is None:
            return None
        local = self._local_checkout(since, head)
        if local is not None:
            return local.changes_since(change, since)
        if self.session.project is None:
            return None
        found = self._compare(since, head, f"comparing {since[:12]}..{head[:12]}")
        if found is None or found.get("compare_timeout"):
            return None  # GitLab cut the comparison short: review the whole change
        parts = []
        for entry in found.get("diffs") or []:
            text, cut = file_diff(entry)
            if cut:
                return None  # a file past GitLab's diff limits: review the whole change
            parts.append(text)
        raw = decode_diff("\n".join(parts) + ("\n" if parts else ""))
        return replace(change, base_ref=since, files=tuple(parse_diff(raw)), raw_diff=raw, notes=())

    def _compare(self, since: str, head: str, what: str) -> dict[str, Any] | None:
        """GitLab's ``since..head`` when ``since`` is an ancestor of ``head``, else None.
        GitLab answers 400 (merge base) or 404 (compare) for a commit it does not have."""
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        project = self.session.project
        assert project is not None, "fetch the change first"
        try:
            base = project.repository_merge_base([since, head])
            if not isinstance(base, dict) or not str(base.get("id") or "").startswith(since):
                return None  # a rebase or force-push: since is no longer in the branch
            found = project.repository_compare(since, head, straight="true")
        except GitlabError as exc:
            if exc.response_code in (400, 404):
                return None
            raise gitlab_error(exc, what) from exc
        except RequestException as exc:
            raise gitlab_error(exc, what) from exc
        return found if isinstance(found, dict) else None

    def read_base(self, change: Change, path: str) -> bytes | None:
        """At the merge request's base (the target branch): the checkout, else the API."""
        if change.base_ref is None:
            return None
        local = self._local_checkout(change.base_ref)
        if local is not None:
            return local.read_base(change, path)
        if self.session.project is None or self.session.mr is None:
            return None
        return GitLabTree(self.session.project, change.base_ref, []).fetch(path)

    def tree(self, change: Change) -> TreeReader | None:
        if change.head_ref is None:
            return None
        local = self._local_checkout(change.head_ref)
        if local is not None:
            return local.tree(change)
        if self.session.project is None or self.session.mr is None:
            return None
        return GitLabTree(self.session.project, change.head_ref, [f.path for f in change.files])


class GitLabTree(ApiTree):
    """Files at the head SHA through the repository files API (no checkout at hand)."""

    def __init__(self, project: Any, sha: str, changed: list[str]) -> None:
        super().__init__(sha, changed)
        self.project = project

    def fetch(self, path: str) -> bytes | None:
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        try:
            data = self.project.files.raw(file_path=path, ref=self.sha)
        except (GitlabError, RequestException):
            return None
        return data if isinstance(data, bytes) else None

    def paths(self) -> list[str] | None:
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        try:
            rows = self.project.repository_tree(ref=self.sha, recursive=True, iterator=True)
            return [r["path"] for r in rows if r.get("type") == "blob"]
        except (GitlabError, RequestException):
            return None
