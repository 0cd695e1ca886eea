"""The conversation on a GitLab merge request (``bot.conversation.Conversation``).

Reads the merge request's diff discussions (Nova's own carry a fingerprint in their first
note; a person's may ask Nova something about a line) and its other notes (top-level
comments; system notes are skipped), and the award emoji on the first note of each of
Nova's threads (``…/notes/:id/award_emoji``, one call a thread: 👍 / 👎 rate a
finding). Writes a note in a discussion (``POST …/discussions/:id/notes``) or on the merge
request, deletes Nova's own duplicate, and resolves a discussion (``PUT …/discussions/:id``
with ``resolved=true``).

Authority is the project membership (``GET /projects/:id/members/all/:user_id``): at least
``NOVA_GITLAB_DISMISS_LEVEL`` (default 30, Developer). A note counts as edited when its
``updated_at`` moved past ``created_at`` (GitLab has no edit time of its own in the API; a
resolved thread's notes move too, so those are not held edited). Bots: a project or group
access token's user (``project_<id>_bot…``) or an author marked ``bot``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bot.change import Change
from bot.conversation.model import Authority, Note, Record, Thread
from bot.hosts.gitlab.client import MergeState, gitlab_error

if TYPE_CHECKING:
    from gitlab.v4.objects import ProjectMergeRequest


__all__ = ["GitLabConversation"]

_LEVELS = {
    10: "Guest",
    15: "Planner",
    20: "Reporter",
    30: "Developer",
    40: "Maintainer",
    50: "Owner",
}
_BOT_USER = re.compile(r"^(project|group)_\d+_bot")
_AWARD = {"thumbsup": "+1", "thumbsdown": "-1"}  # as ``Note.reactions`` names them


def _level(level: int) -> str:
    return _LEVELS.get(level, str(level))


class GitLabConversation:
    def __init__(self, session: MergeState) -> None:
        self.session = session
        self._ids: dict[str, int] = {}  # username -> user id (the members API wants ids)
        self._login: str | None = None

    @property
    def _mr(self) -> ProjectMergeRequest:
        assert self.session.mr is not None, "fetch the merge request first"
        return self.session.mr

    def _me(self) -> str:
        if self._login is None:
            from gitlab.exceptions import GitlabError
            from requests import RequestException

            assert self.session.client is not None, "fetch the merge request first"
            try:
                user = self.session.client.http_get("/user")
            except (GitlabError, RequestException) as exc:
                raise gitlab_error(exc, "reading the token's user") from exc
            self._login = str(user.get("username") or "") if isinstance(user, dict) else ""
        return self._login

    def _note(self, raw: dict[str, Any]) -> Note:
        author = raw.get("author") or {}
        username = str(author.get("username") or "ghost")
        if author.get("id") is not None:
            self._ids[username] = int(author["id"])
        created, updated = raw.get("created_at"), raw.get("updated_at")
        return Note(
            id=str(raw.get("id")),
            author=username,
            body=str(raw.get("body") or ""),
            seq=int(raw.get("id") or 0),
            at=str(created or ""),
            edited=bool(created and updated and updated != created and not raw.get("resolved")),
            bot=bool(author.get("bot")) or bool(_BOT_USER.match(username)),
            mine=self.session.is_mine(raw),
        )

    def read(self, change: Change) -> Record:
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        if self.session.mr is None or self.session.job_token_only:
            return Record()  # diffed from the checkout, or CI_JOB_TOKEN: it cannot write notes
        threads: list[Thread] = []
        in_threads: set[int] = set()
        try:
            for discussion in self._mr.discussions.list(iterator=True):
                raw = [n for n in discussion.attributes.get("notes") or [] if not n.get("system")]
                if not raw or not raw[0].get("position"):
                    continue  # a plain note or thread: read below as top-level notes
                notes = tuple(self._note(n) for n in raw)
                if notes[0].mine:  # how people rate Nova's finding: one call per thread
                    notes = (replace(notes[0], reactions=self._awards(notes[0].id)), *notes[1:])
                in_threads.update(int(n.get("id") or 0) for n in raw)
                position = raw[0].get("position") or {}
                threads.append(
                    Thread(
                        id=str(discussion.attributes.get("id")),
                        notes=notes,
                        path=str(position.get("new_path") or ""),
                        line=position.get("new_line"),
                        resolved=bool(raw[0].get("resolved")),
                    )
                )
            top = tuple(
                self._note(n.attributes)
                for n in self._mr.notes.list(iterator=True, sort="asc", order_by="created_at")
                if not n.attributes.get("system")
                and int(n.attributes.get("id") or 0) not in in_threads
            )
        except (GitlabError, RequestException) as exc:
            raise gitlab_error(exc, "reading the merge request's discussions") from exc
        return Record(threads=tuple(threads), top=top, login=self._me())

    def _awards(self, note_id: str) -> tuple[tuple[str, int], ...]:
        """The award emoji on a note, counted by name (``thumbsup`` is ``+1``)."""
        counts: Counter[str] = Counter()
        note = self._mr.notes.get(int(note_id), lazy=True)
        for award in note.awardemojis.list(iterator=True):
            name = str(award.attributes.get("name") or "")
            if name:
                counts[_AWARD.get(name, name)] += 1
        return tuple(counts.items())

    def reply(self, thread: Thread | None, body: str) -> Note:
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        try:
            if thread is None:
                made: Any = self._mr.notes.create({"body": body})
            else:
                discussion = self._mr.discussions.get(thread.id, lazy=True)
                made = discussion.notes.create({"body": body})
        except (GitlabError, RequestException) as exc:
            raise gitlab_error(exc, "replying on the merge request") from exc
        return Note(str(made.id), self._me(), body, int(made.id), bot=True, mine=True)

    def delete(self, note: Note) -> None:
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        try:
            self._mr.notes.delete(int(note.id))
        except (GitlabError, RequestException) as exc:
            raise gitlab_error(exc, "deleting a duplicate answer") from exc

    def resolve(self, thread: Thread) -> None:
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        try:
            discussion = self._mr.discussions.get(thread.id, lazy=True)
            discussion.resolved = True
            discussion.save()
        except (GitlabError, RequestException) as exc:
            raise gitlab_error(exc, "resolving a discussion") from exc

    def authority(self, login: str) -> Authority:
        from gitlab.exceptions import GitlabError
        from requests import RequestException

        need = self.session.gitlab.dismiss_level
        who_may = f"project members with {_level(need)} access or above"
        uid, project = self._ids.get(login), self.session.project
        if uid is None or project is None:
            return Authority(False, "unknown", who_may)
        try:
            member = project.members_all.get(uid)
        except GitlabError as exc:
            if exc.response_code in (403, 404):
                return Authority(False, "not a member", who_may)
            raise gitlab_error(exc, f"reading {login}'s access") from exc
        except RequestException as exc:
            raise gitlab_error(exc, f"reading {login}'s access") from exc
        level = int(getattr(member, "access_level", 0) or 0)
        return Authority(level >= need, _level(level), who_may)
