"""A local Conduit (Phabricator / Phorge API) for python-phabricator.

Wire protocol: ``POST /api/<method>`` with form fields ``params`` (JSON, with
``__conduit__: {"token": …}``) and ``output=json``; answers ``{"result", "error_code",
"error_info"}``, HTTP 200 even for errors. Numbers in diffs are strings, as on a live Phorge.

Semantics that matter to Nova (checked against a real Phorge, see tests/e2e):
- ``differential.createinline`` saves a *draft* only its author sees: it is not in
  ``transaction.search`` until published, and stock Conduit has no way to publish it;
- ``nova.differential.publish`` (Nova's extension, contract version 2) exists only when
  ``extension=True``: it checks every inline, then creates and publishes them with the
  comment all at once, or writes nothing; ``discardDrafts`` deletes the caller's drafts;
- ``harbormaster.sendmessage`` APPENDS lint rows to the target (``lint_rows``), and a
  ``pass``/``fail`` completes a waiting target (as the daemons do; ``daemons=False`` leaves
  messages unprocessed); a message to a completed target changes nothing but the rows.
  ``harbormaster.target.search`` reports the status. ``legacy=True`` mimics an old server
  that knows only ``buildTargetPHID`` and has no ``harbormaster.target.search``;
- ``read_only=True``: the token's user may view a revision but not interact with it: every
  write to a revision answers Phorge's policy error (``ERR-CONDUIT-CORE``, "[You Shall Not
  Pass: D123] (Can Interact) You do not have permission to interact with this object. //
  …"). ``harbormaster.sendmessage`` still works, as on Phorge: it needs only to see the
  build. ``harbormaster_denied=True``: the user may not use Harbormaster, and its methods
  answer what Conduit says then (the sentence is the error code, "Unknown Error" the info);
  ``refused_lines`` makes the extension refuse an inline on those ``(path, line)`` (as a
  line outside the diff);
- ``transaction.search`` answers oldest first unless ``newest_first=True``: a live Phorge
  answers newest first (its default order, transaction id descending);
- errors: ERR-INVALID-AUTH, ERR-BAD-FILE for an ``a/``/``b/``-prefixed or unknown path,
  ERR-CONDUIT-CORE for bad parameters; ``fail_next_http`` / ``fail_methods`` answer HTTP
  500 (``fail_times``: the next N calls of a method); ``crash_methods`` (method ->
  message) is a PHP ``Error`` inside the method: an HTML
  500 page, unless the request carries ``__conduit__`` outside ``params`` (query or form),
  when Phorge answers ``{"error_code": "Error", "error_info": message}`` — as the real
  exception handler does.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.servers.base import JsonHandler, LocalHTTPServer

__all__ = ["FakeConduit", "changes_from_git_diff"]

TOKEN = "api-" + "t" * 28
BOT_PHID = "PHID-USER-novabot"
WRITE_METHODS = frozenset(
    {
        "differential.revision.edit",
        "differential.createinline",
        "nova.differential.publish",
        "differential.createrawdiff",
        "harbormaster.sendmessage",
    }
)
_NO_APP = "You do not have access to the application which provides this API method."


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
                current = {
                    "oldOffset": h.group(1),
                    "oldLength": h.group(2) or "1",
                    "newOffset": h.group(3),
                    "newLength": h.group(4) or "1",
                    "corpus": "",
                }
                hunks.append(current)
            elif current is not None and ln[:1] in (" ", "+", "-", "\\"):
                current["corpus"] += ln + "\n"
        change = {
            "currentPath": None if kind == "3" else new,
            "oldPath": None if kind == "1" else old,
            "type": kind,
            "fileType": file_type,
            "hunks": hunks,
        }
        changes.append(change)
        if kind == "6":  # Phabricator also lists the far side of a move
            changes.append(
                {"currentPath": old, "oldPath": old, "type": "4", "fileType": "1", "hunks": []}
            )
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
    crash_methods: dict[str, str] = field(default_factory=dict)  # PHP Error inside these
    daemons: bool = True  # process build messages at once
    targets: dict[str, str] = field(default_factory=dict)  # target PHID -> status
    delay: float = 0.0
    slow_methods: set[str] = field(default_factory=set)  # applied, answered after `delay`
    read_only: bool = False  # the token's user may read but not comment (a policy error)
    harbormaster_denied: bool = False  # the token's user may not use Harbormaster
    newest_first: bool = False  # transaction.search in a live Phorge's order (id desc)
    refused_lines: set[tuple[str, int]] = field(default_factory=set)  # bad inline (path, line)
    # -- fault injection (issue 27): the next N calls of a method answer HTTP 500 --------
    fail_times: dict[str, int] = field(default_factory=dict)  # method -> calls left to fail

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add_revision(self, rev: Revision) -> Revision:
        self.revisions[rev.id] = rev
        return rev

    def visible_inlines(self, rev_id: int) -> list[dict[str, Any]]:
        return [i for i in self.inlines if i["revisionID"] == rev_id and not i["draft"]]

    def comments(self, rev_id: int) -> list[str]:
        return [t["text"] for t in self.timeline if t["revision"] == rev_id]

    def drafts(self, rev_id: int) -> list[dict[str, Any]]:
        return [i for i in self.inlines if i["revisionID"] == rev_id and i["draft"]]

    def lint_rows(self, target: str) -> list[dict[str, Any]]:
        return [row for m in self.build_messages.get(target, []) for row in m.get("lint") or []]

    def add_target(self, phid: str) -> str:
        self.targets[phid] = "target/waiting"
        return phid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def handler(self) -> type[JsonHandler]:
        owner = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:  # noqa: N802
                url = urlsplit(self.path)
                form = parse_qs(self.read_body().decode())
                flagged = "__conduit__" in form or "__conduit__" in parse_qs(url.query)
                status, payload = owner._handle(url.path, form, flagged)
                slow = (
                    not owner.slow_methods
                    or url.path.removeprefix("/api/").strip("/") in owner.slow_methods
                )
                if owner.delay and slow and owner.stopping.wait(owner.delay):
                    return
                if isinstance(payload, str):
                    self.send_json(status, payload, content_type="text/html")
                else:
                    self.send_json(status, payload)

        return Handler

    # -- protocol ----------------------------------------------------------------------
    @staticmethod
    def _error(code: str, info: str) -> tuple[int, dict[str, Any]]:
        return 200, {"result": None, "error_code": code, "error_info": info}

    def _handle(
        self, path: str, form: dict[str, list[str]], flagged: bool
    ) -> tuple[int, dict[str, Any] | str]:
        method = path.removeprefix("/api/").strip("/")
        params = json.loads(form.get("params", ["{}"])[0])
        token = (params.pop("__conduit__", None) or {}).get("token")
        with self._lock:
            self.calls.append((method, params))
            if self.fail_times.get(method, 0) > 0:
                self.fail_times[method] -= 1
                return 500, {"error": "Internal Server Error"}
            if self.fail_next_http or method in self.fail_methods:
                self.fail_next_http = max(0, self.fail_next_http - 1)
                return 500, {"error": "Internal Server Error"}
            if token != TOKEN:
                return self._error("ERR-INVALID-AUTH", "API token is not valid.")
            if method in self.crash_methods:  # PhabricatorConduitRequestExceptionHandler
                if flagged:
                    return self._error("Error", self.crash_methods[method])
                return 500, "<!DOCTYPE html><title>Unhandled Exception</title>"
            handler = getattr(self, "_m_" + method.replace(".", "_"), None)
            if handler is None or method in self._hidden_methods():
                return self._error("ERR-CONDUIT-CALL", f'Conduit method "{method}" does not exist.')
            if self.harbormaster_denied and method.startswith("harbormaster."):
                return self._error(_NO_APP, "Unknown Error")  # ConduitCall's ConduitException
            if self.read_only and method in WRITE_METHODS - {"harbormaster.sendmessage"}:
                return self._error("ERR-CONDUIT-CORE", self._policy_refusal(params))
            try:
                return 200, {"result": handler(params), "error_code": None, "error_info": None}
            except ConduitFault as exc:
                return self._error(exc.code, exc.info)

    @staticmethod
    def _policy_refusal(params: dict[str, Any]) -> str:
        """A PhabricatorPolicyException's message, as PhabricatorPolicyFilter words it."""
        rev = params.get("revisionID") or str(params.get("objectIdentifier") or "").lstrip("D")
        return (
            f"[You Shall Not Pass: D{rev}] (Can Interact) You do not have permission to "
            "interact with this object. // Members of the project Reviewers can take this action."
        )

    # -- methods -----------------------------------------------------------------------
    def _hidden_methods(self) -> set[str]:
        hidden = set() if self.extension else {"nova.differential.publish"}
        return hidden | ({"harbormaster.target.search"} if self.legacy else set())

    def _m_conduit_query(self, params: dict[str, Any]) -> dict[str, Any]:
        names = [n[3:].replace("_", ".") for n in dir(self) if n.startswith("_m_")]
        names = [n for n in names if n not in self._hidden_methods()]
        return {n: {"description": "", "params": {}, "return": ""} for n in names}

    def _m_user_whoami(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"phid": BOT_PHID, "userName": "nova-bot"}

    def _m_user_search(self, params: dict[str, Any]) -> dict[str, Any]:
        phids = (params.get("constraints") or {}).get("phids") or []
        return {
            "data": [{"phid": p, "fields": {"username": p.rsplit("-", 1)[-1]}} for p in phids],
            "cursor": {"after": None},
        }

    def _m_differential_revision_search(self, params: dict[str, Any]) -> dict[str, Any]:
        constraints = params.get("constraints") or {}
        ids = list(constraints.get("ids") or [])
        ids += [int(p.rsplit("-", 1)[1]) for p in constraints.get("phids") or []]  # PHID-DREV-n
        data = []
        for rid in ids:
            rev = self.revisions.get(int(rid))
            if rev:
                data.append(
                    {
                        "id": rev.id,
                        "phid": rev.phid,
                        "type": "DREV",
                        "fields": {
                            "title": rev.title,
                            "summary": rev.summary,
                            "authorPHID": rev.author_phid,
                            "uri": f"{self.url}/D{rev.id}",
                            "diffPHID": f"PHID-DIFF-{max(rev.diffs)}",
                            "status": {"value": "needs-review"},
                        },
                    }
                )
        return {"data": data, "cursor": {"after": None}}

    def _m_differential_querydiffs(self, params: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for rev in self.revisions.values():
            for did, changes in rev.diffs.items():
                if did in (params.get("ids") or []) or rev.id in (params.get("revisionIDs") or []):
                    out[str(did)] = {
                        "id": str(did),
                        "revisionID": str(rev.id),
                        "sourceControlBaseRevision": rev.base,
                        "changes": [
                            {"id": str(self.changeset_id(did, n)), **c}
                            for n, c in enumerate(changes)
                        ],
                    }
        return out

    @staticmethod
    def changeset_id(diff_id: int, index: int) -> int:
        return diff_id * 100 + index + 1

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
        inline = {
            "id": len(self.inlines) + 1,
            "revisionID": rev_id,
            "diffID": diff_id,
            "authorPHID": BOT_PHID,
            "draft": True,
            **{k: params[k] for k in ("filePath", "isNewFile", "lineNumber", "content")},
            "lineLength": params.get("lineLength", 0),
        }
        self.inlines.append(inline)
        return {"id": inline["id"], "filePath": path, "isDraft": True}

    def _m_nova_differential_publish(self, params: dict[str, Any]) -> dict[str, Any]:
        rev_id = int(params["revisionID"])
        if rev_id not in self.revisions:
            raise ConduitFault("ERR-BAD-REVISION", "No such revision.")
        diff_id = int(params.get("diffID") or max(self.revisions[rev_id].diffs))
        paths = self._diff_paths(rev_id, diff_id)
        specs = params.get("inlines") or []
        for n, spec in enumerate(specs):  # every inline is checked before anything is written
            if spec.get("path") not in paths:
                raise ConduitFault(
                    "ERR-BAD-INLINE", f'inline {n}: no file "{spec.get("path")}" in diff {diff_id}.'
                )
            if not isinstance(spec.get("line"), int) or spec["line"] < 1:
                raise ConduitFault("ERR-BAD-INLINE", f'inline {n}: "line" must be >= 1.')
            if (spec["path"], spec["line"]) in self.refused_lines:
                raise ConduitFault(
                    "ERR-BAD-INLINE",
                    f"inline {n}: line {spec['line']} of "
                    f'"{spec["path"]}" is not in diff {diff_id}.',
                )
        if not specs and not (params.get("comment") or "").strip():
            raise ConduitFault("ERR-EMPTY", "Neither inline comments nor a comment.")
        discarded = self.drafts(rev_id) if params.get("discardDrafts") else []
        self.inlines = [i for i in self.inlines if i not in discarded]
        if params.get("comment"):
            self.timeline.append(
                {"revision": rev_id, "author": BOT_PHID, "text": params["comment"]}
            )
        for spec in specs:
            self.inlines.append(
                {
                    "id": len(self.inlines) + 1,
                    "revisionID": rev_id,
                    "diffID": diff_id,
                    "authorPHID": BOT_PHID,
                    "draft": False,
                    "filePath": spec["path"],
                    "isNewFile": spec.get("isNewFile", True),
                    "lineNumber": spec["line"],
                    "lineLength": spec.get("length", 0),
                    "content": spec["content"],
                }
            )
        return {
            "version": 2,
            "revisionID": rev_id,
            "diffID": diff_id,
            "published": len(specs),
            "discarded": len(discarded),
        }

    def _m_differential_createrawdiff(self, params: dict[str, Any]) -> dict[str, Any]:
        diff = params.get("diff") or ""
        if "diff --git" not in diff:
            raise ConduitFault("ERR-CONDUIT-CORE", "The diff is empty or not a diff.")
        did = 9000 + len(self.raw_diffs)
        self.raw_diffs[did] = diff
        return {
            "id": did,
            "phid": f"PHID-DIFF-{did}",
            "uri": f"{self.url}/differential/diff/{did}/",
        }

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
                self.timeline.append({"revision": rev_id, "author": BOT_PHID, "text": tx["value"]})
        return {"object": {"id": rev_id, "phid": f"PHID-DREV-{rev_id}"}, "transactions": []}

    def _m_transaction_search(self, params: dict[str, Any]) -> dict[str, Any]:
        rev_id = int(str(params.get("objectIdentifier", "")).lstrip("D") or 0)
        data = [
            {
                "id": n,
                "type": "comment",
                "authorPHID": t["author"],
                "comments": [{"content": {"raw": t["text"]}}],
            }
            for n, t in enumerate(self.timeline)
            if t["revision"] == rev_id
        ]
        data += [
            {
                "id": 1000 + i["id"],
                "type": "inline",
                "authorPHID": i["authorPHID"],
                "comments": [{"content": {"raw": i["content"]}}],
                "fields": {
                    "diff": {"id": i["diffID"]},
                    "path": i["filePath"],
                    "line": i["lineNumber"],
                    "length": i["lineLength"] + 1,
                },
            }
            for i in self.visible_inlines(rev_id)
        ]
        if self.newest_first:
            data.sort(key=lambda tx: -int(tx["id"]))
        return {"data": data, "cursor": {"after": None}}

    def _m_harbormaster_sendmessage(self, params: dict[str, Any]) -> dict[str, Any]:
        target = (
            params.get("buildTargetPHID")
            if self.legacy
            else (params.get("receiver") or params.get("buildTargetPHID"))
        )
        if self.legacy and "receiver" in params:
            raise ConduitFault("ERR-CONDUIT-CORE", 'Parameter "buildTargetPHID" is required.')
        if not target:
            raise ConduitFault("ERR-CONDUIT-CORE", 'Parameter "receiver" is required.')
        if params.get("type") not in ("pass", "fail", "work"):
            raise ConduitFault("ERR-CONDUIT-CORE", "Bad message type.")
        self.build_messages.setdefault(target, []).append(params)  # lint rows are appended
        status = self.targets.setdefault(target, "target/waiting")
        if self.daemons and status == "target/waiting" and params["type"] != "work":
            self.targets[target] = f"target/{'passed' if params['type'] == 'pass' else 'failed'}"
        return None

    def _m_harbormaster_target_search(self, params: dict[str, Any]) -> dict[str, Any]:
        phids = (params.get("constraints") or {}).get("phids") or list(self.targets)
        return {
            "data": [
                {"phid": p, "type": "HMBT", "fields": {"status": {"value": self.targets[p]}}}
                for p in phids
                if p in self.targets
            ],
            "cursor": {"after": None},
        }


class ConduitFault(Exception):
    def __init__(self, code: str, info: str) -> None:
        super().__init__(info)
        self.code = code
        self.info = info
