"""Test amplification of what a call writes, end to end on small projects: the observation
tees stderr and stdout while each call from a test's body runs (probe_tee), the words are
compared between the sides with the differential generator's rule (streams.differ), and
the copy asserts them through ``capsys`` (amplify_streams). Before, a release that changed
only a progress label (pqdm 0.1.0 -> 0.2.0: ``SUBMITTING`` became ``QUEUEING TASKS``) kept
no catching test: the value the call returned was the same on both sides, and the
project's tests took their inputs (a helper of the test module, a ``**kwargs`` dict) from
a module-level table given to ``parametrize``, which the differential generator cannot
replay.

- RUN writes its stage labels to stderr; the release renames them. It takes a callable
  (the differential generator has none to give: its shaped inputs are refused first).
  The copy of the project's test asserts head's words, fails on the parent, and binds
  its case from the module's table.
- A change that writes the same words (the label built another way) claims nothing.
- The written test: ``capsys`` added (the test's own ``capfd`` used), the streams read
  just before the call; a unittest method or a test taking a binary capture is not written.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from bot.testgen.amplify_streams import written_differs
from bot.testgen.amplify_write import Difference, amplified_test
from tests.conftest import GitRepo
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

RUN = """
import sys
from concurrent.futures import ThreadPoolExecutor


def _stage(label, desc):
    sys.stderr.write(f"{label} | {desc}\\n")


def run(items, function, workers=1, desc="", **options):
    if not callable(function):
        raise TypeError("function must be callable")
    with ThreadPoolExecutor(workers) as pool:
        _stage("SUBMITTING", desc)
        pending = [pool.submit(function, item) for item in items]
    _stage("COLLECTING", desc)
    return [p.result() for p in pending]
"""

RUN_RENAMED = RUN.replace('"SUBMITTING"', '"QUEUEING TASKS"').replace(
    '"COLLECTING"', '"COLLECTING RESULTS"'
)
RUN_SAME = RUN.replace('_stage("SUBMITTING", desc)', '_stage("SUBMIT" + "TING", desc)')

TESTS = """
import pytest

from work.runner import run as run_all


def double(x):
    return 2 * x


TABLE = [
    (double, [1, 2, 3], {"workers": 2}),
    (double, [4], {"workers": 1, "desc": "one"}),
]


@pytest.mark.parametrize("function, items, kwargs", TABLE)
def test_run_maps(function, items, kwargs):
    result = run_all(items, function, **kwargs)
    assert result == [function(i) for i in items]
"""


def _project(tmp: Path, change: str, message: str) -> tuple[GitRepo, dict[str, Any]]:
    return sample_testgen(
        tmp,
        {"work/__init__.py": "", "work/runner.py": RUN, "tests/test_runner.py": TESTS},
        {"work/runner.py": change},
        message,
        exits=(0, 1, 4),
    )


@pytest.fixture(scope="module")
def renamed(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    return _project(tmp_path_factory.mktemp("renamed"), RUN_RENAMED, "clearer stage labels")


def test_a_renamed_label_on_stderr_is_asserted_and_caught(
    renamed: tuple[GitRepo, dict[str, Any]],
) -> None:
    repo, data = renamed
    facts = amplified(data, "run_all(")
    assert facts, data["notes"]
    assert all("to stderr" in f["head"] and "SUBMITTING" in f["parent"] for f in facts), facts
    kept = [c for c in data["kept"] if c["evidence"].get("amplified")]
    assert all(c["evidence"]["fails_on_parent"] for c in kept), kept
    source = repo.git("show", f"{data['branch']}:{kept[0]['path']}")
    assert "capsys.readouterr()" in source and "'QUEUEING' in err" in source, source
    assert "function = double" in source, source  # the case, from the module's table


@pytest.fixture(scope="module")
def same(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _project(tmp_path_factory.mktemp("same"), RUN_SAME, "build the label")[1]


def test_a_change_that_writes_the_same_words_claims_nothing(same: dict[str, Any]) -> None:
    assert not [c for c in same["kept"] if c["evidence"].get("catches_change")], same["kept"]


def _difference(node: str, line: int) -> Difference:
    written = {"err": {"present": ["QUEUEING"], "absent": ["SUBMITTING"]}}
    return Difference(
        node,
        line,
        "run",
        0,
        {"kind": "streams", "written": written, "value": "wrote 'QUEUEING' to stderr"},
        {"kind": "streams", "written": written, "value": "wrote 'SUBMITTING' to stderr"},
        params={"function": None, "items": ["[4]", []], "kwargs": ["{'workers': 1}", []]},
        indices={"function": 1, "items": 1, "kwargs": 1},
    )


def test_the_copy_reads_the_streams_around_its_call_only() -> None:
    built = amplified_test(TESTS, _difference("tests/test_runner.py::test_run_maps[x]", 19))
    assert not isinstance(built, str), built
    test = ast.parse("\n".join(built.lines)).body[0]
    assert isinstance(test, ast.FunctionDef)
    assert [a.arg for a in test.args.args] == ["capsys"] and not test.decorator_list
    body = [ast.unparse(s) for s in test.body]
    assert body[:3] == ["function = double", "items = [4]", "kwargs = {'workers': 1}"], body
    at = body.index("capsys.readouterr()")
    assert body[at + 1] == "result = run_all(items, function, **kwargs)"
    assert "assert 'QUEUEING' in err" in body and "assert 'SUBMITTING' not in err" in body
    assert "import re" in built.imports


def test_the_test_own_capture_fixture_or_none() -> None:
    binary = TESTS.replace("(function, items, kwargs):", "(function, items, kwargs, capfdbinary):")
    built = amplified_test(binary, _difference("tests/test_runner.py::test_run_maps[x]", 19))
    assert isinstance(built, str) and "binary" in built
    with_capfd = binary.replace("capfdbinary", "capfd")  # its own fixture reads the streams
    made = amplified_test(with_capfd, _difference("tests/test_runner.py::test_run_maps[x]", 19))
    assert not isinstance(made, str), made
    assert "    capfd.readouterr()" in made.lines and not any("capsys" in r for r in made.lines)
    unit = (
        "import unittest\nfrom work.runner import run\n\n\n"
        "class T(unittest.TestCase):\n    def test_it(self):\n        run([1], str)\n"
    )
    made = amplified_test(unit, _difference("tests/test_u.py::T::test_it", 7))
    assert isinstance(made, str) and "unittest" in made


def _row(words: list[str], kind: str = "value") -> dict[str, Any]:
    return {"kind": kind, "value": "[2]", "streams": {"err": [words, []]}}


def test_words_compared_only_when_steady_and_the_call_returned() -> None:
    key = (5, "run", 0)
    head = [{key: _row(["QUEUEING"])}, {key: _row(["QUEUEING"])}]
    parent = [{key: _row(["SUBMITTING"])}, {key: _row(["SUBMITTING"])}]
    found = written_differs(head, parent, key)
    assert found is not None
    assert found[0]["written"] == {"err": {"present": ["QUEUEING"], "absent": ["SUBMITTING"]}}
    # a word one head run did not write is not asserted; nothing else differs
    unsteady = [{key: _row(["QUEUEING"])}, {key: _row([])}]
    assert written_differs(unsteady, [{key: _row([])}, {key: _row([])}], key) is None
    raised = [{key: _row(["QUEUEING"], "raises")}, {key: _row(["QUEUEING"], "raises")}]
    assert written_differs(raised, parent, key) is None
