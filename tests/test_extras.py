"""The lean install: what is not in the core names its extra in one line (exit 2).

A module is made absent the way Python itself documents: ``sys.modules[name] = None`` makes
both ``import name`` and ``find_spec(name)`` fail as if it were not installed. The real lean
install (a fresh venv without extras) is exercised by .ci/run.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import cli
from bot.config import load_settings
from bot.errors import ConfigError
from bot.llm.factory import make_chat_model
from tests.conftest import GitRepo
from tests.test_testgen import build_python_sample

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _names(reqs: list[str]) -> set[str]:
    return {r.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip().lower()
            for r in reqs}


def test_the_core_leaves_providers_testgen_and_mcp_to_extras() -> None:
    core = _names(PROJECT["dependencies"])
    assert {"langchain-openai", "ruff", "langgraph"} <= core
    heavy = {"langchain-anthropic", "hypothesis", "coverage", "pytest", "mcp", "black"}
    assert not core & heavy
    extras = PROJECT["optional-dependencies"]
    assert set(extras["all"][0].split("[")[1].rstrip("]").split(",")) == \
        set(extras) - {"all", "test"}
    assert "nova-bot[all]" in extras["test"]  # CI's `.[test]` installs every extra


def test_testgen_names_its_extra(repo: GitRepo, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    build_python_sample(repo)
    monkeypatch.setitem(sys.modules, "coverage", None)
    result = CliRunner().invoke(cli, ["testgen", "HEAD", "--repo", str(repo.path), "-q",
                                      "--patch-dir", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        'nova: error: nova testgen needs coverage, not installed in this Python: '
        'pip install "nova-bot[testgen]"']
    assert repo.git("branch", "--list", "nova/*") == ""


def test_anthropic_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)
    settings = load_settings({"llm_model": "anthropic:claude-x", "llm_api_key": "k"},
                             env={})
    with pytest.raises(ConfigError, match=r'pip install "nova-bot\[anthropic\]"'):
        make_chat_model(settings)


def test_mcp_serve_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    result = CliRunner().invoke(cli, ["mcp", "serve"], catch_exceptions=False)
    assert result.exit_code == 2
    assert 'pip install "nova-bot[mcp]"' in result.stderr
