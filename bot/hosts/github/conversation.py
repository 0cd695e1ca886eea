"""The conversation on a GitHub pull request (``bot.conversation.Conversation``).

Reads with one GraphQL query per page: the review threads (``reviewThreads``: resolved and
outdated state, every comment with its author, body, creation, last edit and reactions —
``reactionGroups``, so 👍 / 👎 on a finding cost no call of their own) and the top-level
comments. REST's review comments are lazy objects that cost a request each to
tell a reply from a thread; GraphQL names the thread. Writes: a reply under a thread's first
comment (``…/comments/{id}/replies``; GitHub refuses replies to replies), a top-level
comment, deleting Nova's own duplicate, and ``resolveReviewThread``.

Authority is the collaborator-permission API: ``write``, ``maintain`` or ``admin`` may
change the gate (``author_association`` is not a permission: a private org member shows as
CONTRIBUTOR). Nova's own identity is the session's (``PullState.login``); GraphQL names
an app ``nova`` where REST says ``nova[bot]``, so both spellings are matched, and a Bot only
ever matches an app login.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from bot.change import Change
from bot.conversation.model import Authority, Note, Record, Thread
from bot.errors import ServiceError
from bot.hosts.github.client import PullState, github_error

if TYPE_CHECKING:
    from github import Github

__all__ = ["GitHubConversation", "WHO_MAY"]

WHO_MAY = "people with write, maintain or admin permission on the repository"
_ALLOWED = {"admin", "maintain", "write"}
_NOTE = (
    "fullDatabaseId author { login __typename } body createdAt lastEditedAt"
    " reactionGroups { content reactors { totalCount } }"
)
# GraphQL's ReactionContent as REST (and ``Note.reactions``) names it
_REACTION = {"THUMBS_UP": "+1", "THUMBS_DOWN": "-1"}
_THREADS = (
    "query($owner: String!, $name: String!, $number: Int!, $after: String) {"
    " repository(owner: $owner, name: $name) { pullRequest(number: $number) {"
    " reviewThreads(first: 50, after: $after) { pageInfo { hasNextPage endCursor }"
    " nodes { id isResolved isOutdated path line"
    " comments(first: 100) { pageInfo { hasNextPage endCursor }"
    f" nodes {{ {_NOTE} }} }} }} }} }} }} }}"
)
# a thread past 100 comments: the rest, page by page (Nova's answer marks may be there)
_THREAD_COMMENTS = (
    "query($id: ID!, $after: String) { node(id: $id) { ... on PullRequestReviewThread {"
    " comments(first: 100, after: $after) { pageInfo { hasNextPage endCursor }"
    f" nodes {{ {_NOTE} }} }} }} }} }}"
)
_COMMENTS = (
    "query($owner: String!, $name: String!, $number: Int!, $after: String) {"
    " repository(owner: $owner, name: $name) { pullRequest(number: $number) {"
    " comments(first: 100, after: $after) { pageInfo { hasNextPage endCursor }"
    f" nodes {{ {_NOTE} }} }} }} }} }}"
)
_RESOLVE = (
    "mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { isResolved } } }"
)
_SHARED_BOT = "github-actions[bot]"
_PAGES = 20  # at most 1,000 threads and 2,000 comments are read
_ATTEMPTS, _BACKOFF, _TRANSIENT = 3, 0.5, (500, 502, 503, 504)


def _reactions(groups: Any) -> tuple[tuple[str, int], ...]:
    """The emoji on a comment, from the ``reactionGroups`` read with it (no extra call)."""
    out = []
    for group in groups if isinstance(groups, list) else []:
        content = str((group or {}).get("content") or "")
        count = ((group or {}).get("reactors") or {}).get("totalCount")
        if content and isinstance(count, int) and count > 0:
            out.append((_REACTION.get(content, content.lower()), count))
    return tuple(out)


class GitHubConversation:
    def __init__(self, session: PullState) -> None:
        self.session = session
        self._kind: dict[str, str] = {}  # comment id -> "review" | "issue"

    @property
    def _client(self) -> Github:
        assert self.session.client is not None, "fetch the change first"
        return self.session.client

    def _where(self) -> tuple[str, str, int]:
        pull, repo = self.session.pull, self.session.repo
        assert pull is not None and repo is not None, "fetch the change first"
        owner, name = repo.full_name.split("/", 1)
        return owner, name, pull.number

    def _query(self, query: str, variables: dict[str, Any], what: str) -> dict[str, Any]:
        """One GraphQL call. Every one Nova sends is safe to repeat (reads, and resolving,
        which is idempotent), so a 5xx or a timeout is retried with backoff: PyGithub's
        retry never repeats a POST GitHub may have taken, and GraphQL is all POST."""
        from github import GithubException
        from requests import RequestException

        for attempt in range(_ATTEMPTS):
            try:
                _headers, data = self._client.requester.graphql_query(query, variables)
                return data.get("data") or {}
            except GithubException as exc:
                if exc.status not in _TRANSIENT or attempt == _ATTEMPTS - 1:
                    raise github_error(exc, what) from exc
            except RequestException as exc:
                if attempt == _ATTEMPTS - 1:
                    raise github_error(exc, what) from exc
            time.sleep(_BACKOFF * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _thread_comments(self, node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Every comment of one thread: the first page came with the thread."""
        page = node.get("comments") or {}
        for _ in range(_PAGES * 5):  # 10,000 comments in one thread at most
            yield from (n for n in page.get("nodes") or [] if n)
            info = page.get("pageInfo") or {}
            if not info.get("hasNextPage") or not info.get("endCursor"):
                return
            variables = {"id": node.get("id"), "after": info["endCursor"]}
            data = self._query(_THREAD_COMMENTS, variables, "reading a review thread")
            page = ((data.get("node") or {}).get("comments")) or {}

    def _pages(self, query: str, key: str, what: str) -> Iterator[dict[str, Any]]:
        owner, name, number = self._where()
        after: str | None = None
        for _ in range(_PAGES):
            variables = {"owner": owner, "name": name, "number": number, "after": after}
            data = self._query(query, variables, what)
            pull = ((data.get("repository") or {}).get("pullRequest")) or {}
            page = pull.get(key) or {}
            yield from (n for n in page.get("nodes") or [] if n)
            info = page.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                return
            after = info.get("endCursor")

    # -- reading -------------------------------------------------------------------------
    def _is_me(self, author: dict[str, Any]) -> bool:
        me = self.session.login()
        login, bot = str(author.get("login") or ""), author.get("__typename") == "Bot"
        if me.endswith("[bot]"):
            return bot and login.removesuffix("[bot]") == me.removesuffix("[bot]")
        return not bot and login == me

    def _note(self, node: dict[str, Any], kind: str) -> Note:
        author = node.get("author") or {"login": "ghost", "__typename": "User"}
        ident = str(node.get("fullDatabaseId") or "0")
        self._kind[ident] = kind
        return Note(
            id=ident,
            author=str(author.get("login") or "ghost"),
            body=str(node.get("body") or ""),
            seq=int(ident) if ident.isdigit() else 0,
            at=str(node.get("createdAt") or ""),
            edited=bool(node.get("lastEditedAt")),
            bot=author.get("__typename") == "Bot",
            mine=self._is_me(author),
            reactions=_reactions(node.get("reactionGroups")),
        )

    def read(self, change: Change) -> Record:
        threads = []
        for node in self._pages(_THREADS, "reviewThreads", "reading the review threads"):
            notes = tuple(self._note(n, "review") for n in self._thread_comments(node))
            if not notes:
                continue  # (Nova's own threads carry findings; a person's may ask Nova)
            threads.append(
                Thread(
                    id=str(node.get("id")),
                    notes=notes,
                    path=str(node.get("path") or ""),
                    line=node.get("line"),
                    resolved=bool(node.get("isResolved")),
                    outdated=bool(node.get("isOutdated")),
                )
            )
        top = tuple(
            self._note(n, "issue")
            for n in self._pages(_COMMENTS, "comments", "reading the pull request's comments")
        )
        me = self.session.login()
        # the Actions token writes as the shared github-actions[bot]: "@github-actions" is
        # no name of Nova's (only NOVA_HANDLE is, then)
        return Record(threads=tuple(threads), top=top, login="" if me == _SHARED_BOT else me)

    # -- writing -------------------------------------------------------------------------
    def reply(self, thread: Thread | None, body: str) -> Note:
        from github import GithubException
        from requests import RequestException

        pull = self.session.pull
        assert pull is not None, "fetch the change first"
        try:
            if thread is None:
                made: Any = pull.create_issue_comment(body)
                kind = "issue"
            else:
                made = pull.create_review_comment_reply(int(thread.root.id), body)
                kind = "review"
        except (GithubException, RequestException) as exc:
            raise github_error(exc, "replying on the pull request") from exc
        ident = str(made.id)
        self._kind[ident] = kind
        return Note(ident, self.session.login(), body, int(made.id), bot=True, mine=True)

    def delete(self, note: Note) -> None:
        from github import GithubException
        from requests import RequestException

        pull = self.session.pull
        assert pull is not None, "fetch the change first"
        try:
            if self._kind.get(note.id) == "issue":
                pull.get_issue_comment(int(note.id)).delete()
            else:
                pull.get_review_comment(int(note.id)).delete()
        except (GithubException, RequestException) as exc:
            raise github_error(exc, "deleting a duplicate answer") from exc

    def resolve(self, thread: Thread) -> None:
        data = self._query(_RESOLVE, {"id": thread.id}, "resolving a review thread")
        done = ((data.get("resolveReviewThread") or {}).get("thread") or {}).get("isResolved")
        if not done:
            raise ServiceError("resolving a review thread: GitHub did not resolve it")

    def authority(self, login: str) -> Authority:
        """``GET /repos/{o}/{r}/collaborators/{login}/permission``."""
        from github import GithubException
        from requests import RequestException

        repo = self.session.repo
        assert repo is not None, "fetch the change first"
        try:
            _h, data = self._client.requester.requestJsonAndCheck(
                "GET", f"{repo.url}/collaborators/{quote(login, safe='')}/permission"
            )
        except GithubException as exc:
            if exc.status in (403, 404):
                return Authority(False, f"unknown (GitHub answered {exc.status})", WHO_MAY)
            raise github_error(exc, f"reading {login}'s permission") from exc
        except RequestException as exc:
            raise github_error(exc, f"reading {login}'s permission") from exc
        role = str(data.get("role_name") or data.get("permission") or "none")
        allowed = role in _ALLOWED or data.get("permission") in ("admin", "write")
        return Authority(allowed, role, WHO_MAY)


def comment_event(event_path: str | None, repository: str | None) -> tuple[str | None, str | None]:
    """(``owner/repo#N``, comment id) of an Actions ``issue_comment`` or
    ``pull_request_review_comment`` event; (None, None) for a comment on a plain issue or
    another event. The payload is GitHub's, read from ``GITHUB_EVENT_PATH``."""
    import json
    from pathlib import Path

    from bot.errors import ConfigError

    if not event_path:
        return None, None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"GITHUB_EVENT_PATH {event_path}: {exc}") from exc
    comment = event.get("comment") if isinstance(event, dict) else None
    if not isinstance(comment, dict) or comment.get("id") is None:
        return None, None
    repo = ((event.get("repository") or {}).get("full_name")) or repository
    pull = event.get("pull_request") or {}
    issue = event.get("issue") or {}
    number = pull.get("number") or (issue.get("number") if issue.get("pull_request") else None)
    if not number or not repo:
        return None, None
    return f"{repo}#{number}", str(comment["id"])
