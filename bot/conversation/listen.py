"""The conversation in a run of ``nova review`` or ``nova respond``: read once, decide once.

``Listening.open`` reads the host's threads and builds the ledger; ``stale`` tells the re-run
guard that a dismissal came after the verdict it would exit by; ``apply`` takes dismissed
findings out of the gate; ``finish`` answers every command not answered yet and, after a
review of a new head, resolves the threads whose finding was fixed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from bot.change import Change
from bot.config import Settings
from bot.conversation.answers import no_model_answer
from bot.conversation.commands import mention_names
from bot.conversation.gate import apply_dismissals, fixed_threads, standing_dismissals
from bot.conversation.ledger import Decision, Ledger, build_ledger
from bot.conversation.model import (
    Authority,
    Conversation,
    ConversationHost,
    FindingAuthority,
    Note,
    Record,
)
from bot.conversation.questions import ration
from bot.conversation.respond import Responder, pending
from bot.errors import ModelError, NovaError
from bot.events import EventBus
from bot.hosts.base import (
    HostSession,
    Publisher,
    RerunGuard,
    ReviewHistory,
    Source,
    TreeReader,
)
from bot.report.fingerprint import group_findings, line_ids
from bot.review.result import PriorReview, ReviewResult
from bot.steps import StepTracker

__all__ = ["Listening", "conversation_of", "listen_for_review"]


class ReviewJob(Protocol):
    """What this module needs of ``bot.review.pipeline.ReviewJob`` (no import back)."""

    settings: Settings
    session: HostSession
    bus: EventBus
    tracker: StepTracker
    full: bool
    listening: Listening | None

    @property
    def source(self) -> Source: ...


def conversation_of(session: HostSession) -> Conversation | None:
    """The host's conversation, when the host listens."""
    if not isinstance(session, ConversationHost):
        return None
    conversation = session.conversation()
    return conversation if isinstance(conversation, Conversation) else None


@dataclass
class Listening:
    conversation: Conversation
    change: Change
    record: Record
    ledger: Ledger
    settings: Settings
    host: str
    bus: EventBus
    tracker: StepTracker
    tree: TreeReader | None = None  # the head's files, for the code around a question
    responder: Responder = field(init=False)
    _may: dict[str, Authority] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.responder = Responder(
            self.conversation,
            self.change,
            self.host,
            self.settings.review.handle,
            self.bus,
            self.tracker,
            self.answer_question,
        )

    @classmethod
    def open(
        cls,
        session: HostSession,
        change: Change,
        settings: Settings,
        bus: EventBus,
        tracker: StepTracker,
    ) -> Listening | None:
        """Read the conversation (raises ``NovaError`` when the host fails)."""
        conversation = conversation_of(session)
        if conversation is None:
            return None
        with tracker.step("conversation") as step:
            record = conversation.read(change)
            names = mention_names(settings.review.handle, record.login)
            on_finding = (
                conversation.authority_on if isinstance(conversation, FindingAuthority) else None
            )
            ledger = build_ledger(record, names, conversation.authority, on_finding)
            step.note(
                f"{len(record.threads)} thread(s), {len(ledger.decisions)} command(s), "
                f"{len(ledger.dismissed)} finding(s) dismissed"
            )
        return cls(
            conversation, change, record, ledger, settings, session.source.name, bus, tracker
        )

    def may_ask(self, note: Note) -> tuple[bool | None, str]:
        """Whether Nova answers ``note``'s author's questions (``NOVA_QUESTIONS_FROM``), and
        who may ask, in words; None when the host could not say (the question waits)."""
        askers = self.settings.questions.askers
        if askers == "anyone":
            return True, "anyone"
        if askers == "author-and-mergers" and note.author == self.change.author:
            return True, ""
        if note.author not in self._may:
            try:
                self._may[note.author] = self.conversation.authority(note.author)
            except NovaError as exc:
                self.responder.errors.append(f"who may ask ({note.author}): {exc}")
                return None, ""
        granted = self._may[note.author]
        who = granted.who_may or "people who may merge"
        return granted.allowed, (
            f"the change's author and {who}" if askers == "author-and-mergers" else who
        )

    def answer_question(self, decision: Decision) -> str:
        if not self.settings.llm_enabled:
            return no_model_answer(decision.thread)
        from bot.conversation.ask import ask_model

        try:
            return ask_model(
                self.settings.llm, self.responder.bus, self.change, decision, self.tree
            )
        except ModelError as exc:
            self.responder.errors.append(f"the model could not answer: {exc}")
            return no_model_answer(decision.thread)

    def stale(self, prior: PriorReview) -> bool:
        """A dismissal came after the review ``prior`` recorded: its verdict is out of date."""
        return self.ledger.dismissed_since(prior.heard)

    def dismissed_since_last_review(self, change: Change, publishers: Sequence[Publisher]) -> bool:
        """On a new head: a dismissal came after the verdict of Nova's last review. That
        verdict still counts the finding, and an incremental review would carry it on: the
        whole change is reviewed instead (the finding is then found, and dismissed)."""
        if not self.ledger.dismissed:
            return False
        history = next((p for p in publishers if isinstance(p, ReviewHistory)), None)
        guard = next((p for p in publishers if isinstance(p, RerunGuard)), None)
        last = history.last_reviewed_head(change) if history is not None else None
        if guard is None or not last or last == change.head_ref:
            return False
        earlier = guard.prior_review(replace(change, head_ref=last))
        return earlier is None or self.stale(earlier)

    def apply(self, result: ReviewResult) -> None:
        apply_dismissals(result, self.ledger)
        standing_dismissals(self.ledger, result)
        result.heard = max(result.heard, self.ledger.heard)

    def finish(self, result: ReviewResult, *, reviewed: bool, only: str | None = None) -> None:
        """Answer what is pending; after a review, resolve the fixed threads."""
        self.responder.already_reviewed = result.prior is not None
        todo = pending(self.ledger, only)
        todo = ration(
            todo, self.record, self.ledger.decisions, self.settings.questions, self.may_ask
        )
        self.responder.answer(todo)
        if reviewed:
            reported = [fp for fp, _g in group_findings(result, line_ids(result.change))]
            reported += [d.fingerprint for d in result.dismissed if d.fingerprint]
            self.responder.resolve(fixed_threads(self.record, result, reported))
        result.errors += self.responder.errors
        result.notes += self.responder.notes
        self.responder.errors.clear()
        self.responder.notes.clear()


def listen_for_review(
    job: ReviewJob, result: ReviewResult, publishers: Sequence[Publisher], prior: PriorReview | None
) -> PriorReview | None:
    """Read the host's conversation for a review that publishes there. A dismissal newer
    than the verdict of a reviewed head makes the run review that head again (``None``); one
    newer than the last review of an earlier head makes it review the whole change."""
    if job.listening is None:  # (nova respond opens it before it runs a review)
        try:
            job.listening = Listening.open(
                job.session, result.change, job.settings, job.bus, job.tracker
            )
        except NovaError as exc:  # fails safe: nothing is dismissed, the gate is as posted
            result.notes.append(
                f"could not read the conversation ({exc}): no dismissal was applied and "
                "no comment answered in this run"
            )
            return prior
    listening = job.listening
    if listening is None:
        return prior
    listening.tree = job.source.tree(result.change)
    if prior is not None:
        if not listening.stale(prior):
            return prior
        result.notes.append("a finding was dismissed since the last review: reviewed again")
        return None
    try:
        whole = not job.full and listening.dismissed_since_last_review(result.change, publishers)
    except NovaError as exc:
        result.notes.append(f"could not read the last review ({exc}): reviewed incrementally")
        return None
    if whole:
        job.full = True
        result.notes.append(
            "a finding was dismissed since the last review: the whole change was reviewed"
        )
    return None
