"""Randomness made repeatable (issue 35): the side-runner seeds the global generators
right before every call, on head and on parent alike (``seeded.py``), so a function that
draws from the ``random`` module (or from a generator it seeds itself) comes out the same
in every run and is compared; its written test seeds the same way before the call. A
parameter named like a seed that defaults to None is also given a small integer. A
generator seeded from entropy, ``secrets`` or a seed taken from the clock stays unsteady
and claims nothing. A real sample project (a git repository in tmp, its own virtualenv,
real pytest and coverage subprocesses) whose release sorts the hands it deals, cuts one
card further and makes tokens of other letters; and the probe's calls on functions that
draw."""

from __future__ import annotations

import random
import secrets
import sys
import time
from typing import Any

import pytest

from bot.testgen import probe, seeded
from bot.testgen.inputs import Candidate
from bot.testgen.probe_objects import Named
from bot.testgen.retype import called_def
from tests.testgen.sample import caught, sample_testgen

DECK = '''import random
import secrets
import sys
import time


def deal(cards, hands=2):
    """The cards shuffled, then dealt one at a time to each hand."""
    pile = list(cards)
    random.shuffle(pile)
    return [pile[i::hands] for i in range(hands)]


def cut(cards, seed=None):
    """The cards cut at a place drawn by a generator of their own seed."""
    rng = random.Random(seed)
    at = rng.randrange(1, len(cards))
    return cards[at:] + cards[:at]


def token(size=6):
    """Letters from a generator seeded from entropy."""
    rng = random.Random()
    return "".join(rng.choice("abcdef") for _ in range(size))


def ticket(size=6):
    """Letters from the global generator seeded again from entropy."""
    random.seed()
    return "".join(random.choice("abcdef") for _ in range(size))


def stamp(size=6):
    """Letters from a generator seeded with the time."""
    rng = random.Random(time.time())
    return "".join(rng.choice("abcdef") for _ in range(size))


def secret(size=6):
    """Letters from the system's randomness."""
    return "".join(secrets.choice("abcdef") for _ in range(size))
'''
# head: each hand sorted; cut after the drawn place; other letters
DECK_NEW = (
    DECK.replace(
        "return [pile[i::hands] for i in range(hands)]",
        "return [sorted(pile[i::hands]) for i in range(hands)]",
    )
    .replace("rng.randrange(1, len(cards))", "rng.randrange(1, len(cards)) + 1")
    .replace('"abcdef"', '"uvwxyz"')
)
DECK_TESTS = """from deck.cards import cut, deal, secret, stamp, ticket, token


def test_deal():
    hands = deal(["2", "3", "4", "5", "6", "7"], 2)
    assert sorted(hands[0] + hands[1]) == ["2", "3", "4", "5", "6", "7"]


def test_cut():
    assert sorted(cut(["a", "b", "c", "d", "e"])) == ["a", "b", "c", "d", "e"]


def test_letters():
    for make in (token, ticket, stamp, secret):
        assert len(make(4)) == 4
"""


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("deck"),
        {"deck/__init__.py": "", "deck/cards.py": DECK, "tests/test_cards.py": DECK_TESTS},
        {"deck/cards.py": DECK_NEW},
        "hands sorted; cut one further; other letters",
    )


@pytest.mark.slow
def test_a_shuffle_of_the_global_generator_is_caught_seeded(
    deck: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = deck
    facts = caught(data, "deal(")
    assert facts, data["notes"]
    assert all(f["changed"] and "random.seed(0)" in f["call"] for f in facts), facts
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_deck_cards.py")
    assert "import random" in committed
    assert "    random.seed(0)\n" in committed, committed


@pytest.mark.slow
def test_a_generator_given_a_seed_as_input_is_caught(deck: tuple[Any, dict[str, Any]]) -> None:
    _, data = deck
    facts = caught(data, "cut(")
    assert facts, data["notes"]
    assert all("seed=" in f["call"] for f in facts), facts  # its default draws from entropy


@pytest.mark.slow
def test_entropy_secrets_and_the_clock_claim_nothing(deck: tuple[Any, dict[str, Any]]) -> None:
    _, data = deck
    for name in ("token(", "ticket(", "stamp(", "secret("):
        assert not caught(data, name), (name, data["kept"])
    notes = " ".join(n for n in data["notes"] if "deck/cards.py::token" in n)
    assert "non-deterministic" in notes, data["notes"]


def drawn(items: list[int]) -> list[int]:
    out = list(items)
    random.shuffle(out)
    return out


def own(seed: int | None = None) -> float:
    return random.Random(seed).random()


def from_entropy() -> float:
    return random.Random().random()


def reseeded() -> float:
    random.seed()
    return random.random()


def timed() -> float:
    return random.Random(time.time()).random()


def system() -> float:
    return random.SystemRandom().random()


def hexed() -> str:
    return secrets.token_hex(2)


_KEPT = random.Random(3)


def kept() -> float:
    """A generator made before the call: its state is the earlier calls' history."""
    return _KEPT.random()


def plain(x: int) -> int:
    return x + 1


def _call(func: Any, *args: object, **kwargs: object) -> dict[str, Any]:
    named = Named("function", None, func.__name__, func)
    out = probe.call(named, probe._Case(None, [], (list(args), kwargs), {}, "tests"), 1.0)
    return {**out, **seeded.drawn()}


def test_draws_of_the_global_generator_repeat_and_are_noted() -> None:
    first = _call(drawn, list(range(10)))
    assert first["kind"] == "value" and first["seeded"] == ["random"]
    assert _call(drawn, list(range(10))) == first
    random.seed(seeded.SEED)
    assert repr(drawn(list(range(10)))) == first["value"]  # what the written test does


def test_a_generator_the_call_seeds_with_a_value_repeats() -> None:
    out = _call(own, 5)
    assert out["kind"] == "value" and "seeded" not in out  # the global one is not drawn
    assert out["value"] == repr(random.Random(5).random())


def test_a_call_without_randomness_is_as_before() -> None:
    assert _call(plain, 1) == {"kind": "value", "value": "2", "imports": [], "ordered": True}


@pytest.mark.parametrize(
    ("func", "read"),
    [
        (from_entropy, "seeded from entropy"),
        (reseeded, "seeded from entropy"),
        (timed, "the clock"),
        (system, "randomness"),
        (hexed, "secrets"),
        (kept, "randomness"),
        (own, "seeded from entropy"),  # seed=None
    ],
)
def test_entropy_the_clock_and_secrets_stay_unsteady(func: Any, read: str) -> None:
    out = _call(func)
    assert out["kind"] == "depends" and read in out["on"], out


def test_a_seed_parameter_defaulting_to_none_is_given_small_integers() -> None:
    source = "def cut(cards, seed=None, *, rng=None, flag=None):\n    pass\n"
    given = [Candidate(("[1, 2]",)), Candidate(("[1, 2]", "7"))]
    made = seeded.seed_inputs(given, source, "cut", called_def)
    shown = [(c.args, c.kwargs) for c in made]
    assert (("[1, 2]",), (("seed", "0"),)) in shown and (("[1, 2]",), (("seed", "1"),)) in shown
    given = [Candidate(("[1, 2]", "None"))]  # given in its place as None: replaced there
    assert [c.args for c in seeded.seed_inputs(given, source, "cut", called_def)][:2] == [
        ("[1, 2]", "0"),
        ("[1, 2]", "1"),
    ]
    assert (("[1, 2]",), (("rng", "0"),)) in shown
    assert (("[1, 2]", "7"), (("rng", "1"),)) in shown
    assert not any(c.args[1:] == ("7",) and c.kwargs == () for c in made)  # 7 is kept
    assert not any("flag" in dict(c.kwargs) for c in made)


def head(items: Any) -> object:
    return next(iter(items))


def test_an_argument_that_is_not_data_is_shown_as_written_unless_it_reads_now(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(probe, "RUN_SECONDS", [1e9])  # the run's budget counts from import
    module = sys.modules[__name__]
    spec = {
        "qualname": "head",
        "inputs": [
            {"args": ["iter([3, 4])"], "kwargs": {}, "imports": []},
            {"args": ["iter(time.localtime())"], "kwargs": {}, "imports": ["import time"]},
        ],
    }
    rows = probe.probe_function(module, spec, 1.0)["results"]
    assert [(r["args"], r["outcome"].get("value")) for r in rows] == [(["iter([3, 4])"], "3")]
