"""Inputs from a table of cases a test module binds to a name at its top, given to
``parametrize``, with keywords spread from a dict of each row (``tables.py``): pqdm's
tests (0.1.0) give ``parametrize`` a module constant whose rows end in a dict of options
passed as ``**kwargs``; the differential generator read only a literal list written in
the mark, and refused a call with ``**``, so it replayed none of them.

- LABEL takes its options as ``**style``; its tests give a prefix only through such a
  table, and the release changes what a prefixed label says. The differential generator
  replays the rows and catches it.
- A change that keeps every label claims nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.testgen.inputs import inputs_from_tests
from tests.testgen.sample import caught, sample_testgen

LABEL = '''
def label(text, **style):
    """A label for a chart: the text, after a prefix and cut to a width when given."""
    prefix = style.get("prefix", "")
    width = style.get("width", 0)
    out = f"{prefix}{text}"
    return out[:width] if width else out
'''

LABEL_CHANGED = LABEL.replace('f"{prefix}{text}"', 'f"{prefix}: {text}" if prefix else text')
LABEL_SAME = LABEL.replace('f"{prefix}{text}"', '"{}{}".format(prefix, text)')

TESTS = """
import pytest

from charts.labels import label

CASES = [
    ("sales", {"prefix": "Q1 "}, "Q1 sales"),
    ("costs", {"prefix": "Q2 ", "width": 5}, "Q2 co"),
]


@pytest.mark.parametrize("text, style, expected", CASES)
def test_label(text, style, expected):
    assert label(text, **style) == expected
"""


def _project(tmp: Path, change: str, message: str) -> dict[str, Any]:
    return sample_testgen(
        tmp,
        {"charts/__init__.py": "", "charts/labels.py": LABEL, "tests/test_labels.py": TESTS},
        {"charts/labels.py": change},
        message,
        exits=(0, 1, 4),
    )[1]


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _project(tmp_path_factory.mktemp("changed"), LABEL_CHANGED, "a colon after the prefix")


def test_rows_of_a_module_table_with_spread_options_are_replayed_and_catch(
    changed: dict[str, Any],
) -> None:
    found = caught(changed, "prefix=")
    assert found, changed["notes"]
    assert all(": " in f["head"] and ": " not in f["parent"] for f in found), found


@pytest.fixture(scope="module")
def same(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _project(tmp_path_factory.mktemp("same"), LABEL_SAME, "concatenated")


def test_a_change_that_keeps_every_label_claims_nothing(same: dict[str, Any]) -> None:
    assert not [c for c in same["kept"] if c["evidence"].get("catches_change")], same["kept"]


def test_what_is_spread_and_what_is_not() -> None:
    source = TESTS + (
        "\nOPTS = {'width': 3}\nODD = {1: 2}\n\n"
        "def test_more(options):\n"
        "    label(5, **OPTS)\n"
        "    label(6, **ODD)\n"
        "    label(7, **options)\n"
    )
    found = inputs_from_tests({"tests/test_labels.py": source}, {"label"})["label"]
    calls = {(c.args, c.kwargs) for c in found}
    assert (("'sales'",), (("prefix", "'Q1 '"),)) in calls
    assert (("'costs'",), (("prefix", "'Q2 '"), ("width", "5"))) in calls
    assert (("5",), (("width", "3"),)) in calls
    # keys that are no names, and a dict the test does not write, are not replayed
    assert not any(c.args in (("6",), ("7",)) for c in found)
