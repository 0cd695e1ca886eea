"""Callables that raise what a changed ``except`` names (``bot/testgen/raisers.py``): a
parameter that takes a callable gets a stand-in raising the exception the changed clause
catches, so the changed handling runs; no test of the project hands it one."""

from __future__ import annotations

import ast
from pathlib import Path

from bot.testgen.raisers import callable_params, raised_types, with_helpers
from bot.testgen.render import tidy
from tests.testgen.sample import caught, sample_testgen

RETRY = '''\
def retry(action, attempts=3):
    """``action()``'s value; a ValueError is tried again, ``attempts`` times in all."""
    last = None
    for _ in range(attempts):
        try:
            return action()
        except {caught} as exc:
            last = exc
    raise RuntimeError("gave up after %d tries" % attempts)
'''

TESTS = """\
from pkg.retry import retry


def test_retry_returns_the_value():
    assert retry(lambda: 5) == 5


def test_retry_gives_up():
    def flaky():
        raise ValueError("no")

    try:
        retry(flaky, attempts=2)
    except RuntimeError as exc:
        assert "2 tries" in str(exc)
"""


def _base() -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/retry.py": RETRY.format(caught="ValueError"),
        "tests/test_retry.py": TESTS,
    }


def test_a_callable_raising_the_newly_caught_type_catches_the_change(tmp_path) -> None:  # type: ignore[no-untyped-def]
    change = {"pkg/retry.py": RETRY.format(caught="(ValueError, KeyError)")}
    _, data = sample_testgen(tmp_path, _base(), change, "retry() also tries a KeyError again")
    claims = caught(data, "_raises_key_error")
    assert claims, (data["kept"], data["dropped"])
    # head gives up; the parent let the KeyError out
    assert any("KeyError" in str(c.get("parent")) for c in claims), claims
    # the proposed test file holds its helper
    patch = Path(data["patch"]).read_text()
    assert "+def _raises_key_error(*args, **kwargs):" in patch, patch


def test_an_except_clause_that_keeps_its_behaviour_claims_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # the same clause, its exception bound under another name: nothing behaves otherwise
    change = {"pkg/retry.py": RETRY.format(caught="ValueError").replace("exc", "error")}
    _, data = sample_testgen(tmp_path, _base(), change, "rename", exits=(0, 1, 4))
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]


def test_what_takes_a_callable_and_what_is_raised() -> None:
    source = (
        "def wait(*args, **kwargs):\n"
        "    return _poll(1, *args, **kwargs)\n"
        "def _poll(first, until, sleep=1, on_poll=None):\n"
        "    try:\n"
        "        return until()\n"
        "    except StopIteration:\n"
        "        return None\n"
    )
    tree = ast.parse(source)
    # ``*args`` handed on after one argument of its own: ``until`` is wait's first
    assert callable_params(tree, "wait") == [(0, "until"), (2, "on_poll")]
    assert callable_params(tree, "_poll") == [(1, "until"), (3, "on_poll")]
    assert raised_types(source, [6]) == ["StopIteration", "RuntimeError"]
    # a sibling and the base of a narrower clause; no type that needs arguments to build
    narrow = "try:\n    f()\nexcept (UnicodeDecodeError, KeyError):\n    pass\n"
    assert raised_types(narrow, [3]) == ["KeyError", "IndexError", "LookupError"]
    written = with_helpers("import pytest\n\n\ndef test_x():\n    f(_raises_key_error)\n")
    assert "def _raises_key_error(*args, **kwargs):\n    raise KeyError\n" in written
    ast.parse(written)
    # a helper whose tests were all dropped goes with them
    kept = tidy(with_helpers("import pytest\n\n\ndef test_x():\n    f(_raises_key_error)\n"))
    assert "_raises_" not in tidy(kept.replace("f(_raises_key_error)", "f(1)"))


POLLER = '''\
class Poller:
    """Polls a condition on a clock the caller brings."""

    def __init__(self, clock):
        self.clock = clock

    def until(self, condition, tries=3):
        for _ in range(tries):
            self.clock.tick()
            try:
                if condition():
                    return self.clock.now
            except {caught}:
                return None
        return -1
'''

POLLER_TESTS = """\
from pkg.poll import Poller


class FakeClock:
    def __init__(self):
        self.now = 0

    def tick(self):
        self.now += 1


def test_until_true():
    poller = Poller(FakeClock())
    assert poller.until(lambda: True) == 1


def test_until_never():
    poller = Poller(FakeClock())
    assert poller.until(lambda: False, tries=2) == -1
"""


def test_a_copy_of_the_projects_test_with_a_raising_callable_catches_the_change(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # the receiver needs the tests' own fake clock: only the project's test builds it
    base = {
        "pkg/__init__.py": "",
        "pkg/poll.py": POLLER.format(caught="ZeroDivisionError"),
        "tests/test_poll.py": POLLER_TESTS,
    }
    # the try block rewritten too (a changed line the project's tests run), the same
    # behaviour but for the clause
    head = POLLER.format(caught="(ZeroDivisionError, LookupError)").replace(
        "                if condition():\n",
        "                done = condition()\n                if done:\n",
    )
    change = {"pkg/poll.py": head}
    _, data = sample_testgen(tmp_path, base, change, "until() gives up on a LookupError too")
    amplified = [
        c
        for c in data["kept"]
        if c["evidence"].get("catches_change") and "_raises_" in str(c["evidence"].get("amplified"))
    ]
    assert amplified, (data["kept"], data["dropped"], data.get("notes"))
    patch = Path(data["patch"]).read_text()
    assert "+def _raises_lookup_error(*args, **kwargs):" in patch, patch
