"""A local server that answers like GitLab's REST API (v4), for python-gitlab.

Projects by numeric id or URL-encoded path, merge requests with ``diff_refs``, their diffs
(``/diffs`` with GitLab's pagination headers: ``x-page``, ``x-next-page``, ``x-total``,
``link``; ``/changes`` for servers before 15.7), discussions, notes, ``/user``, repository
files and trees at a SHA, the repository's compare and merge base (answered from a real git
repository, ``repository``), and merge request creation. And GitLab's rules and failures:

- a diff thread's ``position`` (``position_type: text`` with the merge request's
  ``diff_refs``): an added line takes ``new_line`` only, a removed line ``old_line`` only,
  an unchanged line BOTH; anything else is answered 400 ``line_code can't be blank``, and the
  thread is not created (``rejected_positions`` counts them; ``refused_lines`` names
  (new_path, new_line) pairs refused so even though they are in the diff);
- 401 for a missing or wrong token; 403 for ``CI_JOB_TOKEN`` writing (and, with
  ``job_token_reads = False``, 404 for it reading a merge request);
- 429 with ``Retry-After`` for the next ``rate_limited_writes`` writes;
- ``write_faults``: (method, path regex, kind) consumed one per matching write, kind
  "slow" (stored, answered after ``slow_seconds``) or an HTTP status (answered without
  storing anything); ``read_faults``: (path regex, status) consumed one per matching GET;
- ``retry_after_faults`` (h-hardening's block): (method, path regex, status, Retry-After)
  consumed one per matching request, answered ``status`` with that ``Retry-After`` (delta
  seconds or an HTTP date; a callable makes the value when answering);
- note bodies over 1,000,000 characters are refused (400);
- quick actions in what Nova's token posts (a note, a thread, a reply, an edit, a merge
  request's description) run as Nova, as on GitLab: recorded in ``actions`` (username,
  name, argument, where) and taken out of the stored text (``gitlab_threads.quick_actions``
  reads them by GitLab's rules);
- compare with a ref the repository does not have: 404 ``Ref Not Found``; merge base with
  one: 400 ``Could not find ref: …`` (GitLab's lib/api/repositories.rb).

Which lines a position may name is computed here from the diff text by the server's own
reading, not by Nova's parser, so the two check each other.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlparse

from tests.servers.base import JsonHandler, LocalHTTPServer
from tests.servers.gitlab_threads import GitLabThreadsMixin

__all__ = ["BODY_LIMIT", "FakeGitLab", "MergeRequestSpec", "diff_lines", "git_diffs"]

BODY_LIMIT = 1_000_000
LINE_CODE = '400 Bad request - Note {:line_code=>["can\'t be blank"]}'


def diff_lines(diff: str) -> tuple[set[int], set[int], set[tuple[int, int]]]:
    """(added new lines, removed old lines, context (old, new) pairs) of one file's diff."""
    added, removed, context = set(), set(), set()
    old = new = 0
    in_hunk = False
    for row in diff.split("\n"):
        m = re.match(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", row)
        if m:
            old, new, in_hunk = int(m.group(1)), int(m.group(2)), True
        elif not in_hunk or row.startswith("\\"):
            continue
        elif row.startswith("+"):
            added.add(new)
            new += 1
        elif row.startswith("-"):
            removed.add(old)
            old += 1
        elif row.startswith(" "):
            context.add((old, new))
            old, new = old + 1, new + 1
    return added, removed, context


def _git(repository: Path, *args: str) -> str | None:
    """git's output in ``repository``, or None when git refuses (an unknown ref)."""
    done = subprocess.run(
        ["git", "-c", "core.quotepath=false", *args],
        cwd=repository,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


def git_diffs(repository: Path, base: str, head: str) -> list[dict[str, Any]]:
    """git's diff of base..head as GitLab's diff entries (``/diffs``, compare): one per file,
    its text from the first hunk on (GitLab sends no file headers)."""
    entries = []
    for row in (_git(repository, "diff", "--name-status", "-M", base, head) or "").splitlines():
        status, *paths = row.split("\t")
        old, new = paths[0], paths[-1]
        raw = _git(repository, "diff", "-M", base, head, "--", *dict.fromkeys([old, new])) or ""
        at = raw.find("@@")
        body = (
            raw[at:]
            if at >= 0
            else next((ln + "\n" for ln in raw.splitlines() if ln.startswith("Binary files")), "")
        )
        entries.append(
            {
                "old_path": old,
                "new_path": new,
                "diff": body,
                "new_file": status == "A",
                "deleted_file": status == "D",
                "renamed_file": status.startswith("R"),
            }
        )
    return entries


@dataclass
class MergeRequestSpec:
    project: str  # group/sub/project
    iid: int
    base_sha: str
    head_sha: str
    diffs: list[dict[str, Any]]  # old_path, new_path, diff, new_file, renamed_file, ...
    start_sha: str | None = None
    contents: dict[str, str] = field(default_factory=dict)  # path -> text at head
    base_contents: dict[str, str] = field(default_factory=dict)  # path -> text at base
    title: str = "A change"
    description: str = ""
    author: str = "ada"
    project_id: int = 42
    changes_count: str | None = None  # "1000+": GitLab cut the file list


class FakeGitLab(GitLabThreadsMixin, LocalHTTPServer):
    def __init__(
        self,
        token: str = "gitlab-test-token-not-a-secret",
        prefix: str = "",
        job_token: str = "gitlab-job-token-not-a-secret",
        user_id: int = 77,
        username: str = "nova-bot",
    ) -> None:
        self.token = token
        self.job_token = job_token
        self.prefix = prefix  # "/gitlab": a server under a relative URL root
        self.user = {"id": user_id, "username": username, "name": "Nova", "bot": True}
        self.merge_requests: dict[tuple[str, int], MergeRequestSpec] = {}
        self.discussions: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []  # non-diff notes (the summary)
        self.created_mrs: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str, Any]] = []
        self.rejected_positions: list[dict[str, Any]] = []
        self.refused_lines: set[tuple[str, int]] = set()  # (new_path, new_line): 400 anyway
        self.write_faults: list[tuple[str, str, str | int]] = []
        self.read_faults: list[tuple[str, int]] = []  # (path regex, status) for GETs
        self.slow_seconds = 3.0
        self.rate_limited_writes = 0
        self.retry_after_faults: list[tuple[str, str, int, str | Callable[[], str]]] = []
        self.diffs_api = True  # False: a GitLab before 15.7 (no /diffs, only /changes)
        self.job_token_reads = True
        self.max_per_page = 100
        self.repository: Path | None = None  # the project's git repository (compare)
        self._next_id = 500
        self._lock = threading.Lock()
        self.init_threads()  # replies, resolving, members (gitlab_threads.py)

    # -- setup -----------------------------------------------------------------------
    def add_merge_request(self, spec: MergeRequestSpec) -> MergeRequestSpec:
        self.merge_requests[(spec.project, spec.iid)] = spec
        return spec

    def add_note(
        self, spec: MergeRequestSpec, body: str, user_id: int = 5, username: str = "mallory"
    ) -> dict[str, Any]:
        """A note written by another user (e.g. one forging Nova's markers)."""
        note = self._note(spec, body, {"id": user_id, "username": username})
        self.notes.append(note)
        return note

    def add_thread(
        self,
        spec: MergeRequestSpec,
        body: str,
        position: dict[str, Any],
        user_id: int = 5,
        username: str = "mallory",
    ) -> dict[str, Any]:
        note = self._note(spec, body, {"id": user_id, "username": username}, position)
        discussion = {
            "id": f"{self._id():040x}",
            "mr": (spec.project, spec.iid),
            "individual_note": False,
            "notes": [note],
        }
        self.discussions.append(discussion)
        return discussion

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    @property
    def url(self) -> str:
        """The server's base URL (what GITLAB_URL names)."""
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def handler(self) -> type[JsonHandler]:
        owner = self

        class Handler(JsonHandler):
            def _handle(self) -> None:
                raw = self.read_body()
                body = json.loads(raw) if raw else None
                status, payload, headers = owner._route(
                    self.command, self.path, body, {k.lower(): v for k, v in self.headers.items()}
                )
                delay = headers.pop("x-test-delay", None)
                if delay:  # a write GitLab stored but answers late (the client times out)
                    owner.stopping.wait(float(delay))
                if isinstance(payload, bytes):
                    self._send_raw(status, payload)
                else:
                    self.send_json(status, payload, headers)

            def _send_raw(self, status: int, data: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", "text/plain; charset=utf-8")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_DELETE = _handle  # noqa: N815

        return Handler

    # -- routing ---------------------------------------------------------------------
    def _route(
        self, method: str, raw_path: str, body: Any, headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        url = urlparse(raw_path)
        # an array (refs[]=a&refs[]=b) as GitLab also takes it: comma-separated
        query = {
            k: ",".join(v) if k.endswith("[]") else v[0] for k, v in parse_qs(url.query).items()
        }
        with self._lock:
            self.requests.append((method, url.path, body))
            api = f"{self.prefix}/api/v4"
            if not url.path.startswith(api + "/"):
                return 404, {"message": "404 Not Found"}, {}
            path = url.path[len(api) :]
            who = self._auth(headers)
            if who is None:
                return 401, {"message": "401 Unauthorized"}, {}
            limited = self._take_retry_after(method, path)
            if limited is not None:
                return limited
            if who == "job" and (method != "GET" or path == "/user"):
                if path == "/user":
                    return 401, {"message": "401 Unauthorized"}, {}
                return 403, {"message": "403 Forbidden"}, {}
            if who == "job" and not self.job_token_reads and "/merge_requests" in path:
                return 404, {"message": "404 Project Not Found"}, {}
            if method == "GET":
                failed = self._take_fault(method, path)
                if isinstance(failed, int):
                    return failed, {"message": f"{failed} Bad Gateway"}, {}
            else:
                if self.rate_limited_writes > 0:
                    self.rate_limited_writes -= 1
                    return 429, {"message": "429 Too Many Requests"}, {"Retry-After": "1"}
                too_long = isinstance(body, dict) and len(str(body.get("body") or "")) > BODY_LIMIT
                if too_long:
                    return (
                        400,
                        {
                            "message": {
                                "note": [f"is too long (maximum is {BODY_LIMIT} characters)"]
                            }
                        },
                        {},
                    )
                fault = self._take_fault(method, path)
                if isinstance(fault, int):
                    return fault, {"message": f"{fault} Internal Server Error"}, {}
                if fault == "slow":
                    status, payload, extra = self._dispatch(method, path, query, body)
                    return status, payload, {**extra, "x-test-delay": str(self.slow_seconds)}
            return self._dispatch(method, path, query, body)

    def _auth(self, headers: dict[str, str]) -> str | None:
        if (
            headers.get("private-token") == self.token
            or headers.get("authorization") == f"Bearer {self.token}"
        ):
            return "user"
        if headers.get("job-token") == self.job_token:
            return "job"
        return None

    # -- Retry-After faults (h-hardening) ---------------------------------------------
    def _take_retry_after(self, method: str, path: str) -> tuple[int, Any, dict[str, str]] | None:
        """A rate limit (or a busy server) that names its wait as Retry-After."""
        for i, (verb, pattern, status, value) in enumerate(self.retry_after_faults):
            if verb == method and re.search(pattern, path):
                del self.retry_after_faults[i]
                after = value() if callable(value) else value
                return status, {"message": f"{status} Too Many Requests"}, {"Retry-After": after}
        return None

    def _take_fault(self, method: str, path: str) -> str | int | None:
        if method == "GET":
            for i, (pattern, status) in enumerate(self.read_faults):
                if re.search(pattern, path):
                    del self.read_faults[i]
                    return status
            return None
        for i, (verb, pattern, kind) in enumerate(self.write_faults):
            if verb == method and re.search(pattern, path):
                del self.write_faults[i]
                return kind
        return None

    def _dispatch(
        self, method: str, path: str, query: dict[str, str], body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        mr = r"^/projects/([^/]+)/merge_requests/(\d+)"
        routes = [
            ("GET", r"^/user$", self._get_user),
            ("GET", r"^/projects/([^/]+)$", self._get_project),
            ("POST", r"^/projects/([^/]+)/merge_requests$", self._create_mr),
            ("GET", mr + "$", self._get_mr),
            ("GET", mr + "/diffs$", self._get_diffs),
            ("GET", mr + "/changes$", self._get_changes),
            ("GET", mr + "/discussions$", self._list_discussions),
            ("POST", mr + "/discussions$", self._create_discussion),
            ("GET", mr + "/notes$", self._list_notes),
            ("POST", mr + "/notes$", self._create_note),
            ("PUT", mr + r"/notes/(\d+)$", self._edit_note),
            ("GET", r"^/projects/([^/]+)/repository/files/([^/]+)/raw$", self._raw_file),
            ("GET", r"^/projects/([^/]+)/repository/tree$", self._tree),
            ("GET", r"^/projects/([^/]+)/repository/compare$", self._compare),
            ("GET", r"^/projects/([^/]+)/repository/merge_base$", self._merge_base),
            *self.thread_routes(mr),
        ]
        for verb, pattern, handler in routes:
            m = re.match(pattern, path)
            if verb == method and m:
                return handler(*m.groups(), query=query, body=body, path=path)
        return 404, {"message": "404 Not Found"}, {}

    # -- helpers ---------------------------------------------------------------------
    def _project(self, pid: str) -> str | None:
        """A project named by numeric id or URL-encoded path."""
        name = unquote(pid)
        for spec in self.merge_requests.values():
            if name in (spec.project, str(spec.project_id)):
                return spec.project
        return None

    def _mr(self, pid: str, iid: str) -> MergeRequestSpec | None:
        project = self._project(pid)
        return self.merge_requests.get((project, int(iid))) if project else None

    def _not_found(self, what: str = "Not Found") -> tuple[int, Any, dict[str, str]]:
        return 404, {"message": f"404 {what}"}, {}

    def _page(
        self, items: list[Any], query: dict[str, str], path: str
    ) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int(query.get("per_page", 20)), self.max_per_page)
        page = int(query.get("page", 1))
        pages = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def link(n: int) -> str:
            params = {**query, "page": str(n), "per_page": str(per_page)}
            return f"{self.url}/api/v4{path}?{urlencode(params)}"

        rels = [(link(page + 1), "next")] if page < pages else []
        rels += [(link(page - 1), "prev")] if page > 1 else []
        rels += [(link(1), "first"), (link(pages), "last")]
        return (
            200,
            chunk,
            {
                "x-page": str(page),
                "x-per-page": str(per_page),
                "x-total": str(len(items)),
                "x-total-pages": str(pages),
                "x-next-page": str(page + 1) if page < pages else "",
                "x-prev-page": str(page - 1) if page > 1 else "",
                "link": ", ".join(f'<{u}>; rel="{r}"' for u, r in rels),
            },
        )

    def _refs(self, spec: MergeRequestSpec) -> dict[str, str]:
        return {
            "base_sha": spec.base_sha,
            "head_sha": spec.head_sha,
            "start_sha": spec.start_sha or spec.base_sha,
        }

    def _mr_json(self, spec: MergeRequestSpec) -> dict[str, Any]:
        return {
            "id": spec.project_id * 1000 + spec.iid,
            "iid": spec.iid,
            "project_id": spec.project_id,
            "title": spec.title,
            "description": spec.description,
            "state": "opened",
            "author": {"id": 3, "username": spec.author},
            "source_branch": "feature",
            "target_branch": "main",
            "sha": spec.head_sha,
            "diff_refs": self._refs(spec),
            "web_url": f"{self.url}/{spec.project}/-/merge_requests/{spec.iid}",
            "changes_count": spec.changes_count or str(len(spec.diffs)),
        }

    def _diff_json(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {
            "a_mode": "100644",
            "b_mode": "100644",
            "new_file": False,
            "renamed_file": False,
            "deleted_file": False,
            "generated_file": False,
            "diff": "",
            **entry,
        }

    def _note(
        self,
        spec: MergeRequestSpec,
        body: str,
        author: dict[str, Any],
        position: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {
            "id": self._id(),
            "mr": (spec.project, spec.iid),
            "body": body,
            "author": author,
            "system": False,
            "noteable_type": "MergeRequest",
            "noteable_iid": spec.iid,
            "type": "DiffNote" if position else None,
            "position": position,
        }

    @staticmethod
    def _public(note: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in note.items() if k != "mr"}

    # -- endpoints -------------------------------------------------------------------
    def _get_user(self, **_: Any):
        return 200, self.user, {}

    def _get_project(self, pid: str, **_: Any):
        project = self._project(pid)
        if project is None:
            return self._not_found("Project Not Found")
        spec = next(s for s in self.merge_requests.values() if s.project == project)
        return (
            200,
            {
                "id": spec.project_id,
                "path_with_namespace": project,
                "default_branch": "main",
                "web_url": f"{self.url}/{project}",
            },
            {},
        )

    def _create_mr(self, pid: str, body: Any, **_: Any):
        project = self._project(pid)
        if project is None:
            return self._not_found("Project Not Found")
        for key in ("source_branch", "target_branch", "title"):
            if not body.get(key):
                return 400, {"message": f"{key} is missing"}, {}
        iid = 100 + len(self.created_mrs)
        description = self.execute(str(body.get("description") or ""), self.user, f"!{iid}")
        mr = {
            **body,
            "description": description,
            "iid": iid,
            "project": project,
            "web_url": f"{self.url}/{project}/-/merge_requests/{iid}",
        }
        self.created_mrs.append(mr)
        return 201, {k: v for k, v in mr.items() if k != "project"}, {}

    def _get_mr(self, pid: str, iid: str, **_: Any):
        spec = self._mr(pid, iid)
        return (200, self._mr_json(spec), {}) if spec else self._not_found()

    def _get_diffs(self, pid: str, iid: str, query: dict[str, str], path: str, **_: Any):
        spec = self._mr(pid, iid)
        if spec is None or not self.diffs_api:
            return self._not_found()
        return self._page([self._diff_json(e) for e in spec.diffs], query, path)

    def _get_changes(self, pid: str, iid: str, **_: Any):
        spec = self._mr(pid, iid)
        if spec is None:
            return self._not_found()
        return (
            200,
            {
                **self._mr_json(spec),
                "overflow": bool(spec.changes_count),
                "changes": [self._diff_json(e) for e in spec.diffs],
            },
            {},
        )

    def _list_discussions(self, pid: str, iid: str, query: dict[str, str], path: str, **_: Any):
        spec = self._mr(pid, iid)
        if spec is None:
            return self._not_found()
        items = [
            {
                "id": d["id"],
                "individual_note": False,
                "notes": [self._public(n) for n in d["notes"]],
            }
            for d in self.discussions
            if d["mr"] == (spec.project, spec.iid)
        ]
        return self._page(items, query, path)

    def _check_position(self, spec: MergeRequestSpec, pos: dict[str, Any]) -> str | None:
        """GitLab's answer to a position it cannot place, or None when it can."""
        if pos.get("position_type") != "text":
            return "400 Bad request - position_type is invalid"
        if {k: pos.get(k) for k in ("base_sha", "start_sha", "head_sha")} != self._refs(spec):
            return LINE_CODE
        entry = next(
            (
                e
                for e in spec.diffs
                if e.get("new_path") == pos.get("new_path")
                and e.get("old_path") == pos.get("old_path")
            ),
            None,
        )
        if entry is None or (pos.get("new_path"), pos.get("new_line")) in self.refused_lines:
            return LINE_CODE
        added, removed, context = diff_lines(entry.get("diff") or "")
        new, old = pos.get("new_line"), pos.get("old_line")
        ok = (
            (new is not None and old is None and new in added)
            or (old is not None and new is None and old in removed)
            or (new is not None and old is not None and (old, new) in context)
        )
        return None if ok else LINE_CODE

    def _create_discussion(self, pid: str, iid: str, body: Any, **_: Any):
        spec = self._mr(pid, iid)
        if spec is None:
            return self._not_found()
        position = body.get("position")
        if position is not None:
            refused = self._check_position(spec, position)
            if refused:
                self.rejected_positions.append(position)
                return 400, {"message": refused}, {}
        text = self.execute(body["body"], self.user, f"merge request !{spec.iid}")
        note = self._note(spec, text, dict(self.user), position)
        discussion = {
            "id": f"{self._id():040x}",
            "mr": (spec.project, spec.iid),
            "individual_note": position is None,
            "notes": [note],
        }
        self.discussions.append(discussion)
        return (
            201,
            {
                "id": discussion["id"],
                "individual_note": discussion["individual_note"],
                "notes": [self._public(note)],
            },
            {},
        )

    def _list_notes(self, pid: str, iid: str, query: dict[str, str], path: str, **_: Any):
        spec = self._mr(pid, iid)
        if spec is None:
            return self._not_found()
        key = (spec.project, spec.iid)
        items = [n for n in self.notes if n["mr"] == key]
        items += [n for d in self.discussions if d["mr"] == key for n in d["notes"]]
        items.sort(key=lambda n: n["id"], reverse=query.get("sort") != "asc")
        return self._page([self._public(n) for n in items], query, path)

    def _create_note(self, pid: str, iid: str, body: Any, **_: Any):
        spec = self._mr(pid, iid)
        if spec is None:
            return self._not_found()
        text = self.execute(body["body"], self.user, f"merge request !{spec.iid}")
        note = self._note(spec, text, dict(self.user))
        self.notes.append(note)
        return 201, self._public(note), {}

    def _edit_note(self, pid: str, iid: str, note_id: str, body: Any, **_: Any):
        spec = self._mr(pid, iid)
        in_threads = [n for d in self.discussions for n in d["notes"]]
        for note in self.notes + in_threads:
            if spec and note["id"] == int(note_id) and note["mr"] == (spec.project, spec.iid):
                if note["author"]["id"] != self.user["id"]:
                    return 403, {"message": "403 Forbidden"}, {}
                note["body"] = self.execute(body["body"], self.user, f"note {note_id}")
                return 200, self._public(note), {}
        return self._not_found("Note Not Found")

    def _at(self, pid: str, ref: str | None) -> dict[str, str] | None:
        """The files of a project at a commit (a merge request's head or base)."""
        project = self._project(pid)
        for s in self.merge_requests.values():
            if s.project == project and ref in (s.head_sha, s.base_sha):
                return s.contents if ref == s.head_sha else s.base_contents
        return None

    def _raw_file(self, pid: str, file_path: str, query: dict[str, str], **_: Any):
        files = self._at(pid, query.get("ref"))
        name = unquote(file_path)
        if files is None or name not in files:
            return self._not_found("File Not Found")
        return 200, files[name].encode(), {}

    def _tree(self, pid: str, query: dict[str, str], path: str, **_: Any):
        files = self._at(pid, query.get("ref"))
        if files is None:
            return self._not_found("Tree Not Found")
        items = [
            {
                "id": "2" * 40,
                "name": p.rsplit("/", 1)[-1],
                "type": "blob",
                "path": p,
                "mode": "100644",
            }
            for p in sorted(files)
        ]
        return self._page(items, query, path)

    # -- the repository (a real git repository stands in for Gitaly) -----------------
    def _commit(self, ref: str | None) -> str | None:
        if self.repository is None or not ref:
            return None
        sha = _git(self.repository, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        return sha.strip() if sha else None

    def _commit_json(self, sha: str) -> dict[str, Any]:
        assert self.repository is not None
        title = (_git(self.repository, "log", "-1", "--format=%s", sha) or "").strip()
        return {"id": sha, "short_id": sha[:8], "title": title, "author_name": "Ada Author"}

    def _compare(self, pid: str, query: dict[str, str], **_: Any):
        """``from...to`` (from their merge base), or ``from..to`` with ``straight=true``."""
        if self._project(pid) is None:
            return self._not_found("Project Not Found")
        if not query.get("from") or not query.get("to"):
            return 400, {"error": "from is missing, to is missing"}, {}
        start, end = self._commit(query["from"]), self._commit(query["to"])
        if start is None or end is None or self.repository is None:
            return self._not_found("Ref Not Found")
        straight = query.get("straight", "false").lower() in ("true", "1", "yes", "t")
        base = start
        if not straight:
            found = _git(self.repository, "merge-base", start, end)
            base = found.strip() if found else start
        commits = (_git(self.repository, "rev-list", "--reverse", f"{start}..{end}") or "").split()
        return (
            200,
            {
                "commit": self._commit_json(end) if commits else None,
                "commits": [self._commit_json(c) for c in commits],
                "diffs": [
                    {**self._diff_json(e), "collapsed": False, "too_large": False}
                    for e in git_diffs(self.repository, base, end)
                ],
                "compare_timeout": False,
                "compare_same_ref": start == end,
                "web_url": f"{self.url}/{self._project(pid)}/-/compare/{base}...{end}",
            },
            {},
        )

    def _merge_base(self, pid: str, query: dict[str, str], **_: Any):
        if self._project(pid) is None:
            return self._not_found("Project Not Found")
        refs = [r for r in (query.get("refs[]") or query.get("refs") or "").split(",") if r]
        if len(refs) < 2:
            return 400, {"message": "Provide at least 2 refs"}, {}
        shas = [self._commit(r) for r in refs]
        unknown = [r for r, sha in zip(refs, shas, strict=True) if sha is None]
        if unknown or self.repository is None:
            noun = "ref" if len(unknown) == 1 else "refs"
            return 400, {"message": f"Could not find {noun}: {', '.join(unknown)}"}, {}
        found = _git(self.repository, "merge-base", *[s for s in shas if s])
        if not found:
            return self._not_found("Merge Base Not Found")
        return 200, self._commit_json(found.strip()), {}


def encoded(project: str) -> str:
    return quote(project, safe="")
