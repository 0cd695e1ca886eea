"""The built-in analyzers end to end through ``nova review``: the real linters (ruff, oxlint,
shellcheck, actionlint, hadolint, from the ``[lint]`` extra) on real files of a real git
repository, each on the change's files only, its findings kept to the added lines."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.analyzers.base import Check, Found, Linter, Workspace, find_program
from bot.analyzers.kinds import tags
from bot.analyzers.registry import analyzers, run_builtin, selected
from bot.change import Comment
from bot.diff import parse_diff
from bot.hosts.git.source import GitSource
from tests.conftest import GitRepo, run

pytestmark = pytest.mark.slow

DEPLOY = "#!/usr/bin/env bash\n# Deploy the site.\nset -eu\ncd $1\n"
LOOSE = "#!/bin/sh\necho $HOME\n"  # shellcheck: SC2086 on line 2, not changed
APP = "export function start(root) {\n  return root;\n}\n"
DOCKERFILE = "FROM python:3.11-slim\nWORKDIR /app\n"
WORKFLOW = """on: issues
jobs:
  greet:
    runs-on: ubuntu-latest
    steps:
      - run: echo hello
"""


@pytest.fixture
def mixed(repo: GitRepo) -> GitRepo:
    """A Python, TypeScript, shell (one script without an extension), Dockerfile and
    workflow change; each file has a problem on an added line, two on lines it keeps."""
    repo.write("bin/deploy", DEPLOY)
    repo.write("bin/loose", LOOSE)
    repo.write("web/app.ts", APP)
    repo.write("Dockerfile", DOCKERFILE)
    repo.write(".github/workflows/greet.yml", WORKFLOW)
    repo.write("pkg/util.py", "def half(x):\n    return x / 2\n")
    repo.write("notes/setup.zsh", "#!/bin/zsh\necho $1\n")
    repo.commit("base")
    repo.write("bin/deploy", DEPLOY + "rm -rf $TARGET/*\n")  # SC2086 on line 5
    repo.write("bin/loose", LOOSE + "echo finished\n")
    repo.write("web/app.ts", APP + "export function stop() {\n  debugger;\n}\n")  # line 5
    repo.write("Dockerfile", DOCKERFILE + "RUN cd /tmp && make\n")  # DL3003 on line 3
    repo.write(
        ".github/workflows/greet.yml",
        WORKFLOW + "      - run: echo ${{ github.event.issue.title }}\n",  # line 7
    )
    repo.write("pkg/util.py", "import os\n\n\ndef half(x):\n    return x / 2\n")  # F401
    repo.write("notes/setup.zsh", "#!/bin/zsh\necho $1\necho $2\n")  # zsh: not shellcheck's
    repo.commit("Deploy, stop, build and greet")
    return repo


@pytest.fixture
def source(mixed: GitRepo) -> Iterator[GitSource]:
    """The mixed repository as Nova's git source (its git processes closed after)."""
    found = GitSource(mixed.path)
    yield found
    found.repo.close()


def review(repo: GitRepo, *args: str, ref: str = "HEAD") -> dict:
    result = run("review", ref, "--repo", str(repo.path), "-o", "json", "-q", *args)
    assert result.exit_code == 0, result.output
    data: dict = json.loads(result.stdout)
    return data


def found(data: dict) -> set[tuple[str, str, int, str]]:
    return {(c["origin"], c["path"], c["line"], c["rule"]) for c in data["comments"]}


def test_every_linter_reports_on_its_files_added_lines_only(mixed: GitRepo) -> None:
    data = review(mixed)
    got = found(data)
    assert ("shellcheck", "bin/deploy", 5, "SC2086") in got  # told by its shebang
    assert ("oxlint", "web/app.ts", 5, "eslint(no-debugger)") in got
    assert ("hadolint", "Dockerfile", 3, "DL3003") in got
    assert ("actionlint", ".github/workflows/greet.yml", 7, "expression") in got
    assert ("ruff", "pkg/util.py", 1, "F401") in got
    # the unchanged `echo $HOME` of bin/loose and the zsh script: nothing
    assert not [c for c in data["comments"] if c["path"] in ("bin/loose", "notes/setup.zsh")]
    added = {
        (f.path, ln.new_no)
        for f in parse_diff(mixed.git("show", "--format=", "HEAD"))
        for h in f.hunks
        for ln in h.lines
        if ln.kind == "added"
    }
    assert {(c["path"], c["line"]) for c in data["comments"]} <= added
    assert data["unplaced"] == []
    assert "1 .zsh file: no analyzer configured" in data["summary"]  # the rest are covered


def test_each_analyzer_can_be_turned_off_and_given_a_severity(
    mixed: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_ANALYZERS_OFF", "shellcheck,oxlint")
    monkeypatch.setenv("NOVA_ANALYZER_SEVERITY", "hadolint=error,actionlint=info")
    data = review(mixed)
    origins = {c["origin"] for c in data["comments"]}
    assert "shellcheck" not in origins and "oxlint" not in origins
    assert {c["severity"] for c in data["comments"] if c["origin"] == "hadolint"} == {"error"}
    assert {c["severity"] for c in data["comments"] if c["origin"] == "actionlint"} == {"info"}
    monkeypatch.delenv("NOVA_ANALYZERS_OFF")
    only = review(mixed, "--analyzers", "hadolint")
    assert {c["origin"] for c in only["comments"]} == {"hadolint"}
    assert review(mixed, "--analyzers", "none")["comments"] == []


def test_the_base_revisions_nova_toml_sets_them_as_toml_lists_and_tables(repo: GitRepo) -> None:
    repo.write(
        ".nova.toml",
        'analyzers_off = ["hadolint"]\nanalyzer_severity = { shellcheck = "error" }\n',
    )
    repo.write("run.sh", "#!/bin/sh\n")
    repo.write("Dockerfile", "FROM debian\n")
    repo.commit("base")
    repo.write("run.sh", "#!/bin/sh\necho $1\n")
    repo.write("Dockerfile", "FROM debian\nRUN cd /x\n")
    repo.commit("change")
    data = review(repo)
    assert {(c["origin"], c["severity"]) for c in data["comments"]} == {("shellcheck", "error")}


def test_the_projects_own_configs_apply(repo: GitRepo) -> None:
    """.shellcheckrc and ruff's pyproject settings are the project's: they win."""
    repo.write(".shellcheckrc", "disable=SC2086\n")
    repo.write("pyproject.toml", '[tool.ruff.lint]\nselect = ["E711"]\n')
    repo.write("go.sh", "#!/bin/sh\n")
    repo.write("m.py", "x = 1\n")
    repo.commit("base")
    repo.write("go.sh", "#!/bin/sh\necho $1\ncd /tmp\n")
    repo.write("m.py", "import os\nx = 1\nif x == None:\n    pass\n")
    repo.commit("change")
    got = found(review(repo))
    assert ("shellcheck", "go.sh", 3, "SC2164") in got
    assert not [f for f in got if f[3] == "SC2086"]
    assert {f for f in got if f[0] == "ruff"} == {("ruff", "m.py", 3, "E711")}


def test_a_range_the_checkout_does_not_hold_is_checked_on_a_copy_of_its_head(
    mixed: GitRepo,
) -> None:
    """The work tree is at the base: the head's files are staged with their configs."""
    mixed.git("checkout", "-q", "HEAD~1")
    data = review(mixed, ref="HEAD..main")
    got = found(data)
    assert ("shellcheck", "bin/deploy", 5, "SC2086") in got
    assert ("oxlint", "web/app.ts", 5, "eslint(no-debugger)") in got
    assert ("hadolint", "Dockerfile", 3, "DL3003") in got
    assert ("actionlint", ".github/workflows/greet.yml", 7, "expression") in got


def test_files_are_told_by_name_then_by_shebang() -> None:
    assert "shell" in tags("bin/setup", "#!/usr/bin/env bash\nset -e\n")
    assert "shell" in tags("scripts/x.sh", None)
    assert "dockerfile" in tags("docker/Dockerfile.dev", None)
    assert "shell" not in tags("README", "#!/usr/bin/env python3\n")
    assert "python" in tags("tool", "#!/usr/bin/env python3\n")
    assert not tags("notes", "plain text\n") - {"text"}


def test_a_check_registers_with_one_entry_and_keeps_findings_elsewhere(
    mixed: GitRepo, source: GitSource
) -> None:
    """The seam the differential type check plugs into: a function over the change and
    its head and base trees. Its findings on changed files are kept to the added lines;
    with ``outside`` its findings in other files are kept (the summary shows them)."""
    change = source.fetch("HEAD")
    seen: list[Workspace] = []

    def callers(ws: Workspace) -> Found:
        seen.append(ws)
        assert ws.base is not None and ws.base.read_text("pkg/util.py") is not None
        found = [
            Comment(path="pkg/util.py", line=1, body="added line"),
            Comment(path="pkg/util.py", line=5, body="unchanged line"),
            Comment(path="pkg/other.py", line=9, body="the change breaks this caller"),
        ]
        return Found(found, notes=["typecheck: 1 caller in an unchanged file"])

    check = Check(
        name="typecheck",
        wants=lambda path, kinds: path.endswith(".py"),
        run=callers,
        available=lambda: "1.0",
        outside=True,
    )
    from bot.analyzers.base import base_tree

    ran = run_builtin(
        [check], change, source.tree(change), base_tree(source, change), mixed.path, 60.0
    )
    assert [f.path for f in seen[0].files] == ["pkg/util.py"]
    kept = {(c.path, c.line, c.origin) for c in ran.comments}
    assert ("pkg/other.py", 9, "typecheck") in kept and "typecheck" in ran.outside
    assert ran.notes == ["typecheck: 1 caller in an unchanged file"]
    # through collect, the finding on an unchanged line of a changed file is left out
    from bot.analyzers import collect

    analysis = collect._builtin_comments(ran, change)
    assert {(c.path, c.line) for c in analysis} == {("pkg/util.py", 1), ("pkg/other.py", 9)}
    # a check that decides by the whole change runs with no file it wants
    blind = Check(
        name="typecheck",
        wants=lambda path, kinds: False,
        run=callers,
        available=lambda: "1.0",
        applies=lambda change: True,
    )
    run_builtin([blind], change, source.tree(change), base_tree(source, change), mixed.path, 60.0)
    assert len(seen) == 2 and seen[1].files == ()


def test_the_registry_names_each_analyzer_once_and_selects_by_name() -> None:
    names = [a.name for a in analyzers()]
    assert len(names) == len(set(names))
    assert all(isinstance(a, Linter | Check) for a in analyzers())
    assert [a.name for a in selected("ruff,hadolint", ())] == ["ruff", "hadolint"]
    assert "hadolint" not in [a.name for a in selected("auto", ("hadolint",))]
    assert selected("none", ()) == []


def test_a_missing_linter_is_named_with_its_extra(mixed: GitRepo, source: GitSource) -> None:
    """A linter that is not installed: the review says so and installs nothing."""
    fake = Linter(
        name="shellcheck",
        wants=lambda path, kinds: "shell" in kinds,
        program="no-such-shellcheck",
        args=(),
        parse=lambda data: [],
        package="x",
    )
    change = source.fetch("HEAD")
    ran = run_builtin([fake], change, source.tree(change), None, mixed.path, 60.0)
    assert ran.notes == [
        'shellcheck did not run on 3 file(s): it is not installed (pip install "nova-bot[lint]")'
    ]


def test_a_linter_that_fails_is_named_and_the_others_still_report(
    mixed: GitRepo, source: GitSource
) -> None:
    broken = Linter(
        name="shellcheck",
        wants=lambda path, kinds: "shell" in kinds,
        program=find_program("shellcheck") or "shellcheck",
        args=("--no-such-option",),
        parse=lambda data: [],
        package="x",
    )
    hadolint = next(a for a in analyzers() if a.name == "hadolint")
    change = source.fetch("HEAD")
    ran = run_builtin([broken, hadolint], change, source.tree(change), None, mixed.path, 60.0)
    assert any(n.startswith("shellcheck did not run: exited with") for n in ran.notes)
    assert [name for name, _ in ran.sources] == ["hadolint"]


def test_doctor_lists_the_analyzers_and_their_versions() -> None:
    result = run("doctor")
    lines = [ln for ln in result.output.splitlines() if "analyzer " in ln]
    for name in ("ruff", "oxlint", "shellcheck", "actionlint", "hadolint"):
        (line,) = [ln for ln in lines if f"analyzer {name} " in ln]
        assert line.lstrip().startswith("ok") and any(ch.isdigit() for ch in line)
    version = subprocess.run(
        [find_program("shellcheck") or "shellcheck", "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (line,) = [ln for ln in lines if "analyzer shellcheck " in ln]
    assert line.rsplit(": ", 1)[1] in version


def test_the_linters_run_without_tokens(mixed: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A linter's environment is a declared analyzer's: no token (here shellcheck's
    config names an env var it would read; the run's env is checked directly)."""
    from bot.analyzers.running import _env

    monkeypatch.setenv("GITHUB_TOKEN", "ghp_notreal")
    env = _env()
    assert "GITHUB_TOKEN" not in env
    assert Path(find_program("shellcheck") or "").parent.as_posix() in env["PATH"]


def test_linters_past_the_time_budget_are_named(
    mixed: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_ANALYZER_TIMEOUT", "0.000001")
    data = review(mixed)
    for name in ("oxlint", "shellcheck", "actionlint", "hadolint"):
        assert (
            f"{name} did not run: the analyzers' time budget ran out (NOVA_ANALYZER_TIMEOUT)"
            in data["summary"]
        )
    assert {c["origin"] for c in data["comments"]} <= {"ruff"}


def test_an_unknown_analyzer_or_severity_is_a_usage_error(
    mixed: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = run("review", "HEAD", "--repo", str(mixed.path), "--analyzers", "shelcheck")
    assert bad.exit_code == 2 and "unknown analyzer 'shelcheck'" in bad.stderr
    monkeypatch.setenv("NOVA_ANALYZER_SEVERITY", "hadolint=loud")
    bad = run("review", "HEAD", "--repo", str(mixed.path))
    assert bad.exit_code == 2 and "'hadolint=loud' is not NAME=SEVERITY" in bad.stderr


def test_a_link_is_not_linted_as_the_path_it_holds(repo: GitRepo) -> None:
    repo.write("real.sh", "#!/bin/sh\necho hi\n")
    repo.commit("base")
    (repo.path / "link.sh").symlink_to("real.sh")
    repo.commit("a link")
    assert review(repo)["comments"] == []
