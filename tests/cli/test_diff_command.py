"""``nova diff`` prints the numbered diff the model sees: the same style setting decides."""

from __future__ import annotations

import json

import pytest

from tests.conftest import GitRepo, run


@pytest.fixture
def changed(repo: GitRepo) -> GitRepo:
    repo.write("app.py", "a = 1\nb = 2\n")
    repo.commit("base")
    repo.write("app.py", "a = 1\nb = 3\n")
    repo.commit("change b")
    return repo


def test_default_style_is_compact(changed: GitRepo) -> None:
    result = run("diff", "--repo", str(changed.path))
    assert result.exit_code == 0 and "2 + b = 3" in result.stdout
    assert "NEW_LINE_" not in result.stdout


def test_the_environment_sets_the_style(changed: GitRepo, monkeypatch) -> None:
    monkeypatch.setenv("NOVA_DIFF_STYLE", "labeled")
    result = run("diff", "--repo", str(changed.path))
    assert result.exit_code == 0 and "NEW_LINE_2: + b = 3" in result.stdout
    # the flag beats the environment
    assert "NEW_LINE_" not in run("diff", "--repo", str(changed.path), "--style", "compact").stdout


def test_nova_toml_sets_the_style(repo: GitRepo) -> None:
    repo.write(".nova.toml", 'diff_style = "labeled"\n')
    repo.write("app.py", "a = 1\n")
    repo.commit("base with config")
    repo.write("app.py", "a = 2\n")
    repo.commit("change a")
    result = run("diff", "--repo", str(repo.path))
    assert result.exit_code == 0 and "NEW_LINE_1: + a = 2" in result.stdout


def test_a_bad_style_in_the_environment_is_a_config_error(changed: GitRepo, monkeypatch) -> None:
    monkeypatch.setenv("NOVA_DIFF_STYLE", "fancy")
    result = run("diff", "--repo", str(changed.path))
    assert result.exit_code == 2 and "NOVA_DIFF_STYLE" in result.stderr


def test_json_format_ignores_the_style(changed: GitRepo, monkeypatch) -> None:
    monkeypatch.setenv("NOVA_DIFF_STYLE", "labeled")
    data = json.loads(run("diff", "--repo", str(changed.path), "--format", "json").stdout)
    assert [f["path"] for f in data["files"]] == ["app.py"]


def test_help_names_the_setting() -> None:
    assert "NOVA_DIFF_STYLE" in run("diff", "--help").stdout
