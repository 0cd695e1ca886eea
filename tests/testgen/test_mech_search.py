"""A change that shows on one input in hundreds (issue 35): the inner hash of a password
kept as bytes, so its leading zero byte is no longer dropped (srptools 1.0.1). Every
input of the project's tests, steered or drawn, agrees on both sides; the differential
generator then probes counted variants of the agreeing inputs' literals
(``search.variants``: ``'secret'`` -> ``'secret0'``, ``'secret1'``, ...) in runs of their
own, and one whose inner hash starts with a zero byte shows the change. A real sample
project (a git repository in tmp, its own virtualenv, real pytest and coverage
subprocesses) with that change, and a rewrite that keeps behaviour on every input (it
claims nothing); and the variants themselves."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.testgen.search import variants
from tests.testgen.sample import caught, sample_testgen

ACCOUNT = '''import hashlib


class Account:
    def __init__(self, user, password):
        self.user = user
        self.password = password

    def token(self, salt):
        """The salted hash of the account's inner hash, as hex."""
        inner = hashlib.sha1(f"{self.user}:{self.password}".encode()).digest()
        number = int.from_bytes(inner, "big")
        inner = number.to_bytes((number.bit_length() + 7) // 8, "big")
        return hashlib.sha1(salt + inner).hexdigest()
'''
ACCOUNT_NEW = ACCOUNT.replace(
    """        number = int.from_bytes(inner, "big")
        inner = number.to_bytes((number.bit_length() + 7) // 8, "big")
        return hashlib.sha1(salt + inner).hexdigest()
""",
    """        return hashlib.sha1(salt + bytes(inner)).hexdigest()  # every byte kept
""",
)
ACCOUNT_TESTS = """from keys.account import Account


def test_token():
    assert len(Account("alice", "secret").token(b"salt")) == 40
"""

DIGEST = '''import hashlib


def digest(text, salt):
    """The salted SHA-1 of a text, as hex."""
    return hashlib.sha1(salt + text.encode()).hexdigest()
'''
DIGEST_NEW = DIGEST.replace(
    "hashlib.sha1(salt + text.encode()).hexdigest()",
    'hashlib.new("sha1", salt + text.encode("utf-8")).hexdigest()',
)
DIGEST_TESTS = """from keys.digest import digest


def test_digest():
    assert len(digest("alice", b"salt")) == 40
"""


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = {
        "keys/__init__.py": "",
        "keys/account.py": ACCOUNT,
        "tests/test_account.py": ACCOUNT_TESTS,
        "keys/digest.py": DIGEST,
        "tests/test_digest.py": DIGEST_TESTS,
    }
    _, data = sample_testgen(
        tmp_path_factory.mktemp("keys"),
        base,
        {"keys/account.py": ACCOUNT_NEW, "keys/digest.py": DIGEST_NEW},
        "keep the inner hash's leading zero bytes; hashlib.new",
    )
    return data


@pytest.mark.slow
def test_a_change_one_input_in_hundreds_shows_is_caught_by_a_counted_variant(
    keys: dict[str, Any],
) -> None:
    notes = [n for n in keys["notes"] if "counted variants" in n]
    assert notes and "Account.token" in notes[0], keys["notes"]
    facts = caught(keys, ".token(")
    assert facts, keys["notes"]
    # the project's own input agrees on both sides: a counted one shows the change
    assert all(re.search(r"'(alice|secret)\d+'|b'salt\d+'", f["call"]) for f in facts), facts
    assert all(f["changed"] and not f.get("new_name") for f in facts), facts


@pytest.mark.slow
def test_a_rewrite_that_agrees_on_every_variant_claims_nothing(keys: dict[str, Any]) -> None:
    assert not caught(keys, "digest("), keys["kept"]
    notes = [n for n in keys["notes"] if "counted variants" in n]
    assert notes and "digest" in notes[0], keys["notes"]


def test_variants_count_each_literal_in_turn() -> None:
    item = {
        "args": ["b'salt'"],
        "kwargs": {"mode": "'fast'"},
        "imports": ["from keys.account import Account"],
        "ctor": {"args": ["'alice'", "None", "3"], "kwargs": {}},
        "steps": [],
        "origin": "tests",
    }
    out = variants([item], 10)
    assert len(out) == 10
    # four literals (None is not one): each counted once, then each a second time
    assert [v["args"][0] for v in out[:5]] == [
        "b'salt0'",
        "b'salt'",
        "b'salt'",
        "b'salt'",
        "b'salt1'",
    ]
    assert out[1]["kwargs"] == {"mode": "'fast0'"}
    assert out[2]["ctor"]["args"] == ["'alice0'", "None", "3"]
    assert out[3]["ctor"]["args"] == ["'alice'", "None", "4"]  # an integer steps up
    assert out[4]["ctor"]["args"] == ["'alice'", "None", "3"]
    assert out[7]["ctor"]["args"] == ["'alice'", "None", "5"]
    # the item itself is left as it was, and a variant ranks after the project's inputs
    assert item["ctor"] == {"args": ["'alice'", "None", "3"], "kwargs": {}}
    assert {v["origin"] for v in out} == {"typed"}
    # a bool, a long text and None are not counted; no literal: no variant
    assert variants([{"args": ["True", "None", repr("x" * 50)], "kwargs": {}}]) == []
