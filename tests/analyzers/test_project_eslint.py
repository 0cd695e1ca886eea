"""The project's own ESLint, as the project configured it, in the sandbox: a real ESLint
from npm (skipped where npm or the registry is not at hand) and a config that is code — it
reports what it can see (a token in its environment) and do (write to the checkout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.analyzers.projects import assert_confined, npm_project
from tests.conftest import GitRepo, run

pytestmark = pytest.mark.slow

CONFIG = """import fs from "node:fs";
const probe = {
  meta: { type: "problem" },
  create(context) {
    return {
      Program(node) {
        let wrote = "no";
        try { fs.writeFileSync("written-by-config.txt", "x"); wrote = "yes"; } catch { }
        const token = process.env.GITHUB_TOKEN ?? "absent";
        context.report({ node, message: `token=${token} wrote=${wrote}` });
      },
    };
  },
};
export default [
  {
    plugins: { probe: { rules: { env: probe } } },
    rules: { "no-debugger": "error", eqeqeq: "warn", "probe/env": "warn" },
  },
];
"""


@pytest.fixture(scope="module")
def with_eslint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with ESLint 9 installed from npm (once for the module)."""
    return npm_project(tmp_path_factory.mktemp("eslint-project"), "eslint@9", type="module")


def test_the_projects_eslint_runs_sandboxed_instead_of_oxlint(
    with_eslint: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_notarealtokenatall")
    repo = GitRepo(with_eslint)
    repo.write(".gitignore", "node_modules/\n")
    repo.write("eslint.config.js", CONFIG)
    repo.write("src/a.js", "export const x = 1;\n")
    repo.commit("base")
    repo.write("src/a.js", "export function f(a) {\n  debugger;\n  return a == 1;\n}\n")
    repo.commit("f")
    result = run("review", "HEAD", "--repo", str(repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    got = {(c["origin"], c["line"], c["rule"]): c for c in data["comments"]}
    assert ("eslint", 2, "no-debugger") in got and ("eslint", 3, "eqeqeq") in got
    assert not [c for c in data["comments"] if c["origin"] == "oxlint"]
    probe = got[("eslint", 1, "probe/env")]["body"]
    assert_confined(probe, repo.path / "written-by-config.txt")
    # a range the checkout does not hold: the project's ESLint (its config and install
    # are the checkout's) leaves the files to oxlint, which checks a copy of the head
    repo.git("checkout", "-q", "HEAD~1")
    result = run("review", "HEAD..main", "--repo", str(repo.path), "-o", "json", "-q")
    origins = {c["origin"] for c in json.loads(result.stdout)["comments"]}
    assert origins == {"oxlint"}
