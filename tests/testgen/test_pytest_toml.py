"""pytest 9 reads its settings from ``pytest.toml`` / ``.pytest.toml`` (a ``[pytest]``
table of native TOML) and from pyproject's ``[tool.pytest]``. A project whose
``.pytest.toml`` put ``--cov`` in addopts had every measured run refused (Nova turns
pytest-cov off, and pytest then rejects ``--cov``); the drop reason was the run's last
line, ``rootdir: ...``, not the error. Real pytest runs on a real project in tmp."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bot.testgen.amplify import pins_behaviour
from bot.testgen.frameworks import detect_framework
from bot.testgen.runners.python import collect_error, measured_args, project_addopts

TOML = '[pytest]\nminversion = "9.0"\naddopts = ["--cov=pkg", "--cov-append", "-ra"]\n'


def test_pytest_toml_and_its_hidden_twin_are_read_first(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = -q\n")
    (tmp_path / ".pytest.toml").write_text(TOML)
    assert project_addopts(tmp_path) == ["--cov=pkg", "--cov-append", "-ra"]
    assert measured_args(tmp_path) == ["-p", "no:pytest_cov", "-o", "addopts=-ra"]
    (tmp_path / "pytest.toml").write_text("[pytest]\n")  # first, even when empty
    assert project_addopts(tmp_path) is None
    fw = detect_framework(tmp_path)
    assert fw is not None and fw.name == "pytest" and "pytest.toml" in fw.evidence


def test_pyproject_tool_pytest_in_native_toml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\n\n[tool.pytest]\naddopts = ["--cov", "pkg", "-q"]\n'
    )
    assert measured_args(tmp_path) == ["-p", "no:pytest_cov", "-o", "addopts=-q"]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    (tmp_path / "tox.ini").write_text("[pytest]\naddopts = --cov=pkg\n")
    assert project_addopts(tmp_path) == ["--cov=pkg"]  # pyproject without pytest: next


def test_the_measured_run_is_accepted_and_a_refusal_names_its_error(tmp_path: Path) -> None:
    (tmp_path / ".pytest.toml").write_text(TOML)
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    refused = subprocess.run(
        [*base, "-p", "no:pytest_cov", "test_one.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 4  # a usage error
    assert collect_error(refused.stdout + refused.stderr).startswith("unrecognized arguments")
    ran = subprocess.run(
        [*base, *measured_args(tmp_path), "test_one.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_call_one_side_refuses_pins_no_behaviour() -> None:
    refused = "raised TypeError('Box.__init__() takes 2 positional arguments but 3 were given')"
    assert not pins_behaviour({"changed": True, "head": "Box(1, 2)", "parent": refused})
    keyword = "raised TypeError(\"f() got an unexpected keyword argument 'mode'\")"
    assert not pins_behaviour({"changed": True, "head": "1", "parent": keyword})
    assert pins_behaviour({"changed": True, "head": "2", "parent": "returned 1"})
    assert pins_behaviour({"changed": True, "head": "1", "parent": "raised TypeError('bad')"})
    assert not pins_behaviour({"changed": True, "new_name": True, "head": "1"})
    assert not pins_behaviour({"changed": False, "head": "1", "parent": "the same"})
