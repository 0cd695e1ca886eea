"""Differential revisions from Phabricator / Phorge through Conduit.

``D123`` is the revision's latest diff, ``D123:4567`` a given diff. The ``Change`` is
built from ``differential.querydiffs`` hunks (the only method that returns them; every
number in them is a string), so new line numbers are exact. ``getrawdiff`` is not used:
it re-renders the diff and may reorder files.

python-phabricator is wrapped once, in ``conduit.py`` (``ConduitClient``). The session
also keeps each file's changeset ID (``changesets``): the publisher links a finding to its
line on the revision page with it (``/D123?id=<diff>#C<changeset>NL<line>``, the id
Differential gives the new-file line number cell).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.change import Change
from bot.diff.parse import decode_diff, parse_diff
from bot.errors import HostChangeNotFound, ServiceError, SourceError
from bot.hosts.base import TreeReader
from bot.hosts.phabricator.conduit import ConduitClient, parse_revision_ref

if TYPE_CHECKING:
    from bot.hosts.phabricator.conduit import RevisionState

__all__ = ["STAGING_REF", "PhabricatorSource"]
STAGING_REF = "refs/tags/phabricator/diff/{}"
# DifferentialChangeType / DifferentialChangeType file types
_ADD, _CHANGE, _DELETE, _MOVE_AWAY, _COPY_AWAY, _MOVE_HERE, _COPY_HERE, _MULTICOPY = range(1, 9)
_BINARY_FILE_TYPES = {2, 3}  # image, binary


def _num(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _change_text(change: dict[str, Any]) -> str | None:
    """One file of ``querydiffs`` as a git-style diff; None for the far side of a move."""
    kind, file_type = _num(change.get("type")), _num(change.get("fileType"))
    if kind in (_MOVE_AWAY, _COPY_AWAY, _MULTICOPY):
        return None  # the other half (MOVE_HERE / COPY_HERE) describes it
    new = change.get("currentPath") or change.get("oldPath") or ""
    old = change.get("oldPath") or new
    out = [f"diff --git a/{old} b/{new}"]
    if kind == _ADD:
        out.append("new file mode 100644")
    elif kind == _DELETE:
        out.append("deleted file mode 100644")
    elif kind in (_MOVE_HERE, _COPY_HERE) and old != new:
        verb = "rename" if kind == _MOVE_HERE else "copy"
        out += [f"{verb} from {old}", f"{verb} to {new}"]
    hunks = change.get("hunks") or []
    if file_type in _BINARY_FILE_TYPES:
        src = "/dev/null" if kind == _ADD else f"a/{old}"
        dst = "/dev/null" if kind == _DELETE else f"b/{new}"
        out.append(f"Binary files {src} and {dst} differ")
        return "\n".join(out)
    if not hunks:
        return "\n".join(out)
    out.append("--- /dev/null" if kind == _ADD else f"--- a/{old}")
    out.append("+++ /dev/null" if kind == _DELETE else f"+++ b/{new}")
    for h in hunks:
        out.append(
            f"@@ -{_num(h.get('oldOffset'))},{_num(h.get('oldLength'))} "
            f"+{_num(h.get('newOffset'))},{_num(h.get('newLength'))} @@"
        )
        corpus = str(h.get("corpus") or "")
        out.append(corpus[:-1] if corpus.endswith("\n") else corpus)
    return "\n".join(out)


class PhabricatorSource:
    name = "phabricator"

    def __init__(self, session: RevisionState) -> None:
        self.session = session

    @property
    def conduit(self) -> ConduitClient:
        return self.session.conduit

    def fetch(self, ref: str) -> Change:
        rev_id, wanted_diff = parse_revision_ref(ref)
        found = (
            self.conduit.call("differential.revision.search", constraints={"ids": [rev_id]}).get(
                "data"
            )
            or []
        )
        if not found:
            raise HostChangeNotFound(f"revision D{rev_id} not found (or the token cannot see it)")
        self.session.revision = found[0]
        fields = found[0].get("fields") or {}
        query: dict[str, Any] = {"ids": [wanted_diff]} if wanted_diff else {"revisionIDs": [rev_id]}
        diffs = self.conduit.call("differential.querydiffs", **query) or {}
        diffs = [d for d in diffs.values() if _num(d.get("revisionID")) == rev_id]
        if not diffs:
            which = f"diff {wanted_diff} of " if wanted_diff else "any diff of "
            raise HostChangeNotFound(f"{which}D{rev_id} not found")
        diff = max(diffs, key=lambda d: _num(d.get("id")))
        diff_id = self.session.diff_id = _num(diff.get("id"))
        self.session.changesets = {
            str(c.get("currentPath")): _num(c.get("id"))
            for c in diff.get("changes") or []
            if c.get("currentPath") and _num(c.get("id"))
        }
        parts = [t for t in (_change_text(c) for c in diff.get("changes") or []) if t]
        raw = decode_diff("\n".join(parts) + ("\n" if parts else ""))
        return Change(
            id=f"D{rev_id}",
            source="phabricator",
            title=fields.get("title", ""),
            description=fields.get("summary", ""),
            author=self._author(fields),
            base_ref=diff.get("sourceControlBaseRevision") or None,
            head_ref=STAGING_REF.format(diff_id),
            url=fields.get("uri"),
            files=tuple(parse_diff(raw)),
            raw_diff=raw,
        )

    def _author(self, fields: dict[str, Any]) -> str:
        phid = fields.get("authorPHID") or ""
        try:
            users = self.conduit.call("user.search", constraints={"phids": [phid]})
        except ServiceError:
            return phid
        data = (users or {}).get("data") or []
        return (data[0].get("fields") or {}).get("username", phid) if data else phid

    def tree(self, change: Change) -> TreeReader | None:
        """The CI checkout, when the build fetched the staging ref of this diff."""
        if self.session.repo_path is None or change.head_ref is None:
            return None
        from bot.hosts.git.source import GitSource

        source = GitSource(self.session.repo_path)
        try:
            commit = source.commit(change.head_ref)
        except SourceError:
            return None
        from bot.hosts.git.source import GitTree

        return GitTree(source.repo, commit.hexsha)

    def read_base(self, change: Change, path: str) -> bytes | None:
        """From the CI checkout, when it has the diff's base commit."""
        if self.session.repo_path is None or change.base_ref is None:
            return None
        from bot.hosts.git.source import GitSource

        return GitSource(self.session.repo_path).read_base(change, path)
