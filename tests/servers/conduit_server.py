"""A local Conduit (Phabricator / Phorge API) for python-phabricator.

Wire protocol: ``POST /api/<method>`` with form fields ``params`` (JSON, with
``__conduit__: {"token": …}``) and ``output=json``; answers ``{"result", "error_code",
"error_info"}``, HTTP 200 even for errors. Numbers in diffs are strings, as on a live Phorge.

Semantics that matter to Nova:
- ``differential.createinline`` saves a *draft* only its author sees: it is not in
  ``transaction.search`` until published, and stock Conduit has no way to publish it;
- ``differential.publishinlines`` exists only when ``extension=True`` (Nova's extension);
- ``harbormaster.sendmessage`` stores messages per build target; ``legacy=True`` mimics an
  old server that knows only ``buildTargetPHID``;
- errors: ERR-INVALID-AUTH, ERR-BAD-FILE for an ``a/``/``b/``-prefixed or unknown path,
  ERR-CONDUIT-CORE for bad parameters; ``fail_next_http`` answers HTTP 500.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from tests.servers.base import JsonHandler, LocalHTTPServer

__all__ = ["FakeConduit", "changes_from_git_diff"]

TOKEN = "api-" + "t" * 28
BOT_PHID = "PHID-USER-novabot"


def changes_from_git_diff(text: str) -> list[dict[str, Any]]:
    """``querydiffs`` changes from a ``git diff -M`` text (the server's own reading)."""
    changes: list[dict[str, Any]] = []
    for block in re.split(r"^diff --git ", text, flags=re.M)[1:]:
        lines = block.split("\n")
        m = re.match(r"a/(.*) b/(.*)$", lines[0])
        old, new = m.group(1), m.group(2)
        kind, file_type = "2", "1"
        for ln in lines[1:]:
            if ln.startswith("new file mode"):
                kind = "1"
            elif ln.startswith("deleted file mode"):
                kind = "3"
            elif ln.startswith("rename from"):
                kind = "6"
            elif ln.startswith("Binary files"):
                file_type = "3"
        hunks, current = [], None
        for ln in lines:
            h = re.match(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", ln)
            if h:
                current = {"oldOffset": h.group(1), "oldLength": h.group(2) or "1",
                           "newOffset": h.group(3), "newLength": h.group(4) or "1",
                           "corpus": ""}
                hunks.append(current)
            elif current is not None and ln[:1] in (" ", "+", "-", "\\"):
                current["corpus"] += ln + "\n"
        change = {"currentPath": None if kind == "3" else new,
                  "oldPath": None if kind == "1" else old, "type": kind, "fileType": file_type,
                  "hunks": hunks}
        changes.append(change)
        if kind == "6":  # Phabricator also lists the far side of a move
            changes.append({"currentPath": old, "oldPath": old, "type": "4", "fileType": "1",
                            "hunks": []})
    return changes


@dataclass
class Revision:
    id: int
    title: str
    summary: str
    diffs: dict[int, list[dict[str, Any]]]  # diff id -> changes
    author_phid: str = "PHID-USER-alice"
    base: str = "0" * 40

    @property
    def phid(self) -> str:
        return f"PHID-DREV-{self.id}"


@dataclass
class FakeConduit(LocalHTTPServer):
    extension: bool = False
    legacy: bool = False
    revisions: dict[int, Revision] = field(default_factory=dict)
    inlines: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    build_messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    raw_diffs: dict[int, str] = field(default_factory=dict)
    created: list[dict[str, Any]] = field(default_factory=list)  # new revisions
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    fail_next_http: int = 0
    fail_methods: set[str] = field(default_factory=set)  # answer HTTP 500 for these
    delay: float = 0.0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add_revision(self, rev: Revision) -> Revision:
        self.revisions[rev.id] = rev
        return rev

    def visible_inlines(self, rev_id: int) -> list[dict[str, Any]]:
        return [i for i in self.inlines if i["revisionID"] == rev_id and not i["draft"]]

    def comments(self, rev_id: int) -> list[str]:
        return [t["text"] for t in self.timeline if t["revision"] == rev_id]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def handler(self) -> type[JsonHandler]:
        owner = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:  # noqa: N802
                form = parse_qs(self.read_body().decode())
                status, payload = owner._handle(self.path, form)
                if owner.delay and owner.stopping.wait(owner.delay):
                    return
                self.send_json(status, payload)

        return Handler

    # -- protocol ----------------------------------------------------------------------
    @staticmethod
    def _error(code: str, info: str) -> tuple[int, dict[str, Any]]:
        return 200, {"result": None, "error_code": code, "error_info": info}

    def _handle(self, path: str, form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        method = path.removeprefix("/api/").strip("/")
        params = json.loads(form.get("params", ["{}"])[0])
        token = (params.pop("__conduit__", None) or {}).get("token")
        with self._lock:
            self.calls.append((method, params))
            if self.fail_next_http or method in self.fail_methods:
                self.fail_next_http = max(0, self.fail_next_http - 1)
                return 500, {"error": "Internal Server Error"}
            if token != TOKEN:
                return self._error("ERR-INVALID-AUTH", "API token is not valid.")
            handler = getattr(self, "_m_" + method.replace(".", "_"), None)
            if handler is None or (method == "differential.publishinlines"
                                   and not self.extension):
                return self._error("ERR-CONDUIT-CALL", f'Conduit method "{method}" does '
                                   "not exist.")
            try:
                return 200, {"result": handler(params), "error_code": None, "error_info": None}
            except ConduitFault as exc:
                return self._error(exc.code, exc.info)

    # -- methods -----------------------------------------------------------------------
    def _m_conduit_query(self, params: dict[str, Any]) -> dict[str, Any]:
        names = [n[3:].replace("_", ".", 1) for n in dir(self) if n.startswith("_m_")]
        names = [n.replace("_", ".") for n in names]
        if not self.extension:
            names.remove("differential.publishinlines")
        return {n: {"description": "", "params": {}, "return": ""} for n in names}

    def _m_user_whoami(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"phid": BOT_PHID, "userName": "nova-bot"}

    def _m_user_search(self, params: dict[str, Any]) -> dict[str, Any]:
        phids = (params.get("constraints") or {}).get("phids") or []
        return {"data": [{"phid": p, "fields": {"username": p.rsplit("-", 1)[-1]}}
                         for p in phids], "cursor": {"after": None}}

    def _m_differential_revision_search(self, params: dict[str, Any]) -> dict[str, Any]:
        ids = (params.get("constraints") or {}).get("ids") or []
        data = []
        for rid in ids:
            rev = self.revisions.get(int(rid))
            if rev:
                data.append({"id": rev.id, "phid": rev.phid, "type": "DREV", "fields": {
                    "title": rev.title, "summary": rev.summary, "authorPHID": rev.author_phid,
                    "uri": f"{self.url}/D{rev.id}", "diffPHID": f"PHID-DIFF-{max(rev.diffs)}",
                    "status": {"value": "needs-review"}}})
        return {"data": data, "cursor": {"after": None}}

    def _m_differential_querydiffs(self, params: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for rev in self.revisions.values():
            for did, changes in rev.diffs.items():
                if did in (params.get("ids") or []) or rev.id in (params.get("revisionIDs")
                                                                  or []):
                    out[str(did)] = {"id": str(did), "revisionID": str(rev.id),
                                     "sourceControlBaseRevision": rev.base, "changes": changes}
        return out

    def _diff_paths(self, rev_id: int, diff_id: int) -> set[str]:
        rev = self.revisions.get(rev_id)
        changes = rev.diffs.get(diff_id, []) if rev else []
        return {c["currentPath"] for c in changes if c.get("currentPath")}

    def _m_differential_createinline(self, params: dict[str, Any]) -> dict[str, Any]:
        for key in ("revisionID", "diffID", "filePath", "isNewFile", "lineNumber", "content"):
            if key not in params:
                raise ConduitFault("ERR-CONDUIT-CORE", f'Parameter "{key}" is required.')
        rev_id, diff_id = int(params["revisionID"]), int(params["diffID"])
        path = params["filePath"]
        if path.startswith(("a/", "b/")) or path not in self._diff_paths(rev_id, diff_id):
            raise ConduitFault("ERR-BAD-FILE", f'No such file "{path}" in diff {diff_id}.')
        inline = {"id": len(self.inlines) + 1, "revisionID": rev_id, "diffID": diff_id,
                  "authorPHID": BOT_PHID, "draft": True, **{k: params[k] for k in (
                      "filePath", "isNewFile", "lineNumber", "content")},
                  "lineLength": params.get("lineLength", 0)}
        self.inlines.append(inline)
        return {"id": inline["id"], "filePath": path, "isDraft": True}

    def _m_differential_publishinlines(self, params: dict[str, Any]) -> dict[str, Any]:
        rev_id = int(params["revisionID"])
        drafts = [i for i in self.inlines if i["revisionID"] == rev_id and i["draft"]
                  and i["authorPHID"] == BOT_PHID]
        for i in drafts:
            i["draft"] = False
        if params.get("comment"):
            self.timeline.append({"revision": rev_id, "author": BOT_PHID,
                                  "text": params["comment"]})
        return {"published": len(drafts)}

    def _m_differential_createrawdiff(self, params: dict[str, Any]) -> dict[str, Any]:
        diff = params.get("diff") or ""
        if "diff --git" not in diff:
            raise ConduitFault("ERR-CONDUIT-CORE", "The diff is empty or not a diff.")
        did = 9000 + len(self.raw_diffs)
        self.raw_diffs[did] = diff
        return {"id": did, "phid": f"PHID-DIFF-{did}",
                "uri": f"{self.url}/differential/diff/{did}/"}

    def _create_revision(self, params: dict[str, Any]) -> dict[str, Any]:
        fields = {tx["type"]: tx["value"] for tx in params.get("transactions") or []}
        if "update" not in fields or "title" not in fields:
            raise ConduitFault("ERR-CONDUIT-CORE", "A new revision needs a diff and a title.")
        rid = 500 + len(self.created)
        self.created.append({"id": rid, **fields})
        return {"object": {"id": rid, "phid": f"PHID-DREV-{rid}"}, "transactions": []}

    def _m_differential_revision_edit(self, params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("objectIdentifier"):
            return self._create_revision(params)
        rev_id = int(str(params.get("objectIdentifier", "")).lstrip("D") or 0)
        if rev_id not in self.revisions:
            raise ConduitFault("ERR-CONDUIT-CORE", "No such revision.")
        for tx in params.get("transactions") or []:
            if tx.get("type") == "comment":
                self.timeline.append({"revision": rev_id, "author": BOT_PHID,
                                      "text": tx["value"]})
        return {"object": {"id": rev_id, "phid": f"PHID-DREV-{rev_id}"}, "transactions": []}

    def _m_transaction_search(self, params: dict[str, Any]) -> dict[str, Any]:
        rev_id = int(str(params.get("objectIdentifier", "")).lstrip("D") or 0)
        data = [{"id": n, "type": "comment", "authorPHID": t["author"],
                 "comments": [{"content": {"raw": t["text"]}}]}
                for n, t in enumerate(self.timeline) if t["revision"] == rev_id]
        data += [{"id": 1000 + i["id"], "type": "inline", "authorPHID": i["authorPHID"],
                  "comments": [{"content": {"raw": i["content"]}}],
                  "fields": {"path": i["filePath"], "line": i["lineNumber"]}}
                 for i in self.visible_inlines(rev_id)]
        return {"data": data, "cursor": {"after": None}}

    def _m_harbormaster_sendmessage(self, params: dict[str, Any]) -> dict[str, Any]:
        target = params.get("buildTargetPHID") if self.legacy else (
            params.get("receiver") or params.get("buildTargetPHID"))
        if self.legacy and "receiver" in params:
            raise ConduitFault("ERR-CONDUIT-CORE",
                               'Parameter "buildTargetPHID" is required.')
        if not target:
            raise ConduitFault("ERR-CONDUIT-CORE", 'Parameter "receiver" is required.')
        if params.get("type") not in ("pass", "fail", "work"):
            raise ConduitFault("ERR-CONDUIT-CORE", "Bad message type.")
        self.build_messages.setdefault(target, []).append(params)
        return None


class ConduitFault(Exception):
    def __init__(self, code: str, info: str) -> None:
        super().__init__(info)
        self.code = code
        self.info = info
