"""The conversation on a Differential revision (``bot.conversation.Conversation``).

Reads ``transaction.search``: inline comments (``fields.replyToCommentPHID`` threads them
under Nova's inline, ``fields.isDone`` is the done state) and plain comments; every comment
with its PHID, id (the order), ``version`` (above 1: edited) and ``removed``. Authors are
PHIDs, shown by username (``user.search``; a user with the ``bot`` role is a bot).

Writes through Nova's Conduit extension ``nova.differential.respond``
(``ci/phabricator/extension``): a threaded reply, the done state, a comment. Without it,
answers go to the revision as plain comments (``differential.revision.edit``) naming the
inline they answer, and nothing is marked done. Phorge has no way to remove a published
comment, so a duplicate answer from two runs at once stays (``CannotDelete``).

Authority, which an author cannot game: a dismissal counts from a reviewer who was a
reviewer before the finding was posted and has not resigned (the reviewer transactions of
``transaction.search`` — "reviewers" with ``fields.operations`` add / remove / update,
dated — replayed up to the finding's time; the status now from
``differential.revision.search``'s ``reviewers`` attachment), or from a member of
``NOVA_PHABRICATOR_DISMISS_PROJECT`` (``project.search``); never from the revision's
author. An accomplice the author adds as a reviewer after Nova's comment does not count.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.change import Change
from bot.conversation.model import Authority, CannotDelete, Note, Record, Thread
from bot.errors import NovaError

if TYPE_CHECKING:
    from bot.hosts.phabricator.conduit import RevisionState

__all__ = ["RESPOND_METHOD", "PhabricatorConversation"]

RESPOND_METHOD = "nova.differential.respond"
_HTML_MARK = re.compile(r"<!-- (nova:[a-z]+:[A-Za-z0-9_=,-]+) -->")
_PAGES = 20


def _iso(epoch: object) -> str:
    """Conduit's epoch seconds as ISO 8601 (what ``Note.at`` holds on every host)."""
    if not isinstance(epoch, int | str) or not str(epoch).isdigit():
        return ""
    return datetime.fromtimestamp(int(epoch), UTC).isoformat().replace("+00:00", "Z")


def _epoch(at: str) -> int | None:
    try:
        return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def remarkup(body: str) -> str:
    """Nova's hidden HTML marks as Phorge shows them: ``//nova:re:…//`` (Remarkup has no
    comments; the publisher's inlines carry ``//nova:fp:…//`` the same way)."""
    return _HTML_MARK.sub(r"//\1//", body)


class PhabricatorConversation:
    def __init__(self, session: RevisionState) -> None:
        self.session = session
        self._phids: dict[str, str] = {}  # username -> user PHID
        self._names: dict[str, tuple[str, bool]] = {}  # PHID -> (username, bot)
        self._txs: list[dict[str, Any]] | None = None  # the last transaction.search read
        self._reviewers: dict[str, str] | None = None  # reviewer PHID -> status now
        self._tx_of: dict[str, int] = {}  # comment PHID -> its transaction's id (the order)

    def _revision_id(self, change: Change) -> int:
        return int(str(change.id).split(":")[0].lstrip("D"))

    def _transactions(self, change: Change) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        after = None
        for _ in range(_PAGES):
            params: dict[str, Any] = {"objectIdentifier": f"D{self._revision_id(change)}"}
            params["limit"] = 100
            if after:
                params["after"] = after
            page = self.session.conduit.call("transaction.search", **params) or {}
            found += [tx for tx in page.get("data") or [] if isinstance(tx, dict)]
            after = (page.get("cursor") or {}).get("after")
            if not after:
                break
        self._txs = found
        return found

    def _learn_users(self, phids: set[str]) -> None:
        wanted = sorted(p for p in phids if p and p not in self._names)
        if not wanted:
            return
        page = self.session.conduit.call("user.search", constraints={"phids": wanted}) or {}
        for row in page.get("data") or []:
            fields = row.get("fields") or {}
            name = str(fields.get("username") or row.get("phid"))
            self._names[str(row.get("phid"))] = (name, "bot" in (fields.get("roles") or []))
            self._phids[name] = str(row.get("phid"))

    def _note(self, comment: dict[str, Any], me: str) -> Note:
        author = str(comment.get("authorPHID") or "")
        name, bot = self._names.get(author, (author, False))
        self._phids.setdefault(name, author)
        return Note(
            id=str(comment.get("phid") or comment.get("id")),
            author=name,
            body=str((comment.get("content") or {}).get("raw") or ""),
            seq=int(comment.get("id") or 0),
            at=_iso(comment.get("dateCreated")),
            edited=int(comment.get("version") or 1) > 1,
            bot=bot,
            mine=bool(me) and author == me,
        )

    def read(self, change: Change) -> Record:
        me = self.session.whoami()
        txs = [
            tx
            for tx in self._transactions(change)
            if tx.get("type") in ("inline", "comment")
            and (tx.get("comments") or [{}])[0].get("phid")
            and not (tx.get("comments") or [{}])[0].get("removed")
        ]
        self._learn_users({str(tx["comments"][0].get("authorPHID") or "") for tx in txs})
        self._tx_of = {str(tx["comments"][0]["phid"]): int(tx.get("id") or 0) for tx in txs}
        txs.sort(key=lambda tx: int(tx["comments"][0].get("id") or 0))  # oldest first
        threads: dict[str, list[Note]] = {}
        info: dict[str, dict[str, Any]] = {}
        root_of: dict[str, str] = {}
        top: list[Note] = []
        for tx in txs:
            note, fields = self._note(tx["comments"][0], me), tx.get("fields") or {}
            if tx.get("type") == "comment":
                top.append(note)
                continue
            parent = fields.get("replyToCommentPHID")
            root = root_of.get(str(parent), str(parent)) if parent else note.id
            root_of[note.id] = root
            if parent is None:
                info[root] = fields
            threads.setdefault(root, []).append(note)
        out = [
            Thread(
                id=root,
                notes=tuple(notes),
                path=str(info[root].get("path") or ""),
                line=info[root].get("line"),
                resolved=bool(info[root].get("isDone")),
            )
            for root, notes in threads.items()
            if root in info
        ]
        return Record(threads=tuple(out), top=tuple(top), login=self._login())

    def _login(self) -> str:
        return str(self.session.conduit.call("user.whoami").get("userName") or "")

    def _has_extension(self) -> bool:
        try:
            return RESPOND_METHOD in self.session.conduit.methods()
        except NovaError:
            return False

    def reply(self, thread: Thread | None, body: str) -> Note:
        body = remarkup(body)
        revision = int(self.session.revision.get("id") or 0)
        if not self._has_extension():
            where = f"(on `{thread.path}:{thread.line}`) " if thread is not None else ""
            self.session.conduit.call(
                "differential.revision.edit",
                write=True,
                objectIdentifier=f"D{revision}",
                transactions=[{"type": "comment", "value": where + body}],
            )
            return Note("", self._login(), body, 0, bot=True, mine=True)
        params: dict[str, Any] = {"revisionID": revision}
        if thread is None:
            params["comment"] = body
        else:
            params["replies"] = [{"replyTo": thread.id, "content": body}]
        made = self.session.conduit.call(RESPOND_METHOD, write=True, **params) or {}
        replies = made.get("replies") or [{}]
        ident, seq = str(replies[0].get("phid") or ""), int(replies[0].get("id") or 0)
        return Note(ident, self._login(), body, seq, bot=True, mine=True)

    def delete(self, note: Note) -> None:
        raise CannotDelete("Phorge keeps every published comment: a duplicate answer stays")

    def resolve(self, thread: Thread) -> None:
        if not self._has_extension():
            raise NovaError(
                f"marking an inline done needs Nova's Conduit extension ({RESPOND_METHOD}, "
                "ci/phabricator/extension)"
            )
        revision = int(self.session.revision.get("id") or 0)
        self.session.conduit.call(RESPOND_METHOD, write=True, revisionID=revision, done=[thread.id])

    def _who_may(self) -> str:
        project = self.session.phabricator.dismiss_project
        return (
            "the revision's reviewers who were reviewers before Nova's comment and have not "
            "resigned" + (f", and the members of {project}" if project else "")
        )

    def _status_now(self) -> dict[str, str]:
        """Reviewer PHID -> status (added, accepted, resigned, …), read once a run."""
        if self._reviewers is None:
            rid = int(self.session.revision.get("id") or 0)
            found = (
                self.session.conduit.call(
                    "differential.revision.search",
                    constraints={"ids": [rid]},
                    attachments={"reviewers": True},
                )
                or {}
            )
            self._reviewers = {}
            for row in found.get("data") or []:
                attached = (row.get("attachments") or {}).get("reviewers") or {}
                for r in attached.get("reviewers") or []:
                    self._reviewers[str(r.get("reviewerPHID"))] = str(r.get("status") or "")
        return self._reviewers

    def _member(self, phid: str) -> bool:
        project = self.session.phabricator.dismiss_project
        if not project:
            return False
        members = (
            self.session.conduit.call(
                "project.search", constraints={"phids": [project], "members": [phid]}
            )
            or {}
        )
        return bool(members.get("data"))

    def _reviewer_before(self, phid: str, thread: Thread) -> bool:
        """``phid`` was a reviewer when the finding of ``thread`` was posted: the reviewer
        transactions before it replayed. "Before" is the order of the revision's
        transaction ids (one table, so a reviewer added in the same second as the comment is
        still told apart); the date when the comment's transaction is unknown."""
        rid = int(self.session.revision.get("id") or 0)
        txs = self._txs
        if txs is None:
            txs = self._transactions(Change(id=f"D{rid}", source="phabricator"))
        posted_tx, posted_at = self._tx_of.get(thread.root.id), _epoch(thread.root.at)
        if posted_tx is None and posted_at is None:
            return False
        was = False
        for tx in sorted(txs, key=lambda t: int(t.get("id") or 0)):
            before = (
                int(tx.get("id") or 0) < posted_tx
                if posted_tx is not None
                else int(tx.get("dateCreated") or 0) < (posted_at or 0)
            )
            if tx.get("type") != "reviewers" or not before:
                continue
            for op in (tx.get("fields") or {}).get("operations") or []:
                if op.get("phid") == phid:
                    was = op.get("operation") != "remove" and op.get("newStatus") != "resigned"
        return was

    def _granted(self, login: str) -> tuple[str, Authority | None]:
        """(PHID, a refusal) for who can never dismiss; (PHID, a grant) for a member of
        the project; (PHID, None) when the reviewers decide."""
        phid = self._phids.get(login)
        if not phid:
            return "", Authority(False, "unknown", self._who_may())
        fields = self.session.revision.get("fields") or {}
        if phid == fields.get("authorPHID"):
            return phid, Authority(False, "the revision's author", self._who_may())
        if self._member(phid):
            project = self.session.phabricator.dismiss_project
            return phid, Authority(True, f"member of {project}", self._who_may())
        return phid, None

    def authority(self, login: str) -> Authority:
        """May ``login`` overrule the gate here at all (a reviewer now, not resigned)."""
        phid, decided = self._granted(login)
        if decided is not None:
            return decided
        status = self._status_now().get(phid)
        if status and status != "resigned":
            return Authority(True, "reviewer", self._who_may())
        role = "resigned" if status == "resigned" else "not a reviewer"
        return Authority(False, role, self._who_may())

    def authority_on(self, login: str, thread: Thread) -> Authority:
        """May ``login`` dismiss the finding of ``thread``: a member of the project, or a
        reviewer now who was one before the finding was posted."""
        phid, decided = self._granted(login)
        if decided is not None:
            return decided
        now = self.authority(login)
        if not now.allowed:
            return now
        if not self._reviewer_before(phid, thread):
            return Authority(False, "a reviewer only since Nova's comment", self._who_may())
        return now
