"""The steady parts of a value that is not steady as a whole (issue 35), and a module
that imports only after another of its package.

A real sample project (a git repository in tmp, its own virtualenv, real pytest,
coverage and probe subprocesses): ``ci/runs.py`` makes a run record whose key is drawn by
``uuid4()`` in every call, and cannot be imported alone (it imports ``ci.report``, whose
package imports ``ci.runs`` back: the project's tests import ``ci.report`` first). The
change leaves the record's url None when no repository is given; the parent wrote
``.../None/<key>``. The whole record differs from run to run, its url does not: it is
asserted alone (by the differential, from the parts all its repeated calls show alike,
and by amplification, from the parts both of its runs show alike). A change that keeps
the behaviour (the key drawn another way) claims nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.testgen import probe_steady
from bot.testgen.steady_parts import imported_first, of_runs, parted, parts, unlike, unpacked
from tests.testgen.sample import sample_testgen

RUNS = '''import uuid
from dataclasses import dataclass
from typing import Optional

from ci.report import line


@dataclass
class Run:
    key: str
    repo: Optional[str]
    url: Optional[str]


def start(repo=None):
    """A run record; its key is new in every call."""
    key = uuid.uuid4().hex
    url = f"https://ci.example/{repo}/{key}"
    return Run(key=key, repo=repo, url=url)


def described(env):
    """The run a CI environment describes (its run id, and its repository if set)."""
    repo, run = env.get("REPO"), env["RUN"]
    url = f"https://ci.example/{repo}/{run}"
    return Run(key=run, repo=repo, url=url)


def summary(repo=None):
    return line(start(repo))
'''
RUNS_NEW = RUNS.replace(
    '    url = f"https://ci.example/{repo}/{key}"\n',
    '    url = None if repo is None else f"https://ci.example/{repo}/{key}"\n',
).replace(
    '    url = f"https://ci.example/{repo}/{run}"\n',
    '    url = None if repo is None else f"https://ci.example/{repo}/{run}"\n',
)
# the same behaviour: another way to draw the key
RUNS_SAME = RUNS.replace(
    "    key = uuid.uuid4().hex\n", '    key = str(uuid.uuid4()).replace("-", "")\n'
)
REPORT = """from ci.report.text import line
"""
REPORT_TEXT = """def line(run):
    from ci.runs import Run

    return f"{run.repo}: {run.url}" if isinstance(run, Run) else str(run)
"""
# what makes ci.runs importable only after ci.report: the package imports it back
REPORT_INIT_CYCLE = """from ci.report.text import line
from ci.runs import Run
"""
TESTS = """from uuid import uuid4

import ci.report
from ci.runs import Run, described, start


def test_start():
    run = start("team/app")
    assert run.repo == "team/app"
    assert run.url.startswith("https://ci.example/team/app/")


def test_start_alone():
    assert len(start().key) == 32


def test_described():
    run = uuid4().hex
    assert described({"RUN": run}).key == run


def test_record():
    key = uuid4().hex
    run = Run(key=key, repo=None, url=None)
    assert run.key == key
"""


def _project(runs: str) -> dict[str, str]:
    return {
        "ci/__init__.py": "",
        "ci/runs.py": runs,
        "ci/report/__init__.py": REPORT_INIT_CYCLE,
        "ci/report/text.py": REPORT_TEXT,
        "tests/test_runs.py": TESTS,
    }


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("runs"),
        _project(RUNS),
        {"ci/runs.py": RUNS_NEW},
        "no url without a repository",
    )


@pytest.mark.slow
def test_a_steady_part_of_an_unsteady_value_catches_the_change(
    changed: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = changed

    notes = "\n".join(data["notes"])
    assert "ci/runs.py could not be probed" not in notes, notes  # imported after ci.report
    facts = [
        fact
        for case in data["kept"]
        if case["evidence"].get("catches_change")
        for fact in case["evidence"].get("calls", []) + case["evidence"].get("amplified", [])
        if "start(" in fact["call"] or "described(" in fact["call"]
    ]
    # by both: the differential's repeated calls (start draws its key), amplification's
    # two runs (the test draws the run id it gives described)
    assert any("start(" in f["call"] for f in facts), notes
    assert any("described(" in f["call"] for f in facts), notes
    assert all(f["changed"] and not f["new_name"] for f in facts), facts
    committed = "\n".join(
        repo.git("show", f"{data['branch']}:{k['path']}") for k in data["kept"] if k["path"]
    )
    assert ".url is None" in committed, committed
    # never the key: it is drawn anew in every run
    assert not re.search(r"\.key == ['\"]", committed), committed


@pytest.fixture(scope="module")
def same(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("runs_same"),
        _project(RUNS),
        {"ci/runs.py": RUNS_SAME},
        "draw the key from the uuid's text",
        exits=(0, 1, 4),
    )
    return data


@pytest.mark.slow
def test_a_change_that_keeps_the_steady_parts_claims_nothing(same: dict[str, Any]) -> None:
    claims = [k for k in same["kept"] if k["evidence"].get("catches_change")]
    assert not claims, claims


def test_parts_of_a_value_are_its_fields_items_and_elements() -> None:
    shown = parts("Run(key='a1', repo=None, tags={'x': [1, 2]}, at=when(3))")
    assert shown is not None
    assert shown["type({r}).__name__"] == "'Run'"
    assert shown["{r}.repo"] == "None"
    assert shown["list({r}.tags)"] == "['x']"
    assert shown["{r}.tags['x']"] == "[1, 2]"
    assert shown["type({r}.at).__name__"] == "'when'"
    assert "{r}.at" not in shown  # not a literal: never compared whole
    assert parts("not a value(") is None


def _value(source: str) -> dict[str, Any]:
    return {"kind": "value", "value": source}


def test_only_a_part_steady_on_the_head_and_other_on_every_parent_run_is_told() -> None:
    head = [_value(f"Run(key='{k}', repo=None, url=None)") for k in ("a1", "b2")]
    parent = [_value(f"Run(key='{k}', repo=None, url='/None/{k}')") for k in ("c3", "d4")]
    found = parted(head, parent)
    assert found is not None
    assert found[0]["facts"] == [["{r}.url", "None", []]]
    assert found[1]["facts"] == [["{r}.url", "'/None/c3'", []]]
    # one parent run that shows head's part: not told
    assert parted(head, [parent[0], _value("Run(key='e5', repo=None, url=None)")]) is None
    assert parted(head, head) is None  # the same behaviour
    assert parted(head[:1], parent) is None  # one run cannot tell a steady part
    raised = {"kind": "raises", "type": "KeyError"}
    mine, theirs = parted(head, [raised, raised]) or ({}, {})
    assert mine["facts"][0][0] == "type({r}).__name__" and theirs == raised


def test_repeated_calls_that_read_randomness_are_kept_by_their_alike_parts() -> None:
    values = [_value(f"Run(key='{k}', url=None)") for k in ("a", "b", "c")]
    run = {
        "functions": {"start": {"results": [{"outcome": {"kind": "depends", "values": values}}]}}
    }
    unpacked(run)
    (result,) = run["functions"]["start"]["results"]
    assert result["outcome"]["kind"] == "object"
    assert ["{r}.url", "None", []] in result["outcome"]["facts"]
    assert all(f[0] != "{r}.key" for f in result["outcome"]["facts"])
    assert result["outcome"]["others"]["{r}.key"] == ["'a'", "'b'", "'c'"]


def test_a_module_in_an_import_cycle_is_imported_after_the_module_that_imports_it(
    tmp_path: Path,
) -> None:
    for path, text in {**_project(RUNS), "ci/report/__init__.py": REPORT_INIT_CYCLE}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    code = (
        "import importlib, sys, probe_steady\n"
        "try:\n"
        "    importlib.import_module('ci.runs')\n"
        "except ImportError:\n"
        "    print('alone: fails')\n"
        "print(probe_steady.imported('ci.runs').start('x').repo)\n"
    )
    where = Path(probe_steady.__file__).parent
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": f"{tmp_path}:{where}"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.split() == ["alone:", "fails", "x"], done.stderr


def test_a_fact_other_in_every_parent_run_tells_the_sides_apart() -> None:
    ours = {"{r}.url": ["{r}.url", "None", []], "{r}.key": ["{r}.key", "'a'", []]}
    runs = [
        {
            "kind": "object",
            "facts": [],
            "others": {"{r}.url": ["'/b'", "'/c'"], "{r}.key": ["'b'"]},
        },
        {"kind": "object", "facts": [], "others": {"{r}.url": ["'/d'"], "{r}.key": ["'a'"]}},
    ]
    shown = [json.dumps(r) for r in runs]
    # the url differs in each call of each run; the key is head's in one of them
    assert unlike(ours, {}, shown) == {"{r}.url": ["{r}.url", "'/b'", []]}
    assert unlike(ours, {"{r}.url": ["{r}.url", "'x'", []]}, shown) == {}  # steady there
    plain = [json.dumps({**r, "others": {}}) for r in runs]
    assert unlike(ours, {}, plain) == {}  # a run of one call each: too few to tell


def test_a_test_of_a_module_in_a_cycle_imports_the_other_module_first() -> None:
    text = '"""Tests."""\n\nfrom __future__ import annotations\n\nfrom ci.runs import start\n'
    shown = imported_first(text, "ci.report", "ci.runs")
    lines = shown.splitlines()
    assert (
        lines.index("from ci.runs import start")
        == lines.index("import ci.report  # ci.runs imports only after it (a circular import)") + 1
    )
    assert imported_first(text, "", "ci.runs") == text


def test_an_object_is_compared_by_its_facts_that_need_no_import() -> None:
    def shown(key: str, url: str) -> dict[str, Any]:
        facts = [["type({r}).__name__", "'Run'", []], ["{r}.key", key, []], ["{r}.url", url, []]]
        return {"kind": "object", "repr": None, "facts": [*facts, ["{r}.at", "At(1)", ["x"]]]}

    head = [shown("'a'", "None"), shown("'b'", "None")]
    parent = [shown("'c'", "'/None/c'"), shown("'d'", "'/None/d'")]
    found = of_runs([{1: h} for h in head], [{1: p} for p in parent], 1, dict)
    assert found is not None and found[0]["facts"] == [["{r}.url", "None", []]]
    assert of_runs([{1: h} for h in head], [{}, {1: parent[0]}], 1, dict) is None  # not made
