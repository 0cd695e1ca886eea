"""Inputs from a table of cases a test module binds to a name at its top, given to
``parametrize``, with keywords spread from a dict of each row (``tables.py``): pqdm's
tests (0.1.0) give ``parametrize`` a module constant whose rows end in a dict of options
passed as ``**kwargs``; the differential generator read only a literal list written in
the mark, and refused a call with ``**``, so it replayed none of them.

- SIZE's tests give ``binary=True`` only through such a table; the release changes what
  a binary size says. The differential generator replays the rows and catches it.
- A change that keeps what every size says claims nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.testgen.inputs import inputs_from_tests
from tests.testgen.sample import caught, sample_testgen

SIZE = '''
def human(n, binary=False, digits=1):
    """A byte count for people: kB (powers of 1000) or KiB (of 1024)."""
    base = 1024 if binary else 1000
    units = ["KiB", "MiB"] if binary else ["kB", "MB"]
    value, unit = n / base, units[0]
    if value >= base:
        value, unit = value / base, units[1]
    return f"{value:.{digits}f} {unit}"
'''

SIZE_CHANGED = SIZE.replace('["KiB", "MiB"]', '["KB", "MB"]')
SIZE_SAME = SIZE.replace(
    "value, unit = n / base, units[0]", "unit = units[0]\n    value = n / base"
)

TESTS = """
import pytest

from sizes.human import human

CASES = [
    (1024, {"binary": True}, "1.0 KiB"),
    (2048, {"binary": True, "digits": 2}, "2.00 KiB"),
]


@pytest.mark.parametrize("n, options, expected", CASES)
def test_human(n, options, expected):
    assert human(n, **options) == expected
"""


def _project(tmp: Path, change: str, message: str) -> dict[str, Any]:
    return sample_testgen(
        tmp,
        {"sizes/__init__.py": "", "sizes/human.py": SIZE, "tests/test_human.py": TESTS},
        {"sizes/human.py": change},
        message,
        exits=(0, 1, 4),
    )[1]


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _project(tmp_path_factory.mktemp("changed"), SIZE_CHANGED, "KB for binary sizes")


def test_rows_of_a_module_table_with_spread_options_are_replayed_and_catch(
    changed: dict[str, Any],
) -> None:
    found = caught(changed, "binary=True")
    assert found, changed["notes"]
    assert all("KB" in f["head"] and "KiB" in f["parent"] for f in found), found


@pytest.fixture(scope="module")
def same(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _project(tmp_path_factory.mktemp("same"), SIZE_SAME, "two statements")


def test_a_change_that_keeps_every_size_claims_nothing(same: dict[str, Any]) -> None:
    assert not [c for c in same["kept"] if c["evidence"].get("catches_change")], same["kept"]


def test_what_is_spread_and_what_is_not() -> None:
    source = TESTS + (
        "\nOPTS = {'digits': 3}\nODD = {1: 2}\n\n"
        "def test_more(options):\n"
        "    human(5, **OPTS)\n"
        "    human(6, **ODD)\n"
        "    human(7, **options)\n"
    )
    found = inputs_from_tests({"tests/test_human.py": source}, {"human"})["human"]
    calls = {(c.args, c.kwargs) for c in found}
    assert (("1024",), (("binary", "True"),)) in calls
    assert (("2048",), (("binary", "True"), ("digits", "2"))) in calls
    assert (("5",), (("digits", "3"),)) in calls
    # keys that are no names, and a dict the test does not write, are not replayed
    assert not any(c.args in (("6",), ("7",)) for c in found)
