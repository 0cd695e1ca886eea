"""An amplified parametrized case whose arguments have no source form (a schema object,
an instance of the test module's class) is bound to their expressions in the mark's own
list of cases, found by the case's place there."""

from __future__ import annotations

from typing import Any

from bot.testgen.amplify import Difference, amplified_module, amplified_test

OBJECTS = """
import pytest

from geo.shapes import Square, area


class Doubled(Square):
    pass


@pytest.mark.parametrize(
    "shape, expected",
    [
        (Square(2), 4),
        pytest.param(Doubled(-3), 9, id="negative"),
    ],
)
def test_area(shape, expected):
    got = area(shape)
    assert got in (expected, 0)


@pytest.mark.parametrize("shape", [Square(5), Doubled(1)])
def test_positive(shape):
    assert area(shape) > 0
"""


def _line(text: str) -> int:
    return OBJECTS.splitlines().index(text) + 1


def _diff(node: str, line: int, params: dict[str, Any], indices: dict[str, int]) -> Difference:
    d = Difference(
        node,
        line=line,
        name="area",
        index=0,
        head={"kind": "value", "value": "0", "imports": []},
        parent={"kind": "value", "value": "9", "imports": []},
        params=params,
    )
    d.indices = indices
    return d


def test_an_argument_without_a_source_form_is_bound_to_its_case_expression() -> None:
    d = _diff(
        "tests/test_area.py::test_area[negative]",
        _line("    got = area(shape)"),
        {"shape": None, "expected": ["9", []]},
        {"shape": 1, "expected": 1},
    )
    written = amplified_test(OBJECTS, d)
    assert not isinstance(written, str), written
    text = amplified_module(OBJECTS, [(["test_area"], written)])
    assert "    shape = Doubled(-3)\n    expected = 9\n" in text
    assert "class Doubled(Square):" in text  # the module's own class the case builds
    assert text.rstrip().endswith("assert got == 0")


def test_a_single_name_mark_gives_the_item_itself() -> None:
    d = _diff(
        "tests/test_area.py::test_positive[shape1]",
        _line("    assert area(shape) > 0"),
        {"shape": None},
        {"shape": 1},
    )
    written = amplified_test(OBJECTS, d)
    assert not isinstance(written, str), written
    text = amplified_module(OBJECTS, [(["test_positive"], written)])
    assert "    shape = Doubled(1)\n" in text


def test_without_the_cases_place_it_still_says_why_it_is_not_written() -> None:
    params = {"shape": None, "expected": ["9", []]}
    node, line = "tests/test_area.py::test_area[negative]", _line("    got = area(shape)")
    d = _diff(node, line, params, {})
    assert amplified_test(OBJECTS, d) == "a parametrized case whose arguments have no source form"
    d = _diff(
        "tests/test_area.py::test_area[negative]",
        _line("    got = area(shape)"),
        params,
        {"shape": 7},
    )
    assert amplified_test(OBJECTS, d) == "a parametrized case whose arguments have no source form"
