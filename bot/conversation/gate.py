"""What the conversation changes in a review: dismissed findings leave the gate, and Nova's
threads whose finding was fixed are found (pure functions over plain data)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.change import Comment, Placement
from bot.conversation.ledger import Ledger
from bot.conversation.model import Record, Thread
from bot.report.earlier import severities
from bot.report.fingerprint import fingerprint, line_ids, line_key
from bot.review.result import Dismissal, ReviewResult

__all__ = ["apply_dismissals", "fixed_threads", "standing_dismissals"]


def apply_dismissals(result: ReviewResult, ledger: Ledger) -> list[Dismissal]:
    """Move every placed finding whose thread holds an allowed dismissal from
    ``result.placements`` to ``result.dismissed``: listed, never posted again, not counted
    for ``--fail-on``. Returns the dismissals added."""
    dismissed = ledger.dismissed
    if not dismissed:
        return []
    ids = line_ids(result.change)
    keep, added = [], []
    for p in result.placements:
        fp = fingerprint(p, *ids.get((p.path, p.line), ("", 0))) if p.placed else None
        decision = dismissed.get(fp) if fp is not None else None
        if decision is None:
            keep.append(p)
            continue
        added.append(
            Dismissal(
                placement=p,
                kind="dismissed",
                by=decision.note.author,
                reason=decision.command.text,
                at=decision.note.at,
                fingerprint=fp or "",
            )
        )
    result.placements = keep
    result.dismissed += added
    return added


def fixed_threads(record: Record, result: ReviewResult, reported: Sequence[str]) -> list[Thread]:
    """Nova's open threads whose finding this review no longer reports (``reported``: the
    fingerprints it found, dismissed ones included) and whose line changed or left the
    change. A finding still standing on an untouched line stays open; a thread a person
    resolved is not touched."""
    current = {
        line_key(path or "", text, nth)
        for (path, _n), (text, nth) in line_ids(result.change).items()
    }
    found = set(reported)
    return [
        t
        for t in record.threads
        if t.fingerprint is not None
        and not t.resolved
        and t.fingerprint not in found
        and (t.line_key is None or t.line_key not in current)
    ]


def standing_dismissals(ledger: Ledger, result: ReviewResult) -> list[Dismissal]:
    """Dismissed findings this run did not see again (an incremental review) whose line is
    still in the change: listed in ``result.dismissed`` too, so the summary keeps naming
    them. Built from Nova's own comment (path, line, severity, its first line)."""
    seen = {d.fingerprint for d in result.dismissed}
    current = {
        line_key(path or "", text, nth)
        for (path, _n), (text, nth) in line_ids(result.change).items()
    }
    added = []
    for fp, decision in ledger.dismissed.items():
        thread = decision.thread
        if fp in seen or thread is None or thread.line_key not in current:
            continue
        text = thread.root.body.split("<!-- nova:", 1)[0].split("//nova:", 1)[0].strip()
        found = severities(text)
        comment = Comment(
            path=thread.path,
            line=thread.line,
            body=(text.splitlines() or [""])[0][:500],
            severity=found[0] if found else "warning",
        )
        placement = Placement(comment, thread.path, thread.line)
        added.append(
            Dismissal(
                placement,
                "dismissed",
                decision.note.author,
                decision.command.text,
                decision.note.at,
                fp,
            )
        )
    result.dismissed += added
    return added
