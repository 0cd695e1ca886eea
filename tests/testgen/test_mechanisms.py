"""`nova testgen` with no model on code it was never tuned on (issue 35): one real sample
project (a git repository in tmp, its own virtualenv, real pytest, coverage and pytest-cov
subprocesses) whose change exercises each mechanism, run once, and the drop reasons of a
model's failing tests. Each test names the mechanism it proves.

The project measures its own coverage the way that stopped Nova before: ``--cov`` in its
pytest options, and a ``.coveragerc`` whose ``omit`` pattern coverage.py rejects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.testgen.inputs import doc_examples
from bot.testgen.reach import Entry, entries
from bot.testgen.runners.python import measured_args, project_addopts
from bot.testgen.scenarios import scenarios_from_tests
from tests.conftest import GitRepo
from tests.servers.openai_server import FakeOpenAI, text, tool_call
from tests.testgen.sample import run_testgen
from tests.testgen.test_differential import build_calc_sample
from tests.testgen.test_testgen import nova_testgen

PYPROJECT = """[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra --cov=feeds --cov-config=cov.ini --cov-report=term-missing"
"""
COVERAGERC = "[run]\nomit = ***/vendored/*\n"  # coverage.py: "File pattern can't include '***'"
COV_INI = "[run]\nbranch = true\n"

SHAPES = """from collections import OrderedDict


def summary(counts):
    return OrderedDict(sorted(counts.items()))


def ranking(scores):
    return dict(sorted(scores.items()))
"""
SHAPES_NEW = SHAPES.replace(
    "    return OrderedDict(sorted(counts.items()))", "    return dict(sorted(counts.items()))"
).replace(
    "    return dict(sorted(scores.items()))",
    "    return dict(sorted(scores.items(), key=lambda kv: -kv[1]))",
)
SHAPES_TESTS = """from feeds.shapes import ranking, summary


def test_summary():
    assert summary({"b": 2, "a": 1}) == {"a": 1, "b": 2}


def test_ranking():
    assert ranking({"x": 1, "y": 3}) == {"x": 1, "y": 3}
"""

LEDGER = """import datetime


class Ledger:
    def __init__(self, start, grace):
        self.start = start
        self.grace = grace

    def due(self, when):
        return when - self.start > self.grace
"""
LEDGER_NEW = LEDGER.replace("> self.grace", ">= self.grace")
LEDGER_TESTS = """import unittest

from feeds.ledger import Ledger


class LedgerTest(unittest.TestCase):
    def setUp(self):
        import datetime as dt

        self.start = dt.date(2024, 1, 1)
        self.grace = dt.timedelta(days=30)

    def test_due(self):
        import datetime as dt

        ledger = Ledger(self.start, self.grace)
        on_the_day = dt.date(2024, 1, 31)
        late = dt.date(2024, 3, 1)
        ledger.due(on_the_day)
        self.assertTrue(ledger.due(late))
"""

EVENTS = """class _Collector:
    def __init__(self):
        self.seen = []

    def _on_item(self, level, name):
        self.seen.append(name)


class _Walker:
    def __init__(self):
        self.handler = None

    def walk(self, tree, level=0):
        for name, children in tree:
            self.handler(level, name)
            self.walk(children, level + 1)


def collect(tree):
    collector = _Collector()
    walker = _Walker()
    walker.handler = collector._on_item
    walker.walk(tree)
    return collector.seen
"""
EVENTS_NEW = EVENTS.replace(
    "        self.seen.append(name)\n", '        self.seen.append(name.replace("_", " "))\n'
)
EVENTS_TESTS = """from feeds.events import collect


def test_collect():
    assert collect([("alpha", [("beta", [])])]) == ["alpha", "beta"]
"""

MARKUP = """def render(text):
    return _layout(text)


def _layout(text):
    return "<p>" + _wrap(text) + "</p>"


def _wrap(text):
    return _escape(text.strip())


def _escape(text):
    return _entities(text)


def _entities(text):
    return text.replace("&", "&amp;")
"""
MARKUP_NEW = MARKUP.replace(
    '    return text.replace("&", "&amp;")',
    '    return text.replace("&", "&amp;").replace("<", "&lt;")',
)
MARKUP_TESTS = """from feeds.markup import render


def test_render():
    assert render(" fish & chips ") == "<p>fish &amp; chips</p>"
"""

CLOCK = """import datetime


def age(born):
    today = datetime.date.today()
    return today.year - born.year
"""
CLOCK_NEW = CLOCK.replace(
    "    return today.year - born.year",
    "    return today.year - born.year - ((today.month, today.day) < (born.month, born.day))",
)
CLOCK_TESTS = """import datetime

from feeds.clock import age


def test_age():
    assert age(datetime.date(2000, 12, 31)) >= 0
"""

MODULES = {
    "shapes": (SHAPES, SHAPES_NEW, SHAPES_TESTS),
    "ledger": (LEDGER, LEDGER_NEW, LEDGER_TESTS),
    "events": (EVENTS, EVENTS_NEW, EVENTS_TESTS),
    "markup": (MARKUP, MARKUP_NEW, MARKUP_TESTS),
    "clock": (CLOCK, CLOCK_NEW, CLOCK_TESTS),
}


@pytest.fixture(scope="module")
def feeds(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    """The sample, its change, and Nova's report on it (one run for the whole module)."""
    tmp = tmp_path_factory.mktemp("feeds")
    repo = GitRepo(tmp / "repo")
    repo.write("pyproject.toml", PYPROJECT)
    repo.write(".coveragerc", COVERAGERC)
    repo.write("cov.ini", COV_INI)
    repo.write("feeds/__init__.py", "")
    for name, (old, _new, tests) in MODULES.items():
        repo.write(f"feeds/{name}.py", old)
        repo.write(f"tests/test_{name}.py", tests)
    repo.commit("base")
    for name, (_old, new, _tests) in MODULES.items():
        repo.write(f"feeds/{name}.py", new)
    repo.commit("dicts, a grace day, spaces, escaped brackets, whole years")
    return repo, run_testgen(repo, tmp)


def _kept(data: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The kept tests whose calls start with ``prefix``, with their facts."""
    out = []
    for case in data["kept"]:
        for fact in case["evidence"].get("calls", []):
            if fact["call"].startswith(prefix):
                out.append({**case, "fact": fact})
    return out


def _note(data: dict[str, Any], start: str) -> str:
    found = [n for n in data["notes"] if n.startswith(start)]
    assert found, "\n".join(data["notes"])
    return found[0]


def test_pytest_cov_options_are_taken_out_of_a_measured_run(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    assert project_addopts(tmp_path) == [
        "-ra",
        "--cov=feeds",
        "--cov-config=cov.ini",
        "--cov-report=term-missing",
    ]
    assert measured_args(tmp_path) == ["-p", "no:pytest_cov", "-o", "addopts=-ra"]
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "setup.cfg").write_text(
        "[tool:pytest]\naddopts =\n    --cov src --doctest-glob='*.rst'\n    --no-cov-on-fail\n"
    )
    assert measured_args(tmp_path) == [
        "-p",
        "no:pytest_cov",
        "-o",
        "addopts='--doctest-glob=*.rst'",  # pytest splits it as a shell would
    ]
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = -q\n")
    assert measured_args(tmp_path) == ["-p", "no:pytest_cov"]


@pytest.mark.slow
def test_coverage_is_measured_whatever_the_project_configured(
    feeds: tuple[GitRepo, dict[str, Any]],
) -> None:
    """Mechanism 1: `--cov` in addopts and a rejected omit pattern do not blind Nova."""
    _repo, data = feeds
    notes = "\n".join(data["notes"])
    assert "could not be run under coverage" not in notes
    assert "came back empty" not in notes
    assert "coverage recorded nothing" not in notes
    assert data["stats"]["changed_lines_covered_before"] > 0, data["stats"]
    assert all(c["evidence"]["changed_lines_covered"] for c in data["kept"])
    dropped = [c["reason"] for c in data["dropped"]]
    assert not any(r == "does not execute any changed line" for r in dropped) or data["kept"]


@pytest.mark.slow
def test_an_instance_built_as_the_tests_build_it_with_names_bound_first(
    feeds: tuple[GitRepo, dict[str, Any]],
) -> None:
    """Mechanism 2: `self.start = dt.date(...)` in setUp, a local import, a date bound to
    a name and passed to the method: the boundary day the test uses catches `>=`."""
    repo, data = feeds
    found = [c for c in _kept(data, "ledger = Ledger(") if "2024, 1, 31" in c["fact"]["call"]]
    assert len(found) == 1, "\n".join(data["notes"]) + json.dumps(data["kept"], indent=1)
    case = found[0]
    assert case["fact"]["call"] == (
        "ledger = Ledger(datetime.date(2024, 1, 1), datetime.timedelta(days=30)); "
        "ledger.due(datetime.date(2024, 1, 31))"
    )
    assert (case["fact"]["head"], case["fact"]["parent"]) == ("True", "returned False")
    assert case["evidence"]["catches_change"] is True
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_feeds_ledger.py")
    assert "import datetime" in committed


@pytest.mark.slow
def test_a_callback_registered_by_attribute_reaches_the_change(
    feeds: tuple[GitRepo, dict[str, Any]],
) -> None:
    """Mechanism 3: `walker.handler = collector._on_item` is a call edge from `collect`."""
    _repo, data = feeds
    note = _note(data, "differential: feeds/events.py::collect")
    assert "(reaches the changed _Collector._on_item)" in note
    caught = [c for c in _kept(data, "collect(") if c["evidence"]["catches_change"]]
    assert caught and all(c["fact"]["reaches"] == ["_Collector._on_item"] for c in caught)


@pytest.mark.slow
def test_a_private_helper_four_calls_down_is_reached_and_steered(
    feeds: tuple[GitRepo, dict[str, Any]],
) -> None:
    """Mechanisms 4 and 5: `_entities` is four calls below `render`; no test input holds
    the `<` its changed line tests, so one is made from the test's own input."""
    _repo, data = feeds
    note = _note(data, "differential: feeds/markup.py::render")
    assert "(reaches the changed _entities)" in note
    caught = [c for c in _kept(data, "render(") if c["evidence"]["catches_change"]]
    assert caught, data["kept"]
    assert all("<" in c["fact"]["call"] for c in caught)
    assert any("fish" in c["fact"]["call"] for c in caught)  # the test's input, steered
    # the callback's input was steered too: an underscore put into the tests' names
    events = [c for c in _kept(data, "collect(") if c["evidence"]["catches_change"]]
    assert all("_" in c["fact"]["call"] for c in events)


@pytest.mark.slow
def test_equal_values_of_another_type_or_order_are_told_apart(
    feeds: tuple[GitRepo, dict[str, Any]],
) -> None:
    """Mechanism 6: an OrderedDict that became a dict, a dict in another order: both
    compare equal to the parent's value, and the kept test still fails there."""
    repo, data = feeds
    summary = [c for c in _kept(data, "summary(") if c["evidence"]["catches_change"]]
    ranking = [c for c in _kept(data, "ranking(") if c["evidence"]["catches_change"]]
    assert summary and ranking, data["dropped"]
    assert summary[0]["fact"]["parent"].startswith("returned OrderedDict(")
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_feeds_shapes.py")
    assert "assert type(actual) is type(" in committed
    assert "assert repr(actual) == repr(" in committed


@pytest.mark.slow
def test_what_reads_the_clock_is_pinned_only_with_the_clock_pinned(
    feeds: tuple[GitRepo, dict[str, Any]],
) -> None:
    """Mechanism 7: `age` reads today's date; it is compared with the clock pinned on
    both sides, and ranks after a file whose catches need no pinned clock (Ledger.due's)
    when only some files can be checked; a test of it pins the clock too."""
    repo, data = feeds
    note = _note(data, "differential: feeds/clock.py::age")
    assert "steady with the clock pinned (compared pinned on both sides)" in note
    assert "differential: no test file for age: at most 4 files" in "\n".join(data["notes"])
    files = repo.git("ls-tree", "-r", "--name-only", data["branch"])
    assert "tests/test_nova_feeds_clock.py" not in files
    assert "tests/test_nova_feeds_ledger.py" in files


FAILING = """from calc.ops import ceil_div, parse_ratio


def test_wrong_value():
    assert ceil_div(7, 2) == 5


def test_raises():
    parse_ratio("x/1")


def test_right():
    assert ceil_div(7, 2) == 4
"""


@pytest.mark.slow
def test_every_drop_reason_names_the_failure(
    repo: GitRepo, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    """Mechanism 7: never a bare "fails": the assertion or the exception is named."""
    build_calc_sample(repo)
    llm_env.enqueue(
        tool_call("write_test_file", {"path": "tests/test_nova_fail.py", "content": FAILING}),
        text('{"summary": "failing"}'),
    )
    result = nova_testgen(repo, tmp_path, "-o", "json", "--runs", "1")
    assert result.exit_code == 0, result.stdout + result.stderr
    reasons = {c["name"]: c["reason"] for c in json.loads(result.stdout)["dropped"]}
    assert reasons["test_wrong_value"].startswith("fails on this change: assert 4 == 5")
    assert reasons["test_raises"].startswith("fails on this change: ValueError: invalid literal")


def test_a_changed_table_is_reached_through_the_functions_that_read_it() -> None:
    source = (
        '__version__ = "2"\n'
        "FORMATS = {\n"
        '    "%f": "[0-9]{1,6}",\n'
        "}\n\n\n"
        "def regex_for(fmt):\n"
        "    return FORMATS[fmt]\n\n\n"
        "def parse(fmt, text):\n"
        "    return _match(regex_for(fmt), text)\n\n\n"
        "def _match(regex, text):\n"
        "    return regex, text\n"
    )
    assert entries(source, "<module>", [3]) == [
        Entry("regex_for", "<module>"),
        Entry("parse", "<module>"),
    ]
    assert entries(source, "<module>", [1]) == []  # a version string: nothing reads it


def test_instances_built_by_class_methods_in_tests_and_docs() -> None:
    tests = {
        "tests/test_spec.py": (
            "import unittest\n"
            "from spec import Spec\n\n\n"
            "class SpecTest(unittest.TestCase):\n"
            "    def test_match(self):\n"
            "        spec = Spec.from_lines('glob', ['*.txt'])\n"
            "        files = ['a.txt', 'b.py']\n"
            "        self.assertEqual(set(filter(spec.match_file, files)), {'a.txt'})\n"
        )
    }
    found = scenarios_from_tests(tests, "Spec", "match_file")
    assert [(c.factory, c.ctor, c.args) for c in found] == [
        ("from_lines", (("'glob'", "['*.txt']"), ()), ("'a.txt'",)),
        ("from_lines", (("'glob'", "['*.txt']"), ()), ("'b.py'",)),
    ]
    docs = doc_examples(
        {
            "README.rst": "Use:\n\n    >>> import spec\n    >>> s = spec.Spec('glob')\n"
            "    >>> s.match_file('a.txt')\n    True\n"
        }
    )
    (scenario,) = scenarios_from_tests(docs, "Spec", "match_file")
    assert (scenario.ctor, scenario.args, scenario.imports) == (
        (("'glob'",), ()),
        ("'a.txt'",),
        ("import spec",),
    )


def test_callbacks_and_private_classes_are_reached_through_who_registers_them() -> None:
    source = (
        EVENTS
        + "\n\nclass _Quiet(_Collector):\n    level = 2\n\n\ndef quiet():\n    return _Quiet()\n"
    )
    assert entries(source, "_Collector._on_item") == [Entry("collect", "_Collector._on_item")]
    assert entries(source, "_Walker.walk") == [Entry("collect", "_Walker.walk")]
    assert entries(source, "_Quiet") == [Entry("quiet", "_Quiet")]
    assert entries(MARKUP_NEW, "_entities") == [Entry("render", "_entities")]


def test_a_module_that_prints_at_import_is_still_importable(tmp_path: Path) -> None:
    """The import check's answer is told from whatever the modules print at import (to
    stdout or stderr, with or without a newline): a chatty module is not 'unimportable'."""
    import sys

    from bot.sandbox.run import run_sandboxed
    from bot.testgen.environment import import_failures

    (tmp_path / "chatty.py").write_text(
        "import sys\nprint('setup tools', end='')\nsys.stderr.write('{not json')\n"
    )
    (tmp_path / "broken.py").write_text("import not_installed_anywhere_0035\n")

    def run(cmd: list[str], timeout: float) -> object:
        return run_sandboxed(cmd, tmp_path, timeout=timeout)

    failed = import_failures(run, sys.executable, ["chatty", "broken"])
    assert list(failed) == ["broken"] and "not_installed_anywhere_0035" in failed["broken"]


@pytest.mark.slow
def test_the_projects_coverage_gate_does_not_fail_nova_s_runs(
    repo: GitRepo, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    """A project whose pytest options carry pytest-cov's ``--cov-fail-under`` (or a
    ``--cov`` that an interpreter without pytest-cov rejects): Nova's own collect and gate
    runs leave those options out, so a good test is not failed by the project's gate."""
    from tests.testgen.test_testgen import GOOD, HEADER, NEW, OLD

    repo.write(
        "pyproject.toml",
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
        'addopts = "--cov=shop --cov-fail-under=100 -q"\n',
    )
    repo.write("shop/__init__.py", "")
    repo.write("shop/prices.py", OLD)
    repo.write(
        "tests/test_prices.py",
        "from shop.prices import discount\n\n\ndef test_half():\n"
        "    assert discount(100, 50) == 50\n",
    )
    repo.commit("base")
    repo.write("shop/prices.py", NEW)
    repo.commit("Discounts never go below zero")
    llm_env.enqueue(
        tool_call("write_test_file", {"path": "tests/test_nova_good.py", "content": HEADER + GOOD}),
        text('{"summary": "tests"}'),
    )
    result = nova_testgen(repo, tmp_path, "-o", "json", "--runs", "1")
    data = json.loads(result.stdout)
    assert "test_good" in {t["name"] for t in data["kept"]}, data["dropped"]
