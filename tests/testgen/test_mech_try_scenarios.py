"""An instance a test builds inside ``try:`` (its ``finally:`` removing a file the test
wrote) starts a scenario like one built at the top of the test: the steps on it in the
``try`` body, then its ``else`` and ``finally`` blocks, are replayed in order
(``scenarios._walk_body``). sshconf's ``add`` is used only in such a test
(``c = empty_ssh_config_file(); c.add(...)`` inside ``try``), blind set 16 C."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.scenarios import OBJ, scenarios_from_tests
from tests.testgen.sample import caught, sample_testgen

TALLY = '''
class Tally:
    """Counts what it is given, once per item."""

    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)

    def total(self):
        return len(self.items)


def new_tally():
    """A tally with nothing in it."""
    return Tally()
'''

TESTS = """
import os
import tempfile

from tally.core import new_tally


def test_a_tally_counts_what_it_is_given():
    fd, path = tempfile.mkstemp()
    os.close(fd)
    try:
        tally = new_tally()
        tally.add("apple")
        tally.add("apple")
        assert tally.total() == 2
    finally:
        os.remove(path)
"""

BASE = {
    "tally/__init__.py": "",
    "tally/core.py": TALLY,
    "tests/test_core.py": TESTS,
}


def test_a_scenario_inside_try_catches_the_change(tmp_path: Path) -> None:
    once = TALLY.replace(
        "        self.items.append(item)\n",
        "        if item not in self.items:\n            self.items.append(item)\n",
    )
    _, data = sample_testgen(tmp_path, BASE, {"tally/core.py": once}, "count once")
    # the second add, after the first one the test took: only the try body holds it
    found = caught(data, "tally.add('apple'); tally.add('apple')")
    assert found, data["notes"]
    assert all("['apple']" in f["head"] for f in found), found


def test_a_change_that_keeps_behaviour_claims_nothing(tmp_path: Path) -> None:
    same = TALLY.replace("self.items.append(item)", "self.items += [item]")
    _, data = sample_testgen(tmp_path, BASE, {"tally/core.py": same}, "same", (0, 1, 4))
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]


def test_the_steps_in_try_else_and_finally_are_read_in_order() -> None:
    tests = """
from tally.core import Tally


def test_steps():
    try:
        tally = Tally()
        tally.add("a")
    except ValueError:
        tally = None
    else:
        tally.add("b")
    finally:
        tally.add("c")
"""
    found = scenarios_from_tests({"tests/test_t.py": tests}, "Tally", "add")
    assert [(c.args, c.steps) for c in found] == [
        (("'a'",), ()),
        (("'b'",), (f"{OBJ}.add('a')",)),
        (("'c'",), (f"{OBJ}.add('a')", f"{OBJ}.add('b')")),
    ]
