"""The project's tests are wherever the project keeps them: a top-level ``test.py`` /
``tests.py`` holding tests (run as ``python test.py``, which pytest's default patterns
do not name) and the files the project's own ``python_files`` names (``check_*.py``) are
its tests: their inputs are taken, they are amplified, and a test Nova writes is named so
the project's own run collects it."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import pytest

from bot.testgen.frameworks import detect_framework
from tests.conftest import GitRepo
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified
from tests.testgen.test_mech_amplify_vary import READER, READER_NEW
from tests.testgen.test_mech_amplify_vary import TESTS as VARY_TESTS

# a word wrapped in stars is emphasised; the head also knows double stars (strong)
RENDER = """
def render(text):
    out = []
    for word in text.split(" "):
        if word.startswith("*") and word.endswith("*") and len(word) > 2:
            word = "<em>" + word[1:-1] + "</em>"
        out.append(word)
    return " ".join(out)
"""

RENDER_NEW = RENDER.replace(
    "        if word.startswith",
    '        if word.startswith("**") and word.endswith("**") and len(word) > 4:\n'
    '            word = "<strong>" + word[2:-2] + "</strong>"\n'
    "        elif word.startswith",
)

# the same behaviour, written another way
RENDER_SAME = RENDER.replace(
    '            word = "<em>" + word[1:-1] + "</em>"',
    '            word = f"<em>{word[1:-1]}</em>"',
)

# the tests hold only a weak check: "em" is in both the head's and the parent's output
UNITTEST_STYLE = """
import unittest

from mdlite import render


class RenderTest(unittest.TestCase):
    def test_marks(self):
        self.assertIn("em", render("a *b* **c**"))


if __name__ == "__main__":
    unittest.main()
"""

PYTEST_STYLE = """
from mdlite import render


def test_marks():
    assert "em" in render("a *b* **c**")
"""

# no pytest configuration: the project runs `python test.py`
PLAIN = '[project]\nname = "mdlite"\nversion = "0"\n'
CHECKS = (
    '[tool.pytest.ini_options]\ntestpaths = ["checks"]\npython_files = ["check_*.py"]\n'
    'pythonpath = ["."]\n'
)


def _run(tmp: Path, base: dict[str, str], new: str, exits: tuple[int, ...]) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp, {"mdlite/__init__.py": RENDER, **base}, {"mdlite/__init__.py": new}, "render", exits
    )
    return data


def _catching(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in data["kept"] if c["evidence"].get("catches_change")]


@pytest.mark.parametrize("tests", [UNITTEST_STYLE, PYTEST_STYLE], ids=["unittest", "pytest"])
def test_a_change_only_a_top_level_test_py_reaches_is_caught(tmp_path: Path, tests: str) -> None:
    data = _run(tmp_path, {"pyproject.toml": PLAIN, "test.py": tests}, RENDER_NEW, (0,))
    assert data["framework"]["named_files"] == ["test.py"]
    kept = _catching(data)
    assert kept, data["notes"]
    # what the head renders now, asserted by a test the parent fails
    assert any("<strong>c</strong>" in str(case["evidence"]) for case in kept), kept
    for case in kept:  # a name pytest's own run collects too
        assert fnmatch.fnmatch(Path(case["path"]).name, "test_*.py"), case["path"]


def test_a_change_keeping_behaviour_claims_nothing(tmp_path: Path) -> None:
    data = _run(tmp_path, {"pyproject.toml": PLAIN, "test.py": UNITTEST_STYLE}, RENDER_SAME, (1, 4))
    assert data["framework"]["named_files"] == ["test.py"]
    assert not _catching(data)


def test_the_projects_python_files_are_its_tests_and_name_what_nova_writes(
    tmp_path: Path,
) -> None:
    base = {"pyproject.toml": CHECKS, "checks/check_render.py": PYTEST_STYLE}
    data = _run(tmp_path, base, RENDER_NEW, (0,))
    assert data["framework"]["name_patterns"] == ["check_*.py"]
    assert data["framework"]["test_dirs"][0] == "checks"
    kept = _catching(data)
    assert kept, data["notes"]
    assert any("<strong>c</strong>" in str(case["evidence"]) for case in kept), kept
    for case in kept:
        assert fnmatch.fnmatch(Path(case["path"]).name, "check_nova_*.py"), case["path"]


def test_a_test_py_without_tests_is_no_test_file(repo: GitRepo) -> None:
    repo.write("mdlite/__init__.py", RENDER)
    repo.write("test.py", "import mdlite\n\nprint(mdlite.render('*a*'))\n")  # a script
    repo.write("tests.py", UNITTEST_STYLE)
    repo.write("setup.cfg", "[tool:pytest]\naddopts = -q\n")
    repo.commit("base")
    fw = detect_framework(repo.path)
    assert fw is not None
    assert fw.named_files == ("tests.py",)
    assert fw.is_test_name("tests.py") and not fw.is_test_name("test.py")
    assert fw.nova_file("mdlite") == "test_nova_mdlite.py"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("setup.cfg", "[tool:pytest]\npython_files = check_*.py\n  spec_*.py\n"),
        ("tox.ini", "[pytest]\npython_files = check_*.py spec_*.py\n"),
        ("pytest.ini", "[pytest]\npython_files = check_*.py spec_*.py\n"),
        ("pyproject.toml", '[tool.pytest.ini_options]\npython_files = "check_*.py spec_*.py"\n'),
    ],
)
def test_python_files_is_read_from_each_configuration_file(
    repo: GitRepo, name: str, text: str
) -> None:
    repo.write(name, text)
    repo.write("tests/check_a.py", PYTEST_STYLE)
    repo.write("tests/test_helpers.py", "")
    repo.commit("base")
    fw = detect_framework(repo.path)
    assert fw is not None
    assert fw.name_patterns == ("check_*.py", "spec_*.py")
    assert fw.is_test_name("tests/check_a.py") and not fw.is_test_name("tests/test_helpers.py")
    assert fw.nova_file("a") == "check_nova_a.py"


def test_a_pattern_naming_every_module_is_left_out(repo: GitRepo) -> None:
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\npython_files = ["*.py"]\n')
    repo.write("mdlite/__init__.py", RENDER)
    repo.write("tests/test_a.py", PYTEST_STYLE)
    repo.commit("base")
    fw = detect_framework(repo.path)
    assert fw is not None
    assert not fw.is_test_name("mdlite/__init__.py") and fw.is_test_name("tests/test_a.py")


def test_python_files_naming_no_file_nova_could_write_keeps_the_default(repo: GitRepo) -> None:
    repo.write("pytest.ini", "[pytest]\npython_files = tests.py\n")
    repo.write("app/tests.py", PYTEST_STYLE)
    repo.commit("base")
    fw = detect_framework(repo.path)
    assert fw is not None
    assert fw.name_patterns == ("tests.py", "test_*.py")
    assert fw.is_test_name("app/tests.py") and fw.nova_file("a") == "test_nova_a.py"


def test_a_copy_of_a_check_file_with_a_steered_input_is_named_by_python_files(
    tmp_path: Path,
) -> None:
    """Amplification's input variants of a test the project names ``check_*.py``: the
    copy is ``check_nova_vary_...`` (the project's run collects it) and names its origin."""
    _repo, data = sample_testgen(
        tmp_path,
        {
            "pyproject.toml": CHECKS.replace('"checks"', '"tests"'),
            "reader/__init__.py": "",
            "reader/core.py": READER,
            "tests/check_core.py": VARY_TESTS.replace("tests/test_core", "tests/check_core"),
        },
        {"reader/core.py": READER_NEW},
        "a word starting with # is a comment",
    )
    facts = amplified(data, "words")
    assert facts, data["notes"]
    assert str(facts[0]["amplifies"]).startswith("tests/check_core.py::test_words_split")
    kept = _catching(data)
    assert kept and all(
        fnmatch.fnmatch(Path(case["path"]).name, "check_nova_*.py") for case in kept
    ), kept
