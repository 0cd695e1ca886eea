"""Questions have an owner and a budget: who may ask (``NOVA_QUESTIONS_FROM``), and how
many answers an hour one change and one person get (``NOVA_ANSWERS_PER_HOUR``,
``NOVA_ANSWERS_PER_PERSON_PER_HOUR``). Each answer is a model call anyone could otherwise
make Nova spend.

Counted from the host's threads, like everything Nova remembers: Nova's answers carry the
id of the comment they answer, and the host dates them. The hour ends at the newest comment
the host shows (the host's clock, not this machine's). Past a limit, ONE short reply says
so (once an hour for the change, once an hour for a person) and the other questions wait,
unanswered, for a later run; a person who may not ask gets one reply, ever, naming who may.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from bot.conversation.ledger import Decision
from bot.conversation.model import Note, Record, replied_to
from bot.conversation.settings import QuestionSettings

__all__ = ["ASK_REFUSED", "CHANGE_LIMIT", "PERSON_LIMIT", "ration"]

# the first words of Nova's replies that are not answers (how later runs tell them apart)
ASK_REFUSED = "Nova answers questions here from"
CHANGE_LIMIT = "Nova has answered"
PERSON_LIMIT = "Nova has answered your"
_HOUR = timedelta(hours=1)


def _when(at: str) -> datetime | None:
    try:
        return datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass
class _Tally:
    """What Nova said in the last hour (and ever, for refusals), from the record."""

    answers: int = 0
    by: Counter[str] = field(default_factory=Counter)
    change_told: bool = False
    told: set[str] = field(default_factory=set)  # people told of their limit this hour
    refused: set[str] = field(default_factory=set)  # people told who may ask


def _tally(record: Record, questions: dict[str, Decision]) -> _Tally:
    notes = [n for _t, n in record.all_notes()]
    times = [t for t in (_when(n.at) for n in notes) if t is not None]
    since = max(times) - _HOUR if times else None
    tally = _Tally()
    for note in notes:
        asked = questions.get(replied_to(note.body) or "") if note.mine else None
        if asked is None:
            continue
        who = asked.note.author
        if note.body.startswith(ASK_REFUSED):
            tally.refused.add(who)
            continue
        when = _when(note.at)
        if since is not None and when is not None and when < since:
            continue  # an unknown time counts: the limit errs on the side of spending less
        if note.body.startswith(PERSON_LIMIT):
            tally.told.add(who)
        elif note.body.startswith(CHANGE_LIMIT):
            tally.change_told = True
        else:
            tally.answers += 1
            tally.by[who] += 1
    return tally


def _notice(d: Decision, outcome: str, detail: str) -> Decision:
    return replace(d, outcome=outcome, who_may=detail)  # type: ignore[arg-type]


def ration(
    decisions: list[Decision],
    record: Record,
    every: list[Decision],
    settings: QuestionSettings,
    may_ask: Callable[[Note], tuple[bool | None, str]],
) -> list[Decision]:
    """``decisions`` (pending, oldest first) with each question either kept (to be
    answered), turned into one notice (``refused-ask``, ``limited``) or ``held`` (no
    reply now). ``every``: all decisions of the ledger, answered ones included;
    ``may_ask(note)``: (allowed — None when the host could not say —, who may ask)."""
    questions = {d.note.id: d for d in every if d.outcome == "asked"}
    tally = _tally(record, questions)
    out = []
    for d in decisions:
        if d.outcome != "asked":
            out.append(d)
            continue
        who = d.note.author
        allowed, who_may = may_ask(d.note)
        if allowed is None:
            out.append(_notice(d, "held", ""))  # asked again on the next run
        elif not allowed:
            first = who not in tally.refused
            tally.refused.add(who)
            out.append(_notice(d, "refused-ask", who_may) if first else _notice(d, "held", ""))
        elif tally.answers >= settings.per_change:
            first, tally.change_told = not tally.change_told, True
            limit = f"{settings.per_change} on this change"
            out.append(_notice(d, "limited", limit) if first else _notice(d, "held", ""))
        elif tally.by[who] >= settings.per_person:
            first = who not in tally.told
            tally.told.add(who)
            limit = f"{settings.per_person} for each person"
            out.append(_notice(d, "limited-person", limit) if first else _notice(d, "held", ""))
        else:
            tally.answers += 1
            tally.by[who] += 1
            out.append(d)
    return out
