"""Amplification observes a library's function the test calls when the project's changed
lines run inside it: ``json.dumps(value, cls=TheProjectsEncoder)``, a CLI runner invoking
the project's command, a schema library dumping through the project's field. Before, only
calls straight into the project's code were observed, so a change reached through a
library was never seen."""

from __future__ import annotations

from typing import Any

import pytest

from bot.testgen.amplify import Observed, _differences
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

ENCODER = """
import json


class Encoder(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, (set, frozenset)):
            return sorted(o)
        return super().default(o)
"""

# sets are now written with their kind, so they can be read back as sets
ENCODER_NEW = ENCODER.replace("return sorted(o)", 'return {"__set__": sorted(o)}')

TESTS = """
import json

from enc.encoder import Encoder


def test_a_set_is_written_as_a_sorted_list():
    text = json.dumps({"tags": {"b", "a"}}, cls=Encoder)
    back = json.loads(text)
    assert "tags" in back
"""


@pytest.fixture(scope="module")
def through(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("through"),
        {"enc/__init__.py": "", "enc/encoder.py": ENCODER, "tests/test_encoder.py": TESTS},
        {"enc/encoder.py": ENCODER_NEW},
        "sets are written with their kind",
    )
    return data


def test_a_library_call_that_ran_the_changed_lines_is_observed_and_written(
    through: dict[str, Any],
) -> None:
    facts = amplified(through, "json.dumps(")
    assert facts, through["notes"]
    assert facts[0]["amplifies"] == "tests/test_encoder.py::test_a_set_is_written_as_a_sorted_list"
    assert "__set__" in str(facts[0]["head"]) and "__set__" not in str(facts[0]["parent"])


def test_the_runners_own_helpers_are_known_by_where_they_are_installed_not_by_any_folder() -> None:
    from bot.testgen.amplify_plugin import _RUNNER

    runner = [
        "/usr/lib/python3.11/unittest/case.py",
        "/p/.venv/lib/python3.11/site-packages/_pytest/python_api.py",
        "/usr/lib/python3.11/contextlib.py",
    ]
    libraries = [
        "/usr/lib/python3.11/json/__init__.py",
        "/p/.venv/lib/python3.11/site-packages/click/testing.py",
        # a clone under a folder named like the runner's packages
        "/home/me/unittest/p/.venv/lib/python3.11/site-packages/marshmallow/schema.py",
        "/tmp/typing/p/.venv/lib/python3.11/site-packages/click/testing.py",
    ]
    assert all(_RUNNER.search(p) for p in runner)
    assert not any(_RUNNER.search(p) for p in libraries)


def _observed(*calls: dict[str, Any]) -> Observed:
    rows = [{"line": 5, "name": "CliRunner.invoke", "index": 0, **c} for c in calls]
    return Observed(tests={"t.py::test_a": {"changed": True, "passed": True, "calls": rows}})


def test_a_library_call_differs_when_the_head_ran_the_changed_lines_in_it() -> None:
    # the parent stopped before the project's code (a usage error): it ran none of them
    head = _observed({"kind": "repr", "value": "<Result okay>", "library": True, "ran": True})
    parent = _observed(
        {"kind": "repr", "value": "<Result SystemExit(2)>", "library": True, "ran": False}
    )
    (found,) = _differences("t.py::test_a", head, head, [parent, parent])
    assert found.name == "CliRunner.invoke" and found.head["value"] == "<Result okay>"
    # the head ran none of them: whatever differs is not the change's
    quiet = _observed({"kind": "repr", "value": "<Result okay>", "library": True, "ran": False})
    assert _differences("t.py::test_a", quiet, quiet, [parent, parent]) == []
