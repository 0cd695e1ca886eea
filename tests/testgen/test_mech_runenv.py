"""How Nova runs the project for the model-free generator, on a real small project (a git
repository in tmp with its own virtualenv, real pytest, coverage and probe subprocesses in
the sandbox). Each of these once threw a catch away without saying so:

- Python's own bytecode cache written during a call (the first import of a module inside
  the function) was taken for the function's side effect: skipped on the parent;
- a function skipped on one side was read as "did not exist there": its inputs became
  "new name" tests that claim nothing;
- one test importing from a zip archive made coverage of the whole suite come back empty;
- a git-ignored module generated at install (``_version.py``) was missing from Nova's
  checkout, so the package imported on neither side;
- an input the repeat run did not reach was labelled non-deterministic."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from bot.testgen.workspace import Workspace
from tests.conftest import GitRepo
from tests.testgen.sample import run_testgen

PYPROJECT = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
GITIGNORE = "src/hosts/_version.py\nsrc/hosts/_local_settings.py\nsrc/hosts/scratch.py\n.env\n"
INIT = """from ._version import version as __version__

try:  # a developer's own settings, when there are any
    from . import _local_settings
except ImportError:
    _local_settings = None
"""
# written at install by setuptools-scm / hatch-vcs, never committed
VERSION = "__version__ = version = '1.4.0'\n__version_tuple__ = version_tuple = (1, 4, 0)\n"
LOCAL_SETTINGS = 'API_TOKEN = "nova-test-not-a-real-token-0035"\n'

RULES = 'BLANKS = " \\t"\n'
NAMES = """def ascii_host(host):
    from hosts import _rules  # imported when first needed

    return host.strip(_rules.BLANKS).encode("idna").decode("ascii")
"""
NAMES_NEW = NAMES.replace(".strip(_rules.BLANKS)", ".strip(_rules.BLANKS).lower()")
PORTS = """def port_of(url):
    with open("ports.log", "a") as log:
        log.write(url + "\\n")
    scheme, _, rest = url.partition("://")
    host, _, port = rest.partition(":")
    return int(port) if port else 80
"""
PORTS_NEW = """def port_of(url):
    scheme, _, rest = url.partition("://")
    host, _, port = rest.partition(":")
    return int(port) if port else {"https": 443}.get(scheme, 80)
"""
TESTS = """import sys
import zipfile

from hosts.names import ascii_host
from hosts.ports import port_of


def test_ascii_host():
    assert ascii_host("b\\u00fccher.de") == "xn--bcher-kva.de"


def test_blanks():
    assert ascii_host(" Example.org ").endswith(".org")


def test_port():
    assert port_of("http://example.org:8080") == 8080
    assert port_of("https://example.org") in (80, 443)


def test_a_plugin_from_a_zip(tmp_path):
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("hostplugin.py", "def shout(host):\\n    return host.upper()\\n")
    sys.path.insert(0, str(archive))
    try:
        import hostplugin

        assert hostplugin.shout(ascii_host("a.b")) == "A.B"
    finally:
        sys.path.remove(str(archive))
        sys.modules.pop("hostplugin", None)
    archive.unlink()
"""


def build_hosts(repo: GitRepo) -> GitRepo:
    repo.write("pyproject.toml", PYPROJECT)
    repo.write(".gitignore", GITIGNORE)
    repo.write("src/hosts/__init__.py", INIT)
    repo.write("src/hosts/_rules.py", RULES)
    repo.write("src/hosts/names.py", NAMES)
    repo.write("src/hosts/ports.py", PORTS)
    repo.write("tests/test_hosts.py", TESTS)
    repo.commit("base")
    repo.write("src/hosts/names.py", NAMES_NEW)
    repo.write("src/hosts/ports.py", PORTS_NEW)
    repo.commit("hosts are compared lower-case; https is port 443")
    # what an install and a developer leave in the working tree, all git-ignored
    repo.write("src/hosts/_version.py", VERSION)
    repo.write("src/hosts/_local_settings.py", LOCAL_SETTINGS)
    repo.write("src/hosts/scratch.py", "print('a scratch file nothing imports')\n")
    repo.write(".env", "NOVA_TEST_TOKEN=nova-test-not-a-real-token-0035\n")
    return repo


def test_the_generated_modules_the_package_imports_are_brought_into_the_checkout(
    repo: GitRepo,
) -> None:
    """Defect 4: the checkout of the commit lacks the git-ignored ``_version.py`` that
    setuptools-scm writes at install; the package imports it, so it is copied in (on
    the parent too); a settings file that holds a token, a module nothing imports and
    ``.env`` are not."""
    build_hosts(repo)
    for rev in ("HEAD", "HEAD~1"):
        with Workspace(repo.path, rev, None) as ws:
            assert ws.generated == ["src/hosts/_version.py"]
            assert (ws.root / "src/hosts/_version.py").read_text() == VERSION
            for absent in ("src/hosts/_local_settings.py", "src/hosts/scratch.py", ".env"):
                assert not (ws.root / absent).exists(), absent
            assert "_version.py" in ws.generated_note()
            assert "_version.py" not in ws.files()  # not a file of the change
    # a linked worktree of the repository, with its own generated file: that one is read
    linked = repo.path.parent / "linked"
    repo.git("worktree", "add", "-q", str(linked), "HEAD")
    (linked / "src/hosts/_version.py").write_text(VERSION.replace("1.4.0", "1.5.0"))
    with Workspace(linked, "HEAD", None) as ws:
        assert ws.generated == ["src/hosts/_version.py"]
        assert "1.5.0" in (ws.root / "src/hosts/_version.py").read_text()


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    """The sample, its change, and Nova's report on it (one run for the whole module)."""
    tmp = tmp_path_factory.mktemp("hosts")
    repo = build_hosts(GitRepo(tmp / "repo"))
    return repo, run_testgen(repo, tmp)


def _notes(data: dict[str, Any]) -> str:
    return "\n".join(data["notes"])


@pytest.mark.slow
def test_the_package_imports_with_its_generated_version_module(
    hosts: tuple[GitRepo, dict[str, Any]],
) -> None:
    _repo, data = hosts
    notes = _notes(data)
    assert "cannot be imported" not in notes
    assert "the workspace has src/hosts/_version.py from your working tree" in notes
    assert "nova-test-not-a-real-token-0035" not in json.dumps(data)


@pytest.mark.slow
def test_bytecode_written_by_an_import_inside_the_call_is_not_a_side_effect(
    hosts: tuple[GitRepo, dict[str, Any]],
) -> None:
    """Defect 1: ``ascii_host`` imports a module (and the idna codec) the first time it
    runs; on the parent's fresh tree that wrote a ``.pyc`` and the probe skipped it."""
    _repo, data = hosts
    notes = _notes(data)
    assert ".pyc" not in notes
    caught = [
        c
        for c in data["kept"]
        if c["evidence"]["catches_change"]
        and any(f["call"].startswith("ascii_host(") for f in c["evidence"].get("calls", []))
    ]
    assert caught, notes + json.dumps(data["kept"], indent=1)
    facts = [f for c in caught for f in c["evidence"]["calls"]]
    assert any(f["parent"].startswith("returned '") for f in facts), facts


@pytest.mark.slow
def test_a_function_skipped_on_the_parent_only_is_not_new(
    hosts: tuple[GitRepo, dict[str, Any]],
) -> None:
    """Defect 2: the parent's ``port_of`` writes a log file, so the probe skipped it there;
    it existed, so no "new name" test is made. (Now the parent is probed in a scratch
    directory, scratch.py: a test may pin that head leaves no file, in tmp_path.)"""
    _repo, data = hosts
    for case in data["kept"] + data["dropped"]:
        assert not case["name"].startswith("test_port_of_new"), case
        if case["name"].startswith("test_port_of"):
            assert not (case.get("evidence") or {}).get("new_name"), case


@pytest.mark.slow
def test_coverage_survives_a_test_that_imports_from_a_zip(
    hosts: tuple[GitRepo, dict[str, Any]],
) -> None:
    """Defect 3: the suite imports a module from a zip archive that is gone when the
    report is made ("No source for code"): the rest is still measured."""
    _repo, data = hosts
    notes = _notes(data)
    assert "came back empty" not in notes and "No source for code" not in notes, notes
    assert data["stats"]["changed_lines_covered_before"] > 0, data["stats"]


def test_an_input_the_repeat_run_did_not_reach_is_not_non_deterministic(
    repo: GitRepo,
) -> None:
    """Defect 5: the head's second run gave no result for one input (it ran out of time
    before it, in the held-out run): that is no difference in outcome. Two real probe
    runs, the second with that input left out of its plan."""
    from bot.testgen.differential import _compare, _modules, _probe
    from bot.testgen.frameworks import detect_framework, with_python

    build_hosts(repo)
    inputs = [
        {"args": [repr(h)], "kwargs": {}, "imports": [], "origin": "tests"}
        for h in (" Example.org ", "a.b", "x.y")
    ]

    def plan(given: list[dict[str, object]]) -> str:
        functions = [{"qualname": "ascii_host", "inputs": given, "draw": 0, "strings": []}]
        return json.dumps({"modules": [{"module": "hosts.names", "functions": functions}]})

    fw = detect_framework(repo.path)
    assert fw is not None
    fw = with_python(fw, sys.executable)
    with Workspace(repo.path, "HEAD", fw) as ws:
        first = _modules(_probe(ws, fw, plan(inputs), "one", 0))["hosts.names"]
        again = _modules(_probe(ws, fw, plan(inputs[:2]), "two", 1))["hosts.names"]
    assert len(first["functions"]["ascii_host"]["results"]) == 3, first
    examples, note = _compare("ascii_host", first, [again], [])
    assert "non-deterministic" not in note, note
    assert len(examples) == 3


def test_a_name_is_absent_from_the_parent_only_when_its_source_lacks_it() -> None:
    from bot.testgen.differential import defined

    source = (
        "from .compat import quote\n"
        "from .extra import *\n"
        "ALIAS = len\n\n\n"
        "def f():\n    pass\n\n\n"
        "class Plain:\n    def m(self):\n        pass\n\n\n"
        "class Child(Base):\n    pass\n"
    )
    assert defined(source, "f") and defined(source, "quote") and defined(source, "ALIAS")
    assert defined(source, "Plain.m") and defined(source, "Plain.__init__")
    assert not defined(source, "Plain.gone")  # no base class to inherit it from
    assert defined(source, "Child.anything")  # Base may define it
    assert defined(source, "unknown")  # the star import may bring it
    assert not defined(source.replace("from .extra import *\n", ""), "unknown")
    assert not defined(None, "f")  # the module is not in the parent
