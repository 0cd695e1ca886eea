"""The conversation part of the local Conduit: ``transaction.search`` as Phorge answers it
(inline comments with ``replyToCommentPHID`` and ``isDone``; every comment
with its ``phid``, ``id``, ``version`` — above 1 once edited — ``removed``, author and
dates; reviewer changes as Phorge reports them: a "reviewers" transaction with
``fields.operations[{operation: add|remove|update, phid, oldStatus, newStatus}]``, a
"resign" transaction by the reviewer who resigned), reviewers with their status attached to
``differential.revision.search``, ``project.search`` by members, and Nova's
``nova.differential.respond`` extension (threaded replies, done state,
a comment; hidden unless ``respond_extension``).

A subclass of ``FakeConduit`` (``tests/servers/conduit_server.py``): its ``timeline`` and
``inlines`` entries gain a comment id and PHID, ``replyTo``, ``done`` and ``version``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from tests.servers.conduit_server import BOT_PHID, ConduitFault, FakeConduit

__all__ = ["FakePhorge"]


@dataclass
class FakePhorge(FakeConduit):
    respond_extension: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        # revision id -> the reviewer PHIDs it was created with (before any comment); later
        # changes go through add_reviewer / remove_reviewer / resign, dated like comments
        self.reviewers: dict[int, list[str]] = {}
        self.reviewer_events: list[dict[str, Any]] = []
        self.project_members: dict[str, set[str]] = {}  # project PHID -> user PHIDs
        self._seq = itertools.count(1)
        self.pages_served = 0  # transaction.search pages answered

    def _stamp(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Give a comment its comment id and PHID the first time it is seen."""
        if "cid" not in entry:
            entry["cid"] = next(self._seq)
            entry.setdefault("cphid", f"PHID-XCMT-{entry['cid']:04d}")
            entry.setdefault("version", 1)
        return entry

    # -- test set-up -------------------------------------------------------------------
    def say(self, rev_id: int, author: str, text: str) -> dict[str, Any]:
        """A person's plain comment on the revision."""
        entry = self._stamp({"revision": rev_id, "author": author, "text": text})
        self.timeline.append(entry)
        return entry

    def reply_inline(self, author: str, parent: dict[str, Any], text: str) -> dict[str, Any]:
        """A person's reply under an inline (or under a reply: Phorge threads them flat)."""
        self._stamp(parent)
        reply = {
            "id": len(self.inlines) + 1,
            "revisionID": parent["revisionID"],
            "diffID": parent["diffID"],
            "authorPHID": author,
            "draft": False,
            "filePath": parent["filePath"],
            "isNewFile": parent.get("isNewFile", True),
            "lineNumber": parent["lineNumber"],
            "lineLength": parent.get("lineLength", 0),
            "content": text,
            "replyTo": parent["cphid"],
        }
        self.inlines.append(self._stamp(reply))
        return reply

    def add_reviewer(self, rev_id: int, phid: str, by: str = "PHID-USER-alice") -> None:
        """``by`` adds a reviewer now (after every comment so far): a "reviewers"
        transaction with an ``add`` operation, as DifferentialRevisionReviewersTransaction
        reports it."""
        self._reviewer_event(rev_id, by, "reviewers", [("add", phid, None, "added")])

    def remove_reviewer(self, rev_id: int, phid: str, by: str = "PHID-USER-alice") -> None:
        old = self.reviewer_status(rev_id).get(phid)
        self._reviewer_event(rev_id, by, "reviewers", [("remove", phid, old, None)])

    def resign(self, rev_id: int, phid: str) -> None:
        """The reviewer resigns: a "resign" transaction by them; their status "resigned"."""
        self._reviewer_event(rev_id, phid, "resign", [("update", phid, None, "resigned")])

    def _reviewer_event(
        self, rev_id: int, by: str, kind: str, ops: list[tuple[str, str, Any, Any]]
    ) -> None:
        for entry in [*self.timeline, *self.inlines]:  # every comment so far comes before it
            self._stamp(entry)
        n = next(self._seq)
        self.reviewer_events.append(
            {"revision": rev_id, "id": n, "by": by, "kind": kind, "ops": ops}
        )

    def reviewer_status(self, rev_id: int) -> dict[str, str]:
        """Reviewer PHID -> status now (added, resigned, …), replaying the events."""
        status = {p: "added" for p in self.reviewers.get(rev_id, [])}
        for event in self.reviewer_events:
            if event["revision"] != rev_id:
                continue
            for op, phid, _old, new in event["ops"]:
                if op == "remove":
                    status.pop(phid, None)
                else:
                    status[phid] = new
        return status

    def _reviewer_txs(self, rev_id: int) -> list[dict[str, Any]]:
        """The reviewer transactions of a revision: the ones it was created with (dated
        before any comment) and the later ones."""
        events = []
        if self.reviewers.get(rev_id):
            ops = [("add", p, None, "added") for p in self.reviewers[rev_id]]
            events.append({"id": 0, "by": "PHID-USER-alice", "kind": "reviewers", "ops": ops})
        events += [e for e in self.reviewer_events if e["revision"] == rev_id]
        return [
            {
                "id": e["id"],
                "phid": f"PHID-XACT-DREV-r{e['id']:04d}",
                "type": e["kind"],
                "authorPHID": e["by"],
                "objectPHID": f"PHID-DREV-{rev_id}",
                "dateCreated": 1_700_000_000 + e["id"],
                "dateModified": 1_700_000_000 + e["id"],
                "comments": [],
                "fields": {
                    "operations": [
                        {
                            "operation": op,
                            "phid": phid,
                            "oldStatus": old,
                            "newStatus": new,
                            "isBlocking": False,
                        }
                        for op, phid, old, new in e["ops"]
                    ]
                }
                if e["kind"] == "reviewers"
                else {},
            }
            for e in events
        ]

    def edit(self, entry: dict[str, Any], text: str) -> None:
        key = "content" if "content" in entry else "text"
        entry[key], entry["version"] = text, entry.get("version", 1) + 1

    def thread_of(self, root: dict[str, Any]) -> list[dict[str, Any]]:
        self._stamp(root)
        return [root, *(i for i in self.inlines if i.get("replyTo") == root["cphid"])]

    # -- methods -----------------------------------------------------------------------
    def _hidden_methods(self) -> set[str]:
        hidden = super()._hidden_methods()
        return hidden if self.respond_extension else hidden | {"nova.differential.respond"}

    def _m_transaction_search(self, params: dict[str, Any]) -> dict[str, Any]:
        for entry in [*self.timeline, *self.inlines]:  # in the order they were made
            self._stamp(entry)
        rev_id = int(str(params.get("objectIdentifier", "")).lstrip("D") or 0)
        data = [self._comment_tx(t) for t in self.timeline if t["revision"] == rev_id]
        data += [
            self._inline_tx(i) for i in self.inlines if i["revisionID"] == rev_id and not i["draft"]
        ]
        data += self._reviewer_txs(rev_id)
        # newest first, as a live Phorge answers (checked in tests/e2e): Nova's readers
        # (the conversation, the publisher's re-run guard) order by id themselves
        data.sort(key=lambda tx: tx["id"], reverse=True)
        return self._paged(data, params)

    def _paged(self, data: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        """A page as Phorge's cursor pager gives it (PhabricatorCursorPagedPolicyAwareQuery):
        ``limit`` rows (100 by default), newest first; ``cursor.after`` is the id of the last
        row when more follow, and ``after`` asks for the rows older than it."""
        limit = int(params.get("limit") or 100)
        if limit > 100:  # the "max" a search engine takes
            raise ConduitFault("ERR-CONDUIT-CORE", "Maximum page size for Conduit API is 100.")
        after = params.get("after")
        if after is not None:
            data = [tx for tx in data if tx["id"] < int(after)]
        page = data[:limit]
        self.pages_served += 1
        more = len(data) > limit
        return {
            "data": page,
            "cursor": {"limit": limit, "after": str(page[-1]["id"]) if more else None},
        }

    def _comment(self, entry: dict[str, Any], author: str, text: str) -> dict[str, Any]:
        self._stamp(entry)
        return {
            "id": entry["cid"],
            "phid": entry["cphid"],
            "version": entry["version"],
            "authorPHID": author,
            "dateCreated": 1_700_000_000 + entry["cid"],
            "dateModified": 1_700_000_000 + entry["cid"] + entry["version"] - 1,
            "removed": bool(entry.get("removed")),
            "content": {"raw": text},
        }

    def _comment_tx(self, t: dict[str, Any]) -> dict[str, Any]:
        comment = self._comment(t, t["author"], t["text"])
        return {
            "id": comment["id"],
            "phid": f"PHID-XACT-DREV-{comment['id']:04d}",
            "type": "comment",
            "authorPHID": t["author"],
            "comments": [comment],
            "fields": {},
        }

    def _inline_tx(self, i: dict[str, Any]) -> dict[str, Any]:
        comment = self._comment(i, i["authorPHID"], i["content"])
        return {
            "id": comment["id"],
            "phid": f"PHID-XACT-DREV-{comment['id']:04d}",
            "type": "inline",
            "authorPHID": i["authorPHID"],
            "comments": [comment],
            "fields": {
                "diff": {"id": i["diffID"], "phid": f"PHID-DIFF-{i['diffID']}"},
                "path": i["filePath"],
                "line": i["lineNumber"],
                "length": i["lineLength"] + 1,
                "replyToCommentPHID": i.get("replyTo"),
                "isDone": bool(i.get("done")),
            },
        }

    def _m_differential_revision_search(self, params: dict[str, Any]) -> dict[str, Any]:
        found = super()._m_differential_revision_search(params)
        if (params.get("attachments") or {}).get("reviewers"):
            for row in found["data"]:
                status = self.reviewer_status(int(row["id"]))
                row["attachments"] = {
                    "reviewers": {
                        "reviewers": [
                            {"reviewerPHID": p, "status": st, "isBlocking": False}
                            for p, st in status.items()
                        ]
                    }
                }
        return found

    def _m_project_search(self, params: dict[str, Any]) -> dict[str, Any]:
        constraints = params.get("constraints") or {}
        phids = constraints.get("phids") or list(self.project_members)
        members = set(constraints.get("members") or [])
        data = [
            {"phid": p, "type": "PROJ", "fields": {"name": p}}
            for p in phids
            if p in self.project_members and members <= self.project_members[p]
        ]
        return {"data": data, "cursor": {"after": None}}

    def _m_nova_differential_respond(self, params: dict[str, Any]) -> dict[str, Any]:
        rev_id = int(params.get("revisionID") or 0)
        if rev_id not in self.revisions:
            raise ConduitFault("ERR-BAD-REVISION", "No such revision.")
        published = {
            self._stamp(i)["cphid"]: i
            for i in self.inlines
            if i["revisionID"] == rev_id and not i["draft"]
        }
        replies, done = params.get("replies") or [], params.get("done") or []
        for phid in [*(r.get("replyTo") for r in replies), *done]:
            if phid not in published:
                raise ConduitFault(
                    "ERR-BAD-INLINE", f'no published inline "{phid}" on this revision.'
                )
        if not replies and not done and not (params.get("comment") or "").strip():
            raise ConduitFault("ERR-EMPTY", "Nothing to do.")
        if params.get("comment"):
            self.timeline.append(
                self._stamp({"revision": rev_id, "author": BOT_PHID, "text": params["comment"]})
            )
        made = [self.reply_inline(BOT_PHID, published[r["replyTo"]], r["content"]) for r in replies]
        for phid in done:
            published[phid]["done"] = True
        return {
            "version": 1,
            "revisionID": rev_id,
            "replies": [
                {"id": m["cid"], "phid": m["cphid"], "replyTo": m["replyTo"]} for m in made
            ],
            "done": len(done),
        }
