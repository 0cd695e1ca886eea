"""A project that keeps its tests beside its modules at the top (``test_x.py`` beside
``x.py``, no test folder): a copy of such a test (amplification's input variants) is
written beside it, and the top folder stays closed to a project with a test folder."""

from __future__ import annotations

import pytest

from bot.testgen.frameworks import detect_framework
from bot.testgen.workspace import Workspace, WriteRefused
from tests.conftest import GitRepo

TEST = "import calc\n\n\ndef test_double():\n    assert calc.double(2) == 4\n"


def test_a_top_level_test_gets_its_copies_beside_it(repo: GitRepo) -> None:
    repo.write("calc.py", "def double(x):\n    return 2 * x\n")
    repo.write("test_calc.py", TEST)
    repo.commit("tests at the top")
    with Workspace(repo.path, "HEAD", detect_framework(repo.path)) as ws:
        assert ws.write_test("test_nova_vary_test_calc.py", TEST) == "test_nova_vary_test_calc.py"
        assert ws.write_test("tests/test_nova_calc.py", TEST) == "tests/test_nova_calc.py"
        with pytest.raises(WriteRefused, match="tests go under"):
            ws.write_test("lib/test_nova_calc.py", TEST)  # a folder that holds no test


def test_the_top_stays_closed_when_the_project_has_a_test_folder(repo: GitRepo) -> None:
    repo.write("calc.py", "def double(x):\n    return 2 * x\n")
    repo.write("test_calc.py", TEST)  # a stray one at the top
    repo.write("tests/test_more.py", TEST)
    repo.commit("a test folder")
    with Workspace(repo.path, "HEAD", detect_framework(repo.path)) as ws:
        with pytest.raises(WriteRefused, match="tests go under tests/"):
            ws.write_test("test_nova_vary_test_calc.py", TEST)
        assert ws.write_test("tests/test_nova_calc.py", TEST) == "tests/test_nova_calc.py"
