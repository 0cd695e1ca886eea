"""A local server that answers like GitHub's REST API, for PyGithub (``base_url``).

Pulls, their files (with patches), reviews and review comments, issue comments (with
``Link`` pagination), contents and trees at a SHA. And GitHub's failures:

- 422 for a whole review when one comment's line is outside the diff ("Line could not be
  resolved"), its path is not in the PR ("Path could not be resolved"), or ``commit_id``
  is not the head (``refused_lines`` adds (path, line) pairs to refuse so);
- 403 "Resource not accessible by integration" on writes with a read-only token (forks);
- 429 / secondary-limit 403 with ``retry-after`` for the next N writes;
- a "huge" pull whose files come without patches (GitHub omits them past its limits).

Commentable lines are computed here from the patches by the server's own reading, not by
Nova's parser, so the two check each other.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

from tests.servers.base import JsonHandler, LocalHTTPServer
from tests.servers.github_threads import ThreadsMixin

__all__ = ["FakeGitHub", "PullSpec", "commentable_lines"]

DOCS = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"


def commentable_lines(patch: str | None) -> dict[int, int]:
    """RIGHT-side line -> hunk index, for added and context lines of a file patch."""
    out: dict[int, int] = {}
    if not patch:
        return out
    new_no, hunk = 0, -1
    for row in patch.split("\n"):
        m = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", row)
        if m:
            new_no, hunk = int(m.group(1)), hunk + 1
        elif row.startswith("+") or row.startswith(" ") or (row == "" and hunk >= 0):
            out[new_no] = hunk
            new_no += 1
    return out


@dataclass
class PullSpec:
    repo: str
    number: int
    head_sha: str
    base_sha: str
    files: list[dict[str, Any]]  # filename, status, patch, previous_filename, additions...
    contents: dict[str, str] = field(default_factory=dict)  # path -> text at head
    title: str = "A change"
    body: str = ""
    user: str = "octocat"
    fork: bool = False
    changed_files: int | None = None  # more than len(files): the files API was cut short


BODY_LIMIT = 65_536


class FakeGitHub(ThreadsMixin, LocalHTTPServer):
    def __init__(
        self,
        token: str = "ghs_testtoken0000000000000000000000",
        prefix: str = "",
        login: str = "nova-bot[bot]",
        actions_token: bool = False,
        app_slug: str | None = None,
    ):
        self.token = token
        self.prefix = prefix  # "/api/v3" for GitHub Enterprise
        # Who the token writes as. An installation token (the Actions token, or a GitHub
        # App's: ``app_slug``) cannot read GET /user (403) and writes as github-actions[bot]
        # or ``<app_slug>[bot]``; GraphQL's ``viewer`` names it (see the identity block).
        self.actions_token = actions_token
        self.app_slug = app_slug
        self.login = (
            "github-actions[bot]" if actions_token else f"{app_slug}[bot]" if app_slug else login
        )
        self.graphql_viewer = True  # False: GraphQL refuses `viewer` (an older GHE, say)
        # Fault modes for writes (POST/PATCH), consumed one per matching write:
        # (method, path regex, kind) with kind "slow" (stored, answered after slow_seconds),
        # "lost" (nothing stored, answered after slow_seconds: the client times out),
        # or an HTTP status (answered without storing anything).
        self.write_faults: list[tuple[str, str, str | int]] = []
        self.slow_seconds = 3.0
        self.pulls: dict[tuple[str, int], PullSpec] = {}
        self.review_comments: list[dict[str, Any]] = []
        self.issue_comments: list[dict[str, Any]] = []
        self.reviews: list[dict[str, Any]] = []
        self.created_pulls: list[dict[str, Any]] = []
        # (base, head) -> (status: ahead | diverged | behind | identical, files-API entries)
        self.comparisons: dict[tuple[str, str], tuple[str, list[dict[str, Any]]]] = {}
        self.requests: list[tuple[str, str, Any]] = []
        self.read_only = False
        self.refused_lines: set[tuple[str, int]] = set()  # (path, line): 422 as off the diff
        self.rate_limited_writes = 0
        self.rate_limit_kind = "429"  # or "secondary" (403 + message + retry-after)
        self.retry_after = "1"  # the rate limits' Retry-After (seconds or an HTTP date)
        self._next_id = 1000
        self._lock = threading.Lock()
        self.init_threads()  # review threads, GraphQL, permissions (github_threads.py)

    # -- setup -----------------------------------------------------------------------
    def add_pull(self, spec: PullSpec) -> PullSpec:
        self.pulls[(spec.repo, spec.number)] = spec
        return spec

    def add_review_comment(self, repo: str, number: int, **fields: Any) -> dict[str, Any]:
        comment = {
            "id": self._id(),
            "pull": (repo, number),
            "user": {"login": "someone"},
            "side": "RIGHT",
            "in_reply_to_id": None,
            **fields,
        }
        self.review_comments.append(comment)
        return comment

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def handler(self) -> type[JsonHandler]:
        owner = self

        class Handler(JsonHandler):
            def _handle(self) -> None:
                raw = self.read_body()
                body = json.loads(raw) if raw else None
                status, payload, headers = owner._route(
                    self.command, self.path, body, dict(self.headers)
                )
                delay = headers.pop("x-test-delay", None)
                if delay:  # a write GitHub stored but answers late (the client times out)
                    owner.stopping.wait(float(delay))
                self.send_json(status, payload, headers, "application/json; charset=utf-8")

            do_GET = do_POST = do_PATCH = do_DELETE = _handle  # noqa: N815

        return Handler

    # -- routing ---------------------------------------------------------------------
    def _route(
        self, method: str, raw_path: str, body: Any, headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        url = urlparse(raw_path)
        path = url.path
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        with self._lock:
            self.requests.append((method, path, body))
            if self.prefix and path.startswith(self.prefix):
                path = path[len(self.prefix) :]
            auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
            if auth not in (f"token {self.token}", f"Bearer {self.token}"):
                return 401, {"message": "Bad credentials", "documentation_url": DOCS}, {}
            viewer = self._identity_route(method, path, body)
            if viewer is not None:
                return viewer
            if method in ("POST", "PATCH", "DELETE") and not path.endswith("/graphql"):
                if self.rate_limited_writes > 0:
                    self.rate_limited_writes -= 1
                    if self.rate_limit_kind == "secondary":
                        return (
                            403,
                            {
                                "message": "You have exceeded a secondary rate limit. "
                                "Please wait a few minutes before you try again."
                            },
                            {"retry-after": self.retry_after},
                        )
                    return (
                        429,
                        {"message": "API rate limit exceeded"},
                        {"retry-after": self.retry_after},
                    )
                if self.read_only:
                    return (
                        403,
                        {
                            "message": "Resource not accessible by integration",
                            "documentation_url": DOCS,
                        },
                        {},
                    )
                too_long = self._too_long(body)
                if too_long:
                    return self._unprocessable(too_long)
                fault = self._take_fault(method, path)
                if isinstance(fault, int):
                    return fault, {"message": "Server Error"}, {}
                if fault == "lost":  # issue 27: times out, and GitHub stored nothing
                    return 502, {"message": "lost"}, {"x-test-delay": str(self.slow_seconds)}
                if fault == "slow":
                    status, payload, headers = self._dispatch(method, path, query, body)
                    return status, payload, {**headers, "x-test-delay": str(self.slow_seconds)}
            return self._dispatch(method, path, query, body)

    def _take_fault(self, method: str, path: str) -> str | int | None:
        for i, (verb, pattern, kind) in enumerate(self.write_faults):
            if verb == method and re.search(pattern, path):
                del self.write_faults[i]
                return kind
        return None

    @staticmethod
    def _too_long(body: Any) -> str | None:
        """GitHub's limit on a comment or review body."""
        bodies = [body.get("body")] if isinstance(body, dict) else []
        if isinstance(body, dict):
            bodies += [c.get("body") for c in body.get("comments") or []]
        if any(isinstance(b, str) and len(b) > BODY_LIMIT for b in bodies):
            return f"Body is too long (maximum is {BODY_LIMIT} characters)"
        return None

    def _dispatch(
        self, method: str, path: str, query: dict[str, str], body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        routes = [
            ("GET", r"^/rate_limit$", self._rate_limit),
            ("GET", r"^/user$", self._get_user),
            ("GET", r"^/repos/([^/]+/[^/]+)$", self._get_repo),
            ("GET", r"^/repos/([^/]+/[^/]+)/pulls/(\d+)$", self._get_pull),
            ("POST", r"^/repos/([^/]+/[^/]+)/pulls$", self._create_pull),
            ("GET", r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/files$", self._get_files),
            ("GET", r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/comments$", self._list_review_comments),
            ("POST", r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/reviews$", self._create_review),
            ("PATCH", r"^/repos/([^/]+/[^/]+)/pulls/comments/(\d+)$", self._edit_review_comment),
            ("GET", r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$", self._list_issue_comments),
            ("POST", r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$", self._create_issue_comment),
            ("PATCH", r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$", self._edit_issue_comment),
            ("GET", r"^/repos/([^/]+/[^/]+)/commits/([0-9a-f]+)$", self._get_commit),
            ("GET", r"^/repos/([^/]+/[^/]+)/contents/(.+)$", self._get_contents),
            ("GET", r"^/repos/([^/]+/[^/]+)/git/trees/([0-9a-f]+)$", self._get_tree),
            ("GET", r"^/repos/([^/]+/[^/]+)/compare/([0-9a-f]+)\.\.\.([0-9a-f]+)$", self._compare),
            *self.thread_routes(),
        ]
        for verb, pattern, handler in routes:
            m = re.match(pattern, path)
            if verb == method and m:
                return handler(*m.groups(), query=query, body=body)
        return 404, {"message": "Not Found", "documentation_url": DOCS}, {}

    # -- helpers ---------------------------------------------------------------------
    def _api(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def _pull(self, repo: str, number: str) -> PullSpec | None:
        return self.pulls.get((repo, int(number)))

    def _page(
        self, items: list[Any], query: dict[str, str], path: str
    ) -> tuple[int, Any, dict[str, str]]:
        per_page = int(query.get("per_page", 30))
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(items):
            headers["link"] = f'<{self._api(path)}?per_page={per_page}&page={page + 1}>; rel="next"'
        return 200, chunk, headers

    def _repo_json(self, repo: str) -> dict[str, Any]:
        return {
            "id": abs(hash(repo)) % 10**6,
            "full_name": repo,
            "name": repo.split("/")[1],
            "owner": {"login": repo.split("/")[0]},
            "url": self._api(f"/repos/{repo}"),
            "default_branch": "main",
        }

    def _not_found(self) -> tuple[int, Any, dict[str, str]]:
        return 404, {"message": "Not Found", "documentation_url": DOCS}, {}

    # -- endpoints -------------------------------------------------------------------
    def _rate_limit(self, **_: Any):
        core = {"limit": 5000, "remaining": 4999, "reset": 0, "used": 1}
        return 200, {"resources": {"core": core}, "rate": core}, {}

    def _get_user(self, **_: Any):
        if self.actions_token or self.app_slug:
            return (
                403,
                {"message": "Resource not accessible by integration", "documentation_url": DOCS},
                {},
            )
        return 200, {"login": self.login, "id": 1, "type": "Bot"}, {}

    # -- identity (issue 27): GraphQL `viewer` names an installation token's bot ------------
    def _identity_route(
        self, method: str, path: str, body: Any
    ) -> tuple[int, Any, dict[str, str]] | None:
        """``POST /graphql`` (``/api/graphql`` on GitHub Enterprise) asking only for
        ``viewer``: its login, for every token kind (a read, whatever the token may write);
        ``GET /installation/repositories``, which only an installation token may read.
        None for any other request."""
        if method == "GET" and path == "/installation/repositories":
            if not (self.actions_token or self.app_slug):  # a PAT: not an installation's
                return 403, {"message": "This endpoint requires an installation token"}, {}
            repos = sorted({self._repo_json(r)["full_name"] for r, _n in self.pulls})
            listed = [self._repo_json(r) for r in repos]
            return 200, {"total_count": len(listed), "repositories": listed}, {}
        query = body.get("query") if isinstance(body, dict) else None
        if method != "POST" or not path.endswith("/graphql") or not isinstance(query, str):
            return None
        if not re.fullmatch(r"\s*(?:query\s*\w*\s*)?\{\s*viewer\s*\{\s*login\s*\}\s*\}\s*", query):
            return None  # any other query: the GraphQL schema of github_threads.py
        if not self.graphql_viewer:
            error = {"type": "FORBIDDEN", "message": "Resource not accessible by integration"}
            return 200, {"data": {"viewer": None}, "errors": [error]}, {}
        return 200, {"data": {"viewer": {"login": self.login}}}, {}

    def add_issue_comment(
        self, repo: str, number: int, body: str, login: str = "someone"
    ) -> dict[str, Any]:
        """A comment written by another user (e.g. one forging Nova's markers)."""
        comment = {"id": self._id(), "pull": (repo, number), "body": body, "user": {"login": login}}
        self.issue_comments.append(comment)
        return comment

    def _get_repo(self, repo: str, **_: Any):
        if not any(r == repo for r, _n in self.pulls):
            return self._not_found()
        return 200, self._repo_json(repo), {}

    def _create_pull(self, repo: str, body: Any, **_: Any):
        for key in ("title", "head", "base"):
            if not body.get(key):
                return self._unprocessable(f"{key} is missing")
        number = 100 + len(self.created_pulls)
        pull = {
            "number": number,
            "title": body["title"],
            "body": body.get("body", ""),
            "head": {"ref": body["head"]},
            "base": {"ref": body["base"]},
            "url": self._api(f"/repos/{repo}/pulls/{number}"),
            "html_url": f"https://github.example/{repo}/pull/{number}",
        }
        self.created_pulls.append(pull)
        return 201, pull, {}

    def _get_pull(self, repo: str, number: str, **_: Any):
        pr = self._pull(repo, number)
        if pr is None:
            return self._not_found()
        head_repo = f"fork-{pr.user}/{repo.split('/')[1]}" if pr.fork else repo
        return (
            200,
            {
                "id": pr.number,
                "number": pr.number,
                "state": "open",
                "title": pr.title,
                "body": pr.body,
                "user": {"login": pr.user},
                "url": self._api(f"/repos/{repo}/pulls/{pr.number}"),
                "issue_url": self._api(f"/repos/{repo}/issues/{pr.number}"),
                "html_url": f"https://github.example/{repo}/pull/{pr.number}",
                "head": {
                    "sha": pr.head_sha,
                    "ref": "feature",
                    "repo": {**self._repo_json(head_repo), "fork": pr.fork},
                },
                "base": {"sha": pr.base_sha, "ref": "main", "repo": self._repo_json(repo)},
                "changed_files": pr.changed_files or len(pr.files),
                "additions": sum(f.get("additions", 0) for f in pr.files),
                "deletions": sum(f.get("deletions", 0) for f in pr.files),
            },
            {},
        )

    def _get_files(self, repo: str, number: str, query: dict[str, str], **_: Any):
        pr = self._pull(repo, number)
        if pr is None:
            return self._not_found()
        files = [
            {
                "sha": "0" * 40,
                "changes": f.get("additions", 0) + f.get("deletions", 0),
                "additions": 0,
                "deletions": 0,
                **f,
            }
            for f in pr.files
        ]
        return self._page(files, query, f"/repos/{repo}/pulls/{number}/files")

    def _comment_json(self, c: dict[str, Any]) -> dict[str, Any]:
        repo, number = c["pull"]
        return {k: v for k, v in c.items() if k != "pull"} | {
            "url": self._api(f"/repos/{repo}/pulls/comments/{c['id']}"),
            "pull_request_url": self._api(f"/repos/{repo}/pulls/{number}"),
        }

    def _list_review_comments(self, repo: str, number: str, query: dict[str, str], **_: Any):
        items = [
            self._comment_json(c) for c in self.review_comments if c["pull"] == (repo, int(number))
        ]
        return self._page(items, query, f"/repos/{repo}/pulls/{number}/comments")

    def _unprocessable(self, error: str):
        return (
            422,
            {
                "message": "Unprocessable Entity",
                "errors": [error],
                "documentation_url": DOCS,
                "status": "422",
            },
            {},
        )

    def _create_review(self, repo: str, number: str, body: Any, **_: Any):
        pr = self._pull(repo, number)
        if pr is None:
            return self._not_found()
        if body.get("commit_id") and body["commit_id"] != pr.head_sha:
            return self._unprocessable("commit_id is not part of the pull request")
        if body.get("event") not in (None, "COMMENT", "REQUEST_CHANGES", "APPROVE"):
            return self._unprocessable(f"Invalid event {body.get('event')}")
        patches = {f["filename"]: commentable_lines(f.get("patch")) for f in pr.files}
        for c in body.get("comments", []):
            lines = patches.get(c.get("path"))
            if lines is None:
                return self._unprocessable("Path could not be resolved")
            if (
                c.get("side", "RIGHT") != "RIGHT"
                or c.get("line") not in lines
                or (c.get("path"), c.get("line")) in self.refused_lines
            ):
                return self._unprocessable("Line could not be resolved")
            start = c.get("start_line")
            if start is not None and (start >= c["line"] or lines.get(start) != lines[c["line"]]):
                return self._unprocessable("start_line must precede line in the same hunk")
        review = {
            "id": self._id(),
            "body": body.get("body", ""),
            "state": {"COMMENT": "COMMENTED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}.get(
                body.get("event") or "COMMENT", "COMMENTED"
            ),
            "commit_id": pr.head_sha,
            "user": {"login": self.login},
        }
        self.reviews.append({**review, "pull": (repo, int(number))})
        for c in body.get("comments", []):
            self.review_comments.append(
                {
                    "id": self._id(),
                    "pull": (repo, int(number)),
                    "path": c["path"],
                    "line": c["line"],
                    "start_line": c.get("start_line"),
                    "side": "RIGHT",
                    "body": c["body"],
                    "commit_id": pr.head_sha,
                    "original_commit_id": pr.head_sha,
                    "in_reply_to_id": None,
                    "pull_request_review_id": review["id"],
                    "user": {"login": self.login},
                }
            )
        return 200, {**review, "pull_request_url": self._api(f"/repos/{repo}/pulls/{number}")}, {}

    def _edit_review_comment(self, repo: str, cid: str, body: Any, **_: Any):
        for c in self.review_comments:
            if c["id"] == int(cid):
                c["body"] = body["body"]
                return 200, self._comment_json(c), {}
        return self._not_found()

    def _issue_json(self, c: dict[str, Any]) -> dict[str, Any]:
        repo, _number = c["pull"]
        return {
            "id": c["id"],
            "body": c["body"],
            "user": c["user"],
            "url": self._api(f"/repos/{repo}/issues/comments/{c['id']}"),
            "html_url": f"https://github.example/{repo}#issuecomment-{c['id']}",
        }

    def _list_issue_comments(self, repo: str, number: str, query: dict[str, str], **_: Any):
        items = [
            self._issue_json(c) for c in self.issue_comments if c["pull"] == (repo, int(number))
        ]
        return self._page(items, query, f"/repos/{repo}/issues/{number}/comments")

    def _create_issue_comment(self, repo: str, number: str, body: Any, **_: Any):
        comment = {
            "id": self._id(),
            "pull": (repo, int(number)),
            "body": body["body"],
            "user": {"login": self.login},
        }
        self.issue_comments.append(comment)
        return 201, self._issue_json(comment), {}

    def _edit_issue_comment(self, repo: str, cid: str, body: Any, **_: Any):
        for c in self.issue_comments:
            if c["id"] == int(cid):
                c["body"] = body["body"]
                return 200, self._issue_json(c), {}
        return self._not_found()

    def _get_commit(self, repo: str, sha: str, **_: Any):
        known = {sha for p in self.pulls.values() for sha in (p.head_sha, p.base_sha)}
        if sha not in known:
            return 422, {"message": f"No commit found for SHA: {sha}"}, {}
        return 200, {"sha": sha, "url": self._api(f"/repos/{repo}/commits/{sha}")}, {}

    def _at(self, repo: str, ref: str | None) -> PullSpec | None:
        return next((p for p in self.pulls.values() if p.repo == repo and p.head_sha == ref), None)

    def _get_contents(self, repo: str, path: str, query: dict[str, str], **_: Any):
        pr = self._at(repo, query.get("ref"))
        if pr is None or path not in pr.contents:
            return self._not_found()
        data = pr.contents[path].encode()
        return (
            200,
            {
                "type": "file",
                "encoding": "base64",
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "size": len(data),
                "sha": "1" * 40,
                "content": base64.b64encode(data).decode(),
                "url": self._api(f"/repos/{repo}/contents/{path}"),
            },
            {},
        )

    def _compare(self, repo: str, base: str, head: str, **_: Any):
        found = self.comparisons.get((base, head))
        if found is None:
            return self._not_found()
        status, files = found
        return (
            200,
            {
                "status": status,
                "ahead_by": 1,
                "behind_by": 0,
                "total_commits": 1,
                "url": self._api(f"/repos/{repo}/compare/{base}...{head}"),
                "files": files,
                "commits": [],
            },
            {},
        )

    def _get_tree(self, repo: str, sha: str, **_: Any):
        pr = self._at(repo, sha)
        if pr is None:
            return self._not_found()
        url = self._api(f"/repos/{repo}/git/trees/{sha}")
        return (
            200,
            {
                "sha": sha,
                "truncated": False,
                "url": url,
                "tree": [
                    {"path": p, "type": "blob", "mode": "100644", "sha": "2" * 40}
                    for p in sorted(pr.contents)
                ],
            },
            {},
        )
