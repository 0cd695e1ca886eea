"""A kept test that fails on the parent only because an object lacks an attribute is no
claim of a changed behaviour (``gates.attribute_missing``): the attribute may be a name
the change brought (``self.history``, set by head's ``__init__`` alone), which an outside
judge reading the parent's exception counts as a missing name, as the bench's re-run
does. Before, such tests were claimed as catches: blind set 17's "before" run counted two
false claims of this kind. A built-in value lacking one (``None.group``: the parent
returned None) is still a behaviour, and claimed."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.gates import attribute_missing, names_missing
from tests.testgen.sample import sample_testgen

METER = """
class Meter:
    def __init__(self, start=0):
        self.value = start

    def bump(self, step=1):
        self.value += step
        return self.value
"""

BASE = {
    "meter/__init__.py": METER,
    "tests/test_meter.py": (
        "from meter import Meter\n\n\ndef test_bump():\n    m = Meter(3)\n"
        "    assert m.bump(2) == 5\n"
    ),
}


def _claimed(data: dict) -> list[dict]:
    return [c for c in data["kept"] if c["evidence"].get("catches_change")]


def test_a_test_the_parent_fails_for_a_new_attribute_is_kept_and_not_claimed(
    tmp_path: Path,
) -> None:
    history = METER.replace(
        "        self.value = start\n",
        "        self.value = start\n        self.history = [start]\n",
    ).replace(
        "        self.value += step\n",
        "        self.value += step\n        self.history.append(self.value)\n",
    )
    _, data = sample_testgen(tmp_path, BASE, {"meter/__init__.py": history}, "history")
    unclaimed = [c for c in data["kept"] if c["evidence"].get("unclaimed")]
    # the instance's new attribute is pinned (head's state), and the parent fails on it
    assert unclaimed, data["kept"]
    for c in unclaimed:
        assert "has no attribute 'history'" in c["evidence"]["parent_failure"], c
        assert c["evidence"]["fails_on_parent"] and not c["evidence"]["new_name"]
    assert not _claimed(data), _claimed(data)
    assert data["stats"]["catching"] == 0


def test_a_changed_value_on_the_same_object_is_still_claimed(tmp_path: Path) -> None:
    double = METER.replace("self.value += step\n", "self.value += 2 * step\n")
    _, data = sample_testgen(tmp_path, BASE, {"meter/__init__.py": double}, "double")
    claimed = _claimed(data)
    assert claimed, data["kept"]
    assert not any(c["evidence"].get("unclaimed") for c in claimed)


def test_which_failures_are_an_attribute_the_parent_lacks() -> None:
    assert attribute_missing("AttributeError: 'Meter' object has no attribute 'history'")
    # as the pattern a test expected to raise says it
    assert attribute_missing(
        "AssertionError: Regex pattern did not match. Expected regex: \"'DiffParser' object "
        "has no attribute '_handle_ode'\" Actual message: \"'DiffParser' object has no "
        "attribute '_handle_ode text'\""
    )
    # a value of a built-in type the parent returned instead (None): a behaviour, claimed
    assert not attribute_missing("AttributeError: 'NoneType' object has no attribute 'group'")
    assert not attribute_missing("AttributeError: 'str' object has no attribute 'decode'")
    assert not attribute_missing("AssertionError: assert 6 == 5")
    assert not attribute_missing("TypeError: unsupported operand type(s)")
    # a module's or a class's attribute is a name outright (names_missing), not this
    assert not attribute_missing("AttributeError: module 'meter' has no attribute 'Gauge'")
    assert names_missing("AttributeError: module 'meter' has no attribute 'Gauge'")
