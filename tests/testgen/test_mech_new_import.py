"""A name new in the change that a written value shows does not make the whole test file
fail on the parent (issue 35). The release adds an enum (its tests are new names, and
its member renders as ``Marker.ONLY``, whose class joined the file's import line) and
changes what a function raises on ``None``. The file imported the enum at its top, so on
the parent it could not be loaded, and the behaviour test of the changed function was
counted a new name with the others: the catch was lost (voluptuous-serialize 2.7.0). The
new name is now imported where its absence fails only the tests that use it. A real
sample project (a git repository in tmp, its own virtualenv, real pytest and coverage
subprocesses), and the rendered file's imports."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from bot.testgen.render import Example, render_module
from tests.testgen.sample import caught, sample_testgen

SHAPES = '''def describe(value):
    """The name of a value's kind."""
    if issubclass(value, bool):
        return "flag"
    return type(value).__name__
'''
SHAPES_NEW = '''import enum


class Marker(enum.Enum):
    ONLY = 0


def describe(value):
    """The name of a value's kind."""
    if value is None:
        raise ValueError("nothing to describe")
    if issubclass(value, bool):
        return "flag"
    return type(value).__name__
'''
SHAPES_TESTS = """from shapes.kinds import describe


def test_describe():
    assert describe(bool) == "flag"
"""


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _, data = sample_testgen(
        tmp_path_factory.mktemp("shapes"),
        {"shapes/__init__.py": "", "shapes/kinds.py": SHAPES, "tests/test_kinds.py": SHAPES_TESTS},
        {"shapes/kinds.py": SHAPES_NEW},
        "a marker; None is refused with a ValueError",
    )
    return data


@pytest.mark.slow
def test_a_behaviour_test_beside_a_new_names_tests_still_catches(shapes: dict[str, Any]) -> None:
    facts = caught(shapes, "describe(None)")
    assert facts, shapes["kept"]
    assert all(f["changed"] and not f["new_name"] for f in facts), facts
    # the enum's own tests are there too, as new names, not as catches
    marker = [c for c in shapes["kept"] if "marker" in c["name"]]
    assert marker and all(not c["evidence"].get("catches_change") for c in marker), shapes["kept"]


def test_a_new_name_a_value_shows_is_imported_apart() -> None:
    new = Example(
        args=["0"],
        kwargs={},
        imports=["from shapes.kinds import Marker"],
        outcome={
            "kind": "value",
            "value": "Marker.ONLY",
            "imports": ["from shapes.kinds import Marker"],
        },
        changed=True,
        new=True,
        owner="Marker",
        kind="init",
    )
    old = Example(
        args=["None"],
        kwargs={},
        imports=[],
        outcome={"kind": "raises", "type": "ValueError", "message": "nothing to describe"},
        changed=True,
        before="raised TypeError",
    )
    text = render_module(
        "shapes.kinds", "shapes/kinds.py", {"Marker.__init__": [new], "describe": [old]}, {}
    )
    tree = ast.parse(text)
    top = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "shapes.kinds"]
    assert [a.name for n in top for a in n.names] == ["describe"], text
    guarded = [n for n in tree.body if isinstance(n, ast.Try)]
    assert guarded and "from shapes.kinds import Marker" in ast.unparse(guarded[0]), text
