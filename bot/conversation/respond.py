"""Answering the conversation: each command once, each fixed thread resolved once.

"Once" holds across runs and across two runs at the same moment: every answer carries a
marker naming the comment it answers (``nova:re:<id>``). Before posting Nova re-reads the
conversation and skips a question already answered; after posting it reads again, and when
another run's answer with the same marker came first, it deletes its own. A reply whose
POST timed out may have landed: the re-read finds it instead of posting again.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field

from bot.change import Change
from bot.conversation.answers import fixed_text, reply_text
from bot.conversation.ledger import Decision, Ledger
from bot.conversation.model import (
    CannotDelete,
    Conversation,
    Note,
    Record,
    Thread,
    replied_to,
    reply_marker,
)
from bot.errors import NovaError
from bot.events import DecisionEvent, EventBus
from bot.steps import StepTracker

__all__ = ["Responder", "post_once"]


def _answers(record: Record, key: str) -> list[Note]:
    return sorted(
        (n for _t, n in record.all_notes() if n.mine and replied_to(n.body) == key),
        key=lambda n: n.seq,
    )


def post_once(
    conversation: Conversation, change: Change, thread: Thread | None, key: str, body: str
) -> bool:
    """Post ``body`` (marked as the answer to ``key``) unless an answer is there; True when
    this run's answer is the one that stays."""
    if _answers(conversation.read(change), key):
        return False
    text = f"{body}\n\n{reply_marker(key)}"
    try:
        note: Note | None = conversation.reply(thread, text)
    except NovaError:
        note = None  # it may have landed all the same: the re-read tells
    landed = _answers(conversation.read(change), key)
    if note is None:
        if not landed:
            raise NovaError(f"posting the answer to comment {key} failed")
        return False
    if landed and landed[0].id != note.id and any(n.id == note.id for n in landed):
        with suppress(CannotDelete):  # Phorge cannot remove a comment: the twin stays
            conversation.delete(note)  # another run answered first: one answer stays
        return False
    return True


def _thumbs(thread: Thread | None) -> dict[str, int]:
    """👍 / 👎 on Nova's comment that opened the thread (none on a person's thread)."""
    return thread.root.thumbs if thread is not None and thread.root.mine else {}


@dataclass
class Responder:
    """Answers pending commands and resolves fixed threads on one change, as events and a
    Task Manager step (the host conversation is human-in-the-loop's second handler)."""

    conversation: Conversation
    change: Change
    host: str
    handle: str
    bus: EventBus
    tracker: StepTracker
    ask: Callable[[Decision], str]  # the answer to a question (a model, or the docs)
    posted: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    already_reviewed: bool = False  # this head was reviewed before (a skipped re-run)

    def _event(self, d: Decision, posted: bool) -> None:
        self.bus.emit(
            DecisionEvent(
                handler=self.host,
                actor=d.note.author,
                action=d.command.kind,
                outcome=d.outcome,
                finding=d.fingerprint or "",
                allowed=d.outcome not in ("refused", "refused-ask"),
                detail=("answered" if posted else "already answered") + f" comment {d.note.id}",
                reactions=_thumbs(d.thread),
            )
        )

    def answer(self, decisions: list[Decision]) -> None:
        """Post one answer to each of ``decisions`` not answered yet."""
        if not decisions:
            return
        with self.tracker.step("respond") as step:
            for d in decisions:
                if d.outcome == "held":
                    continue  # a question past a limit that was already told: it waits
                try:
                    body = self.ask(d) if d.outcome == "asked" else self._text(d)
                    posted = post_once(self.conversation, self.change, d.thread, d.note.id, body)
                except NovaError as exc:
                    self.errors.append(f"answering comment {d.note.id}: {exc}")
                    continue
                self.posted += posted
                self._event(d, posted)
            step.note(f"{len(decisions)} command(s), {self.posted} answer(s) posted")

    def _text(self, d: Decision) -> str:
        return reply_text(d, self.handle, self.change.head_ref or "", self.already_reviewed)

    def resolve(self, threads: list[Thread]) -> int:
        """Reply "fixed in <head>" once in each thread and resolve it."""
        if not threads:
            return 0
        head = self.change.head_ref or ""
        done = 0
        with self.tracker.step("resolve-fixed") as step:
            for t in threads:
                try:  # a nicety, not the gate: a token that may not resolve is a note
                    post_once(
                        self.conversation, self.change, t, f"fixed-{t.root.id}", fixed_text(head)
                    )
                    self.conversation.resolve(t)
                except NovaError as exc:
                    self.notes.append(f"could not resolve the thread on {t.path}:{t.line}: {exc}")
                    continue
                done += 1
                self.bus.emit(
                    DecisionEvent(
                        handler=self.host,
                        actor="nova",
                        action="resolve",
                        outcome="fixed",
                        finding=t.fingerprint or "",
                        detail=f"fixed in {head[:12]}",
                        reactions=_thumbs(t),
                    )
                )
            step.note(f"{done} thread(s) resolved as fixed")
        return done


def pending(ledger: Ledger, only: str | None = None) -> list[Decision]:
    found = ledger.pending()
    return [d for d in found if d.note.id == only] if only is not None else found
