"""The conversation part of the local GitLab server: replies in a discussion, resolving it,
deleting a note, project members' access levels (``/members/all/:user_id``) and a note's
award emoji (``/notes/:note_id/award_emoji``).

As GitLab: a reply is ``POST …/discussions/:id/notes``; ``PUT …/discussions/:id`` with
``resolved=true`` resolves a diff thread (a Developer, or the merge request's author) and
marks each of its notes ``resolved`` with ``resolved_by``; an individual note is not
resolvable; deleting a note someone else wrote is 403; a user who is not a member is 404
``404 Not found``. Notes carry ``created_at`` / ``updated_at`` (an edit moves the latter).

Mixed into ``FakeGitLab`` (``tests/servers/gitlab_server.py``), whose lists it shares.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["GitLabThreadsMixin"]

_T0 = datetime(2026, 1, 1, tzinfo=UTC)
_QUICK = re.compile(r"/([A-Za-z][\w-]*)(?:[ \t]+(.*))?$")


def quick_actions(body: str) -> tuple[list[tuple[str, str]], str]:
    """GitLab's reading of a note (Gitlab::QuickActions::Extractor): carriage returns are
    deleted; a line is a quick action when it starts with ``/`` and a name (any case) at
    column 0; only a fenced block opened at column 0 *and closed* hides its lines. Returns
    ((name, argument) of each, lowercased name) and the body without those lines, as GitLab
    stores it. Every ``/name`` counts (GitLab runs the ones it knows): a fake that counts
    more than GitLab runs can only make a test stricter."""
    lines = body.replace("\r", "").split("\n")
    hidden: set[int] = set()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            end = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("```")), None)
            if end is not None:
                hidden.update(range(i, end + 1))
                i = end + 1
                continue
        i += 1
    found, kept = [], []
    for n, line in enumerate(lines):
        m = _QUICK.match(line) if n not in hidden else None
        if m:
            found.append((m.group(1).lower(), (m.group(2) or "").strip()))
        else:
            kept.append(line)
    return found, "\n".join(kept)


class GitLabThreadsMixin:
    """Call ``init_threads()`` in ``__init__``; ``thread_routes(mr)`` joins the routes."""

    discussions: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    user: dict[str, Any]
    merge_requests: dict[tuple[str, int], Any]

    def init_threads(self) -> None:
        # (username, action, argument, where) of every quick action GitLab ran: a note's
        # ``/approve``, ``/merge``, ``/close``, ``/label ~x``… run as the note's author
        self.actions: list[tuple[str, str, str, str]] = []
        self.access: dict[int, int] = {}  # user id -> access level (30 Developer, 40 …)
        self.deleted: list[int] = []
        self.awards: dict[int, list[dict[str, Any]]] = {}  # note id -> its award emoji
        self._clock = 0

    def _mr(self, pid: str, iid: str) -> Any:  # FakeGitLab's
        raise NotImplementedError

    def _id(self) -> int:  # FakeGitLab's
        raise NotImplementedError

    def _page(self, items: list[Any], query: dict[str, str], path: str) -> Any:  # FakeGitLab's
        raise NotImplementedError

    def stamp(self) -> str:
        """A creation time, one second after the last (GitLab's are ISO 8601 UTC)."""
        self._clock += 1
        return (_T0 + timedelta(seconds=self._clock)).isoformat().replace("+00:00", "Z")

    def thread_routes(self, mr: str) -> list[tuple[str, str, Any]]:
        return [
            ("POST", mr + r"/discussions/([0-9a-f]+)/notes$", self._reply),
            ("PUT", mr + r"/discussions/([0-9a-f]+)$", self._resolve),
            ("DELETE", mr + r"/notes/(\d+)$", self._delete_note),
            ("GET", r"^/projects/([^/]+)/members/all/(\d+)$", self._member),
            ("GET", mr + r"/notes/(\d+)/award_emoji$", self._award_emoji),
        ]

    # -- test set-up -------------------------------------------------------------------
    def reply_as(
        self, user_id: int, username: str, discussion: dict[str, Any], body: str
    ) -> dict[str, Any]:
        note = self._new_note(discussion, body, {"id": user_id, "username": username})
        discussion["notes"].append(note)
        return note

    def award_as(self, user_id: int, username: str, note: dict[str, Any], name: str) -> None:
        """A person puts an emoji (``thumbsup``, ``thumbsdown``, …) on a note; once each."""
        awards = self.awards.setdefault(note["id"], [])
        if any(a["name"] == name and a["user"]["id"] == user_id for a in awards):
            return  # GitLab: 404 "Award Emoji has already been taken"
        at = self.stamp()
        awards.append(
            {
                "id": self._id(),
                "name": name,
                "user": {"id": user_id, "username": username},
                "created_at": at,
                "updated_at": at,
                "awardable_id": note["id"],
                "awardable_type": "Note",
            }
        )

    def edit_as_author(self, note: dict[str, Any], body: str) -> None:
        note["body"], note["updated_at"] = body, self.stamp()

    def discussion_of(self, note_id: int) -> dict[str, Any]:
        return next(d for d in self.discussions if any(n["id"] == note_id for n in d["notes"]))

    def execute(self, body: str, author: dict[str, Any], where: str) -> str:
        """Run the quick actions in ``body`` as ``author`` (recorded, and applied to the
        merge request where it matters: approved, merged, closed, labels); the body as
        GitLab stores it."""
        found, kept = quick_actions(body)
        for name, arg in found:
            self.actions.append((str(author.get("username")), name, arg, where))
        return kept

    # -- endpoints ---------------------------------------------------------------------
    def _new_note(
        self, discussion: dict[str, Any], body: str, author: dict[str, Any]
    ) -> dict[str, Any]:
        first = discussion["notes"][0]
        at = self.stamp()
        project, iid = discussion["mr"]
        diff = first.get("position") is not None
        return {
            "id": self._id(),
            "mr": discussion["mr"],
            "body": body,
            "author": author,
            "system": False,
            "noteable_type": "MergeRequest",
            "noteable_iid": iid,
            "type": "DiffNote" if diff else "DiscussionNote",
            "position": first.get("position"),
            "resolvable": diff,
            "resolved": bool(first.get("resolved")),
            "created_at": at,
            "updated_at": at,
        }

    def _discussion(self, pid: str, iid: str, did: str) -> dict[str, Any] | None:
        spec = self._mr(pid, iid)
        if spec is None:
            return None
        return next(
            (d for d in self.discussions if d["id"] == did and d["mr"] == (spec.project, spec.iid)),
            None,
        )

    def _reply(self, pid: str, iid: str, did: str, body: Any, **_: Any):
        discussion = self._discussion(pid, iid, did)
        if discussion is None:
            return 404, {"message": "404 Not found"}, {}
        if not isinstance(body, dict) or not body.get("body"):
            return 400, {"error": "body is missing"}, {}
        text = self.execute(body["body"], self.user, f"discussion {did}")
        note = self._new_note(discussion, text, dict(self.user))
        discussion["notes"].append(note)
        return 201, {k: v for k, v in note.items() if k != "mr"}, {}

    def _resolve(self, pid: str, iid: str, did: str, body: Any, query: dict[str, str], **_: Any):
        discussion = self._discussion(pid, iid, did)
        if discussion is None:
            return 404, {"message": "404 Not found"}, {}
        wanted = (body or {}).get("resolved", query.get("resolved"))
        if wanted is None:
            return 400, {"error": "resolved is missing"}, {}
        if not discussion["notes"][0].get("position"):
            return 422, {"message": "Discussion is not resolvable"}, {}
        resolved = str(wanted).lower() in ("true", "1")
        for note in discussion["notes"]:
            note["resolvable"] = True
            note["resolved"] = resolved
            note["resolved_by"] = dict(self.user) if resolved else None
        return 200, {"id": did, "notes": discussion["notes"]}, {}

    def _delete_note(self, pid: str, iid: str, nid: str, **_: Any):
        spec = self._mr(pid, iid)
        for items in [self.notes, *(d["notes"] for d in self.discussions)]:
            for i, note in enumerate(items):
                if spec and note["id"] == int(nid) and note["mr"] == (spec.project, spec.iid):
                    if note["author"]["id"] != self.user["id"]:
                        return 403, {"message": "403 Forbidden"}, {}
                    del items[i]
                    self.deleted.append(int(nid))
                    return 204, None, {}
        return 404, {"message": "404 Note Not Found"}, {}

    def _award_emoji(
        self, pid: str, iid: str, nid: str, query: dict[str, str], path: str, **_: Any
    ):
        spec = self._mr(pid, iid)
        notes = [n for d in self.discussions for n in d["notes"]] + self.notes
        if spec is None or not any(
            n["id"] == int(nid) and n["mr"] == (spec.project, spec.iid) for n in notes
        ):
            return 404, {"message": "404 Not found"}, {}
        return self._page(self.awards.get(int(nid), []), query, path)

    def _member(self, pid: str, uid: str, **_: Any):
        level = self.access.get(int(uid))
        if level is None:
            return 404, {"message": "404 Not found"}, {}
        return 200, {"id": int(uid), "username": f"user{uid}", "access_level": level}, {}
