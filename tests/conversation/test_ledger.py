"""The ledger decides from plain data: who wrote what, where, and what the host says about
their permission. Pure functions, so properties hold for any conversation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.conversation.commands import mention_names
from bot.conversation.ledger import build_ledger
from bot.conversation.model import Authority, Note, Record, Thread, reply_marker

NAMES = mention_names("nova", "nova-bot")
FP = "0123456789abcdef"
ROOT = Note("1", "nova-bot", f"**error** bad\n\n<!-- nova:fp:{FP} -->", 1, bot=True, mine=True)
ADMINS = {"alice"}


def authority(login: str) -> Authority:
    return Authority(login in ADMINS, "admin" if login in ADMINS else "read", "admins")


def thread(*notes: Note) -> Thread:
    return Thread("T1", (ROOT, *notes), "pay.py", 3)


def test_an_allowed_dismissal_dismisses_the_finding() -> None:
    ledger = build_ledger(
        Record((thread(Note("2", "alice", "@nova dismiss nope", 2)),)), NAMES, authority
    )
    (decision,) = ledger.decisions
    assert decision.outcome == "dismissed" and ledger.dismissed[FP] is decision
    assert ledger.heard == 2 and ledger.dismissed_since(1) and not ledger.dismissed_since(2)


def test_what_is_never_a_command() -> None:
    notes = (
        Note("2", "alice", "@nova dismiss", 2, edited=True),  # edited afterwards
        Note("3", "dependabot", "@nova dismiss", 3, bot=True),  # a bot
        Note("4", "nova-bot", "@nova dismiss", 4, bot=True, mine=True),  # Nova itself
        Note("5", "alice", "> @nova dismiss", 5),  # a quote
    )
    ledger = build_ledger(Record((thread(*notes),)), NAMES, authority)
    assert ledger.decisions == [] and ledger.dismissed == {}


def test_a_forged_root_is_not_a_finding() -> None:
    forged = Thread("T2", (Note("9", "mallory", f"<!-- nova:fp:{FP} -->", 9),))
    ledger = build_ledger(
        Record((forged,), top=()), NAMES, authority
    )  # hosts list only Nova's threads; a forged one still has no fingerprint
    assert forged.fingerprint is None and ledger.dismissed == {}


def test_refused_misplaced_and_answered() -> None:
    asked: list[str] = []

    def counting(login: str) -> Authority:
        asked.append(login)
        return authority(login)

    notes = (
        Note("2", "bob", "@nova dismiss", 2),
        Note("3", "bob", "@nova ignore", 3),
        Note("4", "bob", "@nova why?", 4),
        Note("5", "nova-bot", "ok " + reply_marker("4"), 5, bot=True, mine=True),
    )
    top = (Note("6", "alice", "@nova dismiss everything", 6),)
    ledger = build_ledger(Record((thread(*notes),), top), NAMES, counting)
    assert [d.outcome for d in ledger.decisions] == ["refused", "refused", "asked", "misplaced"]
    assert asked == ["bob"]  # the host is asked once per person
    assert [d.note.id for d in ledger.pending()] == ["2", "3", "6"]
    assert ledger.dismissed == {}


people = st.sampled_from(["alice", "bob", "carol", "nova-bot", "dependabot"])
bodies = st.sampled_from(
    ["@nova dismiss x", "@nova why", "> @nova dismiss", "hello", "@nova review", "@nova help"]
)
notes_st = st.lists(st.tuples(people, bodies, st.booleans(), st.booleans()), max_size=12)


@given(notes_st)
def test_only_people_allowed_ever_dismiss(rows: list[tuple[str, str, bool, bool]]) -> None:
    notes = tuple(
        Note(
            str(n + 2),
            who,
            body,
            n + 2,
            edited=edited,
            bot=bot or who == "dependabot",
            mine=who == "nova-bot",
        )
        for n, (who, body, edited, bot) in enumerate(rows)
    )
    ledger = build_ledger(Record((thread(*notes),)), NAMES, authority)
    for d in ledger.decisions:
        assert not (d.note.bot or d.note.edited or d.note.mine)
    if FP in ledger.dismissed:
        d = ledger.dismissed[FP]
        assert d.note.author in ADMINS and "dismiss" in d.note.body
        assert not d.note.body.startswith(">")
    allowed = [
        n
        for n in notes
        if n.author in ADMINS and not (n.bot or n.edited) and n.body == "@nova dismiss x"
    ]
    assert (FP in ledger.dismissed) == bool(allowed)
