"""Test amplification of a test whose values come from the global random generator, end
to end on small projects: the observation seeds ``random`` right before each test's body
(amplify_plugin), so a dealt hand is the same in every run and compared between the
sides; the amplified test seeds it the same way. Unseeded, every copy was unsteady and
dropped (python-louvain shuffles its nodes with the global state).

- DEAL (it reads the process id, so the differential generator, which seeds its calls
  too, compares none of its inputs): the release sorts each hand; the project's test
  checks only that no card is lost. The copy asserts head's hands after
  ``random.seed(0)`` and fails on the parent.
- A change that keeps what is dealt (a hand built another way) claims nothing.
- Seeding is written only where the test's body drew from the generator.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from bot.testgen.amplify_write import Difference, amplified_test
from tests.conftest import GitRepo
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

DEAL = """
import os
import random


def deal(cards, hands):
    pile = list(cards)
    random.shuffle(pile)
    if not os.getpid():  # the machine: no input of the differential generator is compared
        pile.reverse()
    return [pile[i::hands] for i in range(hands)]


def count(cards):
    return len(list(cards))
"""

DEAL_SORTED = DEAL.replace("[pile[i::hands] for", "[sorted(pile[i::hands]) for")
DEAL_SAME = DEAL.replace("[pile[i::hands] for i", "[pile[i : len(pile) : hands] for i")

TESTS = """
from cards.deal import count, deal


def test_no_card_is_lost():
    hands = deal(range(12), 3)
    assert sorted(c for h in hands for c in h) == list(range(12))


def test_count():
    assert count("abc") == 3
"""


def _cards(tmp: Path, change: str, message: str) -> tuple[GitRepo, dict[str, Any]]:
    return sample_testgen(
        tmp,
        {"cards/__init__.py": "", "cards/deal.py": DEAL, "tests/test_deal.py": TESTS},
        {"cards/deal.py": change},
        message,
        exits=(0, 1, 4),
    )


@pytest.fixture(scope="module")
def sorted_hands(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    return _cards(tmp_path_factory.mktemp("sorted"), DEAL_SORTED, "each hand comes sorted")


def test_a_test_that_draws_from_the_global_generator_is_amplified_seeded(
    sorted_hands: tuple[GitRepo, dict[str, Any]],
) -> None:
    repo, data = sorted_hands
    facts = amplified(data, "deal(")
    assert facts, data["notes"]
    kept = [c for c in data["kept"] if c["evidence"].get("amplified")]
    source = repo.git("show", f"{data['branch']}:{kept[0]['path']}")
    tree = ast.parse(source)
    test = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and n.name == kept[0]["name"].split("::")[-1]
    )
    assert ast.unparse(test.body[0]) == "random.seed(0)", source
    assert "import random" in source
    assert all(c["evidence"]["fails_on_parent"] for c in kept)


@pytest.fixture(scope="module")
def same_hands(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _cards(tmp_path_factory.mktemp("same"), DEAL_SAME, "slice with the length")[1]


def test_a_change_that_deals_the_same_claims_nothing(same_hands: dict[str, Any]) -> None:
    assert not [c for c in same_hands["kept"] if c["evidence"].get("catches_change")]


def _difference(seeded: tuple[str, ...]) -> Difference:
    return Difference(
        "tests/test_deal.py::test_no_card_is_lost",
        6,
        "deal",
        0,
        {"kind": "value", "value": "[[1], [2]]", "imports": []},
        {"kind": "value", "value": "[[2], [1]]"},
        seeded=seeded,
    )


def test_only_the_generators_the_test_drew_from_are_seeded() -> None:
    plain = amplified_test(TESTS, _difference(()))
    seeded = amplified_test(TESTS, _difference(("numpy", "random")))
    assert not isinstance(plain, str) and not isinstance(seeded, str)
    assert not any("seed" in line for line in plain.lines)
    body = [line.strip() for line in seeded.lines]
    at = body.index("def test_no_card_is_lost_changed():")
    assert body[at + 1 : at + 3] == ["random.seed(0)", "numpy.random.seed(0)"]
    assert {"import numpy", "import random"} <= set(seeded.imports)
