"""The conversation part of the local GitHub server: review threads, replies, deletions,
collaborator permissions, and a real GraphQL endpoint (``POST /graphql``, or
``/api/graphql`` under GitHub Enterprise's ``/api/v3`` prefix).

The GraphQL endpoint executes queries with graphql-core against a schema cut from GitHub's
own (the fields Nova reads, spelled as GitHub spells them), so a query with a wrong field,
type or argument fails here as it would on github.com. As on GitHub: connections need
``first`` or ``last`` (at most 100); errors come back as HTTP 200 with ``errors``; an
app's login is ``nova`` in GraphQL where REST says ``nova[bot]``; resolving needs a token
that may write.

Mixed into ``FakeGitHub`` (``tests/servers/github_server.py``), whose comment lists it
shares: a thread is a top-level review comment and the replies whose ``in_reply_to_id``
names it.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from functools import cache
from typing import Any

__all__ = ["ThreadsMixin"]

_SDL = """
scalar BigInt
scalar DateTime
scalar URI
interface Actor { login: String! url: URI }
type User implements Actor { login: String! url: URI }
type Bot implements Actor { login: String! url: URI }
type PageInfo { hasNextPage: Boolean! endCursor: String }
enum ReactionContent { THUMBS_UP THUMBS_DOWN LAUGH HOORAY CONFUSED HEART ROCKET EYES }
type ReactorConnection { totalCount: Int! }
type ReactionGroup {
  content: ReactionContent! createdAt: DateTime viewerHasReacted: Boolean!
  reactors(first: Int, last: Int, after: String): ReactorConnection!
}
interface Reactable { reactionGroups: [ReactionGroup!] }
interface Comment {
  author: Actor body: String! createdAt: DateTime! lastEditedAt: DateTime
}
type IssueComment implements Comment & Reactable {
  id: ID! databaseId: Int fullDatabaseId: BigInt author: Actor body: String!
  createdAt: DateTime! lastEditedAt: DateTime isMinimized: Boolean!
  reactionGroups: [ReactionGroup!]
}
type PullRequestReviewComment implements Comment & Reactable {
  id: ID! databaseId: Int fullDatabaseId: BigInt author: Actor body: String!
  createdAt: DateTime! lastEditedAt: DateTime path: String! line: Int isMinimized: Boolean!
  reactionGroups: [ReactionGroup!]
}
type PullRequestReviewCommentConnection {
  nodes: [PullRequestReviewComment] pageInfo: PageInfo! totalCount: Int!
}
type IssueCommentConnection { nodes: [IssueComment] pageInfo: PageInfo! totalCount: Int! }
interface Node { id: ID! }
type PullRequestReviewThread implements Node {
  id: ID! isResolved: Boolean! isOutdated: Boolean! path: String! line: Int
  viewerCanResolve: Boolean! resolvedBy: User
  comments(first: Int, last: Int, after: String): PullRequestReviewCommentConnection!
}
type PullRequestReviewThreadConnection {
  nodes: [PullRequestReviewThread] pageInfo: PageInfo! totalCount: Int!
}
type PullRequest {
  id: ID! number: Int!
  reviewThreads(first: Int, last: Int, after: String): PullRequestReviewThreadConnection!
  comments(first: Int, last: Int, after: String): IssueCommentConnection!
}
type Repository { nameWithOwner: String! pullRequest(number: Int!): PullRequest }
type Query { repository(owner: String!, name: String!): Repository node(id: ID!): Node }
input ResolveReviewThreadInput { threadId: ID! clientMutationId: String }
input UnresolveReviewThreadInput { threadId: ID! clientMutationId: String }
type ResolveReviewThreadPayload { thread: PullRequestReviewThread clientMutationId: String }
type UnresolveReviewThreadPayload { thread: PullRequestReviewThread clientMutationId: String }
type Mutation {
  resolveReviewThread(input: ResolveReviewThreadInput!): ResolveReviewThreadPayload
  unresolveReviewThread(input: UnresolveReviewThreadInput!): UnresolveReviewThreadPayload
}
"""
EPOCH = "2026-01-01T00:00:00Z"
_CONTENTS = ("THUMBS_UP", "THUMBS_DOWN", "LAUGH", "HOORAY", "CONFUSED", "HEART", "ROCKET", "EYES")


class GraphQLFailure(Exception):
    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@cache
def _schema() -> Any:
    from graphql import build_schema

    return build_schema(_SDL)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _actor(login: str) -> dict[str, Any]:
    """GraphQL's view of a REST login: an app ``x[bot]`` is the Bot ``x``."""
    if login.endswith("[bot]"):
        return {"__typename": "Bot", "login": login.removesuffix("[bot]"), "url": None}
    return {"__typename": "User", "login": login, "url": None}


def _connection(items: list[Any], first: int | None, last: int | None, after: str | None):
    if first is None and last is None:
        raise GraphQLFailure(
            "You must provide a `first` or `last` value to properly paginate the connection.",
            "MISSING_PAGINATION_BOUNDARIES",
        )
    count = first if first is not None else last
    if count is None or count < 0 or count > 100:
        raise GraphQLFailure(
            "Requesting more than 100 records on the connection is not allowed.",
            "EXCESSIVE_PAGINATION",
        )
    start = int(after) if after else 0
    if last is not None and first is None:
        start = max(0, len(items) - count)
    chunk = items[start : start + count]
    end = start + len(chunk)
    return {
        "nodes": chunk,
        "pageInfo": {"hasNextPage": end < len(items), "endCursor": str(end) if chunk else None},
        "totalCount": len(items),
    }


class ThreadsMixin:
    """Conversation endpoints for ``FakeGitHub``; call ``init_threads()`` in ``__init__``."""

    review_comments: list[dict[str, Any]]
    issue_comments: list[dict[str, Any]]
    pulls: dict[tuple[str, int], Any]
    login: str
    read_only: bool
    _lock: threading.Lock

    def init_threads(self) -> None:
        self.resolved: dict[int, str] = {}  # root comment id -> who resolved it
        # login -> "admin" | "maintain" | "write" | "triage" | "read" | "none"; anyone else
        # reads as "read" (a public repository); logins in ``strangers`` get 404
        self.permissions: dict[str, str] = {}
        self.strangers: set[str] = set()
        self.graphql_queries: list[str] = []
        self.graphql_faults: list[int] = []  # HTTP statuses for the next GraphQL calls
        self.deleted: list[int] = []
        # hold each matching write until ``hold_count`` of them arrived (two runs at once)
        self.hold_pattern: str | None = None
        self.hold_count = 2
        self._held = threading.Condition()
        self._arrived = 0

    def _id(self) -> int:  # FakeGitHub's
        raise NotImplementedError

    def thread_routes(self) -> list[tuple[str, str, Any]]:
        return [
            ("POST", r"^(?:/api)?/graphql$", self._graphql),
            (
                "POST",
                r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/comments/(\d+)/replies$",
                self._reply,
            ),
            ("GET", r"^/repos/([^/]+/[^/]+)/pulls/comments/(\d+)$", self._get_review_comment),
            ("DELETE", r"^/repos/([^/]+/[^/]+)/pulls/comments/(\d+)$", self._delete_review),
            ("GET", r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$", self._get_issue_comment),
            ("DELETE", r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$", self._delete_issue),
            (
                "GET",
                r"^/repos/([^/]+/[^/]+)/collaborators/([^/]+)/permission$",
                self._permission,
            ),
        ]

    # -- test set-up -------------------------------------------------------------------
    def reply_as(self, login: str, to: dict[str, Any], body: str) -> dict[str, Any]:
        """A person (or bot) replies under a review comment."""
        root = to if to.get("in_reply_to_id") is None else self._comment(to["in_reply_to_id"])
        assert root is not None
        comment = {
            "id": self._id(),
            "pull": root["pull"],
            "path": root.get("path"),
            "line": root.get("line"),
            "side": "RIGHT",
            "body": body,
            "in_reply_to_id": root["id"],
            "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
            "created_at": now(),
        }
        self.review_comments.append(comment)
        return comment

    def react_as(self, login: str, comment: dict[str, Any], content: str) -> None:
        """A person puts an emoji (GraphQL's ``ReactionContent``) on a comment; once each."""
        who = comment.setdefault("reactions", {}).setdefault(content, [])
        if login not in who:
            who.append(login)

    def edit_as_author(self, comment: dict[str, Any], body: str) -> None:
        comment["body"], comment["edited_at"] = body, now()

    def thread_of(self, comment: dict[str, Any]) -> list[dict[str, Any]]:
        root = comment.get("in_reply_to_id") or comment["id"]
        return [c for c in self.review_comments if root in (c["id"], c.get("in_reply_to_id"))]

    # -- REST --------------------------------------------------------------------------
    def _hold(self, path: str) -> None:
        """Let two runs' writes meet: each waits until ``hold_count`` have arrived."""
        import re

        if self.hold_pattern is None or not re.search(self.hold_pattern, path):
            return
        with self._held:
            self._arrived += 1
            self._held.notify_all()
            self._held.wait_for(lambda: self._arrived >= self.hold_count, timeout=20)

    def _comment(self, cid: int) -> dict[str, Any] | None:
        return next((c for c in self.review_comments if c["id"] == cid), None)

    def _reply(self, repo: str, number: str, cid: str, body: Any, **_: Any):
        root = self._comment(int(cid))
        if root is None or root["pull"] != (repo, int(number)):
            return 404, {"message": "Not Found"}, {}
        if root.get("in_reply_to_id") is not None:
            return (
                422,
                {
                    "message": "Validation Failed",
                    "errors": ["replies to replies are not supported"],
                },
                {},
            )
        if not isinstance(body, dict) or not body.get("body"):
            return 422, {"message": "Validation Failed", "errors": ["body is missing"]}, {}
        self._lock.release()  # let the other run in while this one waits
        try:
            self._hold(f"/replies/{cid}")
        finally:
            self._lock.acquire()
        comment = {
            "id": self._id(),
            "pull": root["pull"],
            "path": root.get("path"),
            "line": root.get("line"),
            "side": "RIGHT",
            "body": body["body"],
            "in_reply_to_id": root["id"],
            "user": {"login": self.login, "type": "Bot"},
            "created_at": now(),
        }
        self.review_comments.append(comment)
        return 201, self._comment_json(comment), {}  # type: ignore[attr-defined]

    def _get_review_comment(self, repo: str, cid: str, **_: Any):
        c = self._comment(int(cid))
        if c is None:
            return 404, {"message": "Not Found"}, {}
        return 200, self._comment_json(c), {}  # type: ignore[attr-defined]

    def _get_issue_comment(self, repo: str, cid: str, **_: Any):
        c = next((c for c in self.issue_comments if c["id"] == int(cid)), None)
        if c is None:
            return 404, {"message": "Not Found"}, {}
        return 200, self._issue_json(c), {}  # type: ignore[attr-defined]

    def _delete_review(self, repo: str, cid: str, **_: Any):
        return self._delete(self.review_comments, int(cid))

    def _delete_issue(self, repo: str, cid: str, **_: Any):
        return self._delete(self.issue_comments, int(cid))

    def _delete(self, items: list[dict[str, Any]], cid: int):
        for i, c in enumerate(items):
            if c["id"] == cid:
                if c["user"]["login"] != self.login:
                    return 403, {"message": "Must have admin rights to Repository."}, {}
                del items[i]
                self.deleted.append(cid)
                return 204, None, {}
        return 404, {"message": "Not Found"}, {}

    def _permission(self, repo: str, user: str, **_: Any):
        if user in self.strangers:
            return 404, {"message": f"{user} is not a user"}, {}
        role = self.permissions.get(user, "read")
        legacy = {"maintain": "write", "triage": "read"}.get(role, role)
        return 200, {"permission": legacy, "role_name": role, "user": {"login": user}}, {}

    # -- GraphQL -----------------------------------------------------------------------
    def _graphql(self, body: Any, **_: Any):
        from graphql import graphql_sync

        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return 400, {"message": "Problems parsing JSON"}, {}
        self.graphql_queries.append(body["query"])
        if self.graphql_faults:
            return self.graphql_faults.pop(0), {"message": "Server Error"}, {}
        result = graphql_sync(
            _schema(),
            body["query"],
            root_value=self._root(),
            variable_values=body.get("variables") or {},
        )
        out: dict[str, Any] = {}
        if result.errors:
            out["errors"] = [
                {
                    "message": e.message,
                    "type": getattr(e.original_error, "kind", None) or "INVALID",
                    "path": e.path,
                }
                for e in result.errors
            ]
        if result.data is not None or not result.errors:
            out["data"] = result.data
        return 200, out, {}

    def _root(self) -> dict[str, Any]:
        return {
            "repository": lambda _info, owner, name: self._gql_repo(f"{owner}/{name}"),
            "node": lambda _info, id: self._gql_node(id),
            "resolveReviewThread": lambda _info, input: self._set_resolved(input, True),
            "unresolveReviewThread": lambda _info, input: self._set_resolved(input, False),
        }

    def _gql_repo(self, repo: str) -> dict[str, Any] | None:
        if not any(r == repo for r, _n in self.pulls):
            raise GraphQLFailure(
                f"Could not resolve to a Repository with the name '{repo}'.", "NOT_FOUND"
            )
        return {
            "nameWithOwner": repo,
            "pullRequest": lambda _i, number: self._gql_pull(repo, number),
        }

    def _gql_pull(self, repo: str, number: int) -> dict[str, Any]:
        if (repo, number) not in self.pulls:
            raise GraphQLFailure(
                f"Could not resolve to a PullRequest with the number of {number}.", "NOT_FOUND"
            )
        roots = [
            c
            for c in self.review_comments
            if c["pull"] == (repo, number) and c.get("in_reply_to_id") is None
        ]
        issue = [c for c in self.issue_comments if c["pull"] == (repo, number)]
        return {
            "id": f"PR_{number}",
            "number": number,
            "reviewThreads": lambda _i, first=None, last=None, after=None: _connection(
                [self._gql_thread(r) for r in roots], first, last, after
            ),
            "comments": lambda _i, first=None, last=None, after=None: _connection(
                [self._gql_comment(c) for c in issue], first, last, after
            ),
        }

    def _gql_comment(self, c: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"C_{c['id']}",
            "databaseId": c["id"],
            "fullDatabaseId": str(c["id"]),
            "author": _actor(c["user"]["login"]),
            "body": c["body"],
            "createdAt": c.get("created_at") or EPOCH,
            "lastEditedAt": c.get("edited_at"),
            "path": c.get("path") or "",
            "line": c.get("line"),
            "isMinimized": False,
            # as GitHub: a group for every emoji, counted over who reacted (only reactors'
            # totalCount may be asked without a page size)
            "reactionGroups": [
                {
                    "content": content,
                    "createdAt": None,
                    "viewerHasReacted": self.login in who,
                    "reactors": {"totalCount": len(who)},
                }
                for content in _CONTENTS
                for who in [(c.get("reactions") or {}).get(content, [])]
            ],
        }

    def _gql_thread(self, root: dict[str, Any]) -> dict[str, Any]:
        replies = [
            root,
            *(c for c in self.review_comments if c.get("in_reply_to_id") == root["id"]),
        ]
        pull = self.pulls[root["pull"]]
        return {
            "id": f"PRRT_{root['id']}",
            "isResolved": root["id"] in self.resolved,
            "isOutdated": root.get("commit_id", pull.head_sha) != pull.head_sha,
            "path": root.get("path") or "",
            "line": root.get("line"),
            "viewerCanResolve": not self.read_only,
            "resolvedBy": _actor(self.resolved[root["id"]])
            if root["id"] in self.resolved
            else None,
            "comments": lambda _i, first=None, last=None, after=None: _connection(
                [self._gql_comment(c) for c in replies], first, last, after
            ),
        }

    def _gql_node(self, node_id: str) -> dict[str, Any]:
        """``node(id:)``: a review thread by its global id (the only kind Nova asks for)."""
        root = self._comment(int(node_id[5:])) if node_id[5:].isdigit() else None
        if not node_id.startswith("PRRT_") or root is None:
            raise GraphQLFailure(
                f"Could not resolve to a node with the global id of '{node_id}'", "NOT_FOUND"
            )
        return {"__typename": "PullRequestReviewThread", **self._gql_thread(root)}

    def _set_resolved(self, data: dict[str, Any], resolved: bool) -> dict[str, Any]:
        thread_id = str(data.get("threadId", ""))
        root = self._comment(int(thread_id[5:])) if thread_id.startswith("PRRT_") else None
        if root is None:
            raise GraphQLFailure(
                f"Could not resolve to a node with the global id of '{thread_id}'", "NOT_FOUND"
            )
        if self.read_only:
            raise GraphQLFailure("Resource not accessible by integration", "FORBIDDEN")
        if resolved:
            self.resolved.setdefault(root["id"], self.login)
        else:
            self.resolved.pop(root["id"], None)
        return {"thread": self._gql_thread(root), "clientMutationId": data.get("clientMutationId")}
