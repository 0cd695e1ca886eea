"""The project's own Biome, as the project configured it, in the sandbox: a real Biome from
npm (skipped where npm or the registry is not at hand) on a real change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.analyzers.biome import parse
from bot.analyzers.formats.codequality import parse as parse_issues
from bot.analyzers.report import ResultsError
from tests.analyzers.projects import npm_project
from tests.conftest import GitRepo, run

pytestmark = pytest.mark.slow

CHANGE = "export function f(a) {\n  debugger;\n  return a == 1;\n}\n"
CONFIG = '{"linter": {"rules": {"suspicious": {"noDoubleEquals": "warn"}}}}\n'


@pytest.fixture(scope="module", params=["@biomejs/biome@1", "@biomejs/biome@2"])
def with_biome(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A directory with Biome 1.9 or 2 installed from npm (once for the module each)."""
    return npm_project(tmp_path_factory.mktemp("biome-project"), request.param)


def test_the_projects_biome_runs_sandboxed_instead_of_oxlint(
    with_biome: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_notarealtokenatall")
    # Biome reads BIOME_CONFIG_PATH from its environment: were Nova's environment passed
    # on, this configuration (the linter off) would silence every finding below
    (tmp_path / "biome.json").write_text('{"linter": {"enabled": false}}')
    monkeypatch.setenv("BIOME_CONFIG_PATH", str(tmp_path))
    repo = GitRepo(with_biome)
    repo.write(".gitignore", "node_modules/\n")
    repo.write("biome.json", CONFIG)
    repo.write("src/a.js", "export const x = 1;\n")
    repo.commit("base")
    repo.write("src/a.js", "export const x = 1;\n" + CHANGE)
    repo.commit("f")
    result = run("review", "HEAD", "--repo", str(repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.output
    comments = json.loads(result.stdout)["comments"]
    got = {(c["origin"], c["line"], c["rule"]): c for c in comments}
    debugger = got[("biome", 3, "lint/suspicious/noDebugger")]
    assert debugger["severity"] == "error"
    assert debugger["url"] == "https://biomejs.dev/linter/rules/no-debugger"
    assert got[("biome", 4, "lint/suspicious/noDoubleEquals")]["severity"] == "warning"
    assert not [c for c in comments if c["origin"] == "oxlint"]
    assert "ghp_notarealtokenatall" not in result.output
    # a range the checkout does not hold: Biome (its config and install are the
    # checkout's) leaves the files to oxlint, which checks a copy of the head
    repo.git("checkout", "-q", "HEAD~1")
    result = run("review", "HEAD..main", "--repo", str(repo.path), "-o", "json", "-q")
    origins = {c["origin"] for c in json.loads(result.stdout)["comments"]}
    assert origins == {"oxlint"}


def test_an_invalid_biome_configuration_is_a_failure_not_a_clean_file() -> None:
    with pytest.raises(ValueError, match="configuration"):
        parse(b"")
    assert parse(b"[]") == []


def test_code_quality_issues_are_read_by_lines_or_positions() -> None:
    """Biome writes ``lines.begin``; ty and others write ``positions.begin.line``."""
    issues = [
        {
            "description": "a",
            "check_name": "x",
            "severity": "minor",
            "location": {"path": "a.js", "lines": {"begin": 3}},
        },
        {
            "description": "b",
            "check_name": "y",
            "severity": "blocker",
            "location": {"path": "b.py", "positions": {"begin": {"line": 7}, "end": {"line": 9}}},
        },
        {"description": "no place", "location": {}},
    ]
    [report] = parse_issues(issues, "tool")
    got = [(f.path, f.line, f.end_line, f.rule, f.severity) for f in report.findings]
    assert got == [("a.js", 3, None, "x", "info"), ("b.py", 7, 9, "y", "error")]
    with pytest.raises(ResultsError):
        parse_issues({"diagnostics": []})
