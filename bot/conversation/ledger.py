"""The ledger: every command people gave Nova on one change, and what each decided.

Rebuilt from the host's threads on every run — the host is the record, Nova keeps no state of
its own. A comment counts as a command only when a person wrote it (not a bot, not Nova),
it was not edited (an edit could turn an old comment into a dismissal after the fact) and it
still exists; a dismissal counts only under one of Nova's own findings and only when the
host says its author may change the gate (``Conversation.authority``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from bot.conversation.commands import Command, parse_command
from bot.conversation.model import Authority, Note, Record, Thread, replied_to

__all__ = ["Decision", "Ledger", "build_ledger"]

Outcome = Literal[
    "dismissed",
    "refused",
    "misplaced",
    "asked",
    "review",
    "help",
    # a question, rationed (``bot.conversation.questions``): who may ask, the limits
    "refused-ask",
    "limited",
    "limited-person",
    "held",
]


@dataclass(frozen=True, slots=True)
class Decision:
    """One command and what Nova decided about it."""

    note: Note
    thread: Thread | None  # None: a top-level comment about the whole change
    command: Command
    outcome: Outcome
    role: str = ""  # the host's word on the author's permission (dismissals)
    who_may: str = ""

    @property
    def fingerprint(self) -> str | None:
        return self.thread.fingerprint if self.thread is not None else None


@dataclass(slots=True)
class Ledger:
    decisions: list[Decision] = field(default_factory=list)  # oldest first
    answered: set[str] = field(default_factory=set)  # comment ids Nova answered already
    heard: int = 0  # the newest dismissal (host order) this ledger took in

    @property
    def dismissed(self) -> dict[str, Decision]:
        """Finding fingerprint -> the first dismissal of it by someone allowed."""
        out: dict[str, Decision] = {}
        for d in self.decisions:
            fp = d.fingerprint
            if d.outcome == "dismissed" and fp is not None and fp not in out:
                out[fp] = d
        return out

    def pending(self) -> list[Decision]:
        """Commands Nova has not answered yet (by any run)."""
        return [d for d in self.decisions if d.note.id not in self.answered]

    def dismissed_since(self, seq: int) -> bool:
        """A dismissal newer than ``seq`` (the last one an earlier verdict took in)."""
        return any(d.outcome == "dismissed" and d.note.seq > seq for d in self.decisions)


def _is_command_note(note: Note) -> bool:
    return not (note.mine or note.bot or note.edited)


OnFinding = Callable[[str, Thread], Authority]


def build_ledger(
    record: Record,
    names: Iterable[str],
    authority: Callable[[str], Authority],
    on_finding: OnFinding | None = None,
) -> Ledger:
    """Decide every command in ``record``; ``authority`` is asked once per author, or
    ``on_finding`` once per author and finding where the host's answer depends on it."""
    wanted = tuple(names)
    ledger = Ledger()
    asked: dict[str, Authority] = {}
    notes = sorted(record.all_notes(), key=lambda tn: tn[1].seq)
    for thread, note in notes:
        if note.mine:
            target = replied_to(note.body)
            if target is not None:
                ledger.answered.add(target)
            continue
        if not _is_command_note(note):
            continue
        command = parse_command(note.body, wanted)
        if command is None:
            continue
        decision = _decide(thread, note, command, asked, authority, on_finding)
        ledger.decisions.append(decision)
        if decision.outcome == "dismissed":
            ledger.heard = max(ledger.heard, note.seq)
    return ledger


def _decide(
    thread: Thread | None,
    note: Note,
    command: Command,
    asked: dict[str, Authority],
    authority: Callable[[str], Authority],
    on_finding: OnFinding | None = None,
) -> Decision:
    if command.kind == "review":
        return Decision(note, thread, command, "review")
    if command.kind == "help":
        return Decision(note, thread, command, "help")
    if command.kind == "explain":
        return Decision(note, thread, command, "asked")
    if thread is None or thread.fingerprint is None:
        return Decision(note, thread, command, "misplaced")
    key = f"{note.author}\n{thread.id}" if on_finding is not None else note.author
    if key not in asked:
        asked[key] = (
            on_finding(note.author, thread) if on_finding is not None else authority(note.author)
        )
    granted = asked[key]
    outcome: Outcome = "dismissed" if granted.allowed else "refused"
    return Decision(note, thread, command, outcome, granted.role, granted.who_may)
