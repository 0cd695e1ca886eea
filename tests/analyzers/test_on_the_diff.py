"""Linters' findings on the diff, end to end through ``nova review``: results files
(eslint's SARIF, shellcheck's checkstyle), analyzers the repository declares, the filter
modes, the merge with the model's findings and the coverage note. Real git repositories,
real subprocesses, the local OpenAI-compatible server."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.conftest import GitRepo, run
from tests.servers.openai_server import FakeOpenAI, text

DATA = Path(__file__).parents[1] / "data" / "analyzers"

APP_BASE = (
    """import { render } from "./render.js";

export function start(root) {
  if (root == null) {
    return;
  }
  render(root);
}
"""
    + "".join(f"export const filler{i} = {i};\n" for i in range(20))
    + """
export function legacy(x) {
  return x == 1;
}
"""
)
DEPLOY_BASE = (
    '#!/bin/sh\n# Deploy the built site.\nset -eu\ntarget=$1\necho "deploying to $target"\n'
)


@pytest.fixture
def polyglot(repo: GitRepo) -> GitRepo:
    """Python, JavaScript, shell and TypeScript files changed in one commit."""
    repo.write("web/app.js", APP_BASE)
    repo.write("web/legacy.js", "var a = 1;\n")
    repo.write("scripts/deploy.sh", DEPLOY_BASE)
    repo.write("pkg/util.py", "def half(x):\n    return x / 2\n")
    repo.commit("base")
    lines = APP_BASE.splitlines(keepends=True)
    repo.write("web/app.js", "".join(lines[:3] + ["  const unused = 42;\n"] + lines[3:]))
    repo.write("scripts/deploy.sh", DEPLOY_BASE + "cp -r build/* $target\n")
    repo.write("pkg/util.py", "import os\n\n\ndef half(x):\n    return x / 2\n")
    repo.write("web/types.ts", "export type Id = string;\n")
    repo.commit("Deploy script, an unused variable and types")
    return repo


def eslint_sarif(repo: GitRepo, tmp_path: Path) -> Path:
    """eslint's real SARIF (absolute file:// URIs) plus findings outside the diff: the
    ``==`` at new line 5 (a context line), line 31 (unchanged, outside every hunk) and a
    file the change does not touch."""
    doc = json.loads((DATA / "eslint.sarif").read_text().replace("{ROOT}", str(repo.path)))
    run_ = doc["runs"][0]
    template = run_["results"][1]
    for uri, line in (
        (f"file://{repo.path}/web/app.js", 31),
        (f"file://{repo.path}/web/legacy.js", 1),
    ):
        extra = json.loads(json.dumps(template))
        extra["locations"][0]["physicalLocation"]["artifactLocation"] = {"uri": uri}
        extra["locations"][0]["physicalLocation"]["region"] = {"startLine": line}
        run_["results"].append(extra)
    path = tmp_path / "eslint.sarif"
    path.write_text(json.dumps(doc))
    return path


def shellcheck_xml(tmp_path: Path) -> Path:
    text_ = (
        (DATA / "shellcheck.xml")
        .read_text()
        .replace(
            "</checkstyle>",
            "<file name='/src/scripts/deploy.sh' >\n<error line='6' column='15' "
            "severity='info' message='Double quote to prevent globbing and word splitting.' "
            "source='ShellCheck.SC2086' />\n</file>\n</checkstyle>",
        )
    )
    path = tmp_path / "shellcheck.xml"  # the second file: a container's root, not ours
    path.write_text(text_)
    return path


def review_json(repo: GitRepo, *args: str) -> dict:
    """``nova review HEAD -o json`` of ``repo`` with ``args``; it must exit 0."""
    result = run("review", "HEAD", "--repo", str(repo.path), "-o", "json", "-q", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def model_says(*comments: dict) -> str:
    return json.dumps({"summary": "Mostly fine.", "comments": list(comments)})


@pytest.mark.slow
def test_eslint_and_shellcheck_results_land_on_the_right_lines_with_the_models(
    polyglot: GitRepo, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    llm_env.enqueue(
        text(
            model_says(
                {
                    "path": "web/app.js",
                    "line": 4,
                    "code": "  const unused = 42;",
                    "severity": "warning",
                    "body": "`unused` is never read (no-unused-vars): drop it.",
                },
                {
                    "path": "pkg/util.py",
                    "line": 5,
                    "code": "    return x / 2",
                    "severity": "info",
                    "body": "Integer input gives a float; intended?",
                },
            )
        )
    )
    data = review_json(
        polyglot,
        "--analyzers",  # the .ts file stays uncovered: no oxlint
        "ruff",
        "--analyzer-results",
        str(eslint_sarif(polyglot, tmp_path)),
        "--analyzer-results",
        f"{shellcheck_xml(tmp_path)}:checkstyle",
    )
    placed = {(c["path"], c["line"], c["origin"]): c for c in data["comments"]}
    assert set(placed) == {
        ("web/app.js", 4, "eslint"),
        ("scripts/deploy.sh", 6, "shellcheck"),
        ("pkg/util.py", 1, "ruff"),
        ("pkg/util.py", 5, "llm"),
    }
    merged = placed[("web/app.js", 4, "eslint")]  # eslint's and the model's: one comment
    assert merged["severity"] == "error" and merged["rule"] == "no-unused-vars"
    assert merged["url"] == "https://eslint.org/docs/latest/rules/no-unused-vars"
    assert "never used" in merged["body"] and "The model says the same" in merged["body"]
    sc = placed[("scripts/deploy.sh", 6, "shellcheck")]
    assert (sc["severity"], sc["rule"]) == ("info", "SC2086")
    summary = data["summary"]
    assert "1 .ts file: no analyzer configured" in summary
    assert (
        "eslint: 1 finding(s) used; left out: 2 not on added lines (filter mode added); "
        "1 in files this review does not cover" in summary
    )
    assert (
        "shellcheck: 1 finding(s) used; left out: 1 on paths outside the repository "
        "(e.g. /src/scripts/deploy.sh)" in summary
    )
    assert data["unplaced"] == []


@pytest.mark.parametrize(
    "mode, inline, summary_lines",
    [
        ("added", {4}, set()),
        ("diff_context", {4, 5}, set()),
        ("file", {4, 5}, {31}),
    ],
)
def test_filter_modes(
    polyglot: GitRepo, tmp_path: Path, mode: str, inline: set[int], summary_lines: set[int]
) -> None:
    data = review_json(
        polyglot, "--filter-mode", mode, "--analyzer-results", str(eslint_sarif(polyglot, tmp_path))
    )
    assert {c["line"] for c in data["comments"] if c["origin"] == "eslint"} == inline
    held = [u for u in data["unplaced"] if u["path"] == "web/app.js"]
    assert {u["line"] for u in held} == summary_lines
    assert all("outside the diff" in u["reason"] for u in held)


def test_nofilter_puts_other_files_in_the_summary_only(polyglot: GitRepo, tmp_path: Path) -> None:
    data = review_json(
        polyglot,
        "--analyzer-results",
        str(eslint_sarif(polyglot, tmp_path)),
        "--filter-mode",
        "nofilter",
    )
    other = [u for u in data["unplaced"] if u["path"] == "web/legacy.js"]
    assert len(other) == 1 and "not a file of this change" in other[0]["reason"]
    assert all(c["path"] != "web/legacy.js" for c in data["comments"])


def test_an_unreadable_results_file_is_a_note_not_a_failure(
    polyglot: GitRepo, tmp_path: Path
) -> None:
    bad = tmp_path / "broken.sarif"
    bad.write_text('{"runs": [')
    result = run(
        "review",
        "HEAD",
        "--repo",
        str(polyglot.path),
        "-o",
        "json",
        "-q",
        "--analyzer-results",
        f"{bad}:sarif",
        "--analyzer-results",
        str(tmp_path / "missing.xml"),
    )
    assert result.exit_code == 0
    summary = json.loads(result.stdout)["summary"]
    assert f"analyzer results {bad}: not valid JSON" in summary
    assert "missing.xml: cannot be read: No such file or directory; not used" in summary


def test_results_files_from_the_environment(
    polyglot: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "NOVA_ANALYZER_RESULTS", f"{eslint_sarif(polyglot, tmp_path)}, {shellcheck_xml(tmp_path)}"
    )
    data = review_json(polyglot)
    assert {c["origin"] for c in data["comments"]} == {"eslint", "shellcheck", "ruff"}


def py(code: str) -> str:
    """A command line that runs ``code`` with this Python (what a declared analyzer runs)."""
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


DIAG = (
    "import json, os; print(json.dumps({'message': 'env: ' + ' '.join(sorted(os.environ)), "
    "'location': {'path': 'deploy.sh', 'range': {'start': {'line': 6}}}, "
    "'severity': 'ERROR', 'code': {'value': 'ENV1'}}))"
)


def declare(repo: GitRepo, body: str) -> None:
    repo.write(".nova.toml", body)
    repo.commit("declare analyzers")


def test_declared_analyzers_run_concurrently_and_failures_are_notes(
    polyglot: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "x" * 36)
    monkeypatch.setenv("NOVA_LLM_API_KEY", "sk-" + "y" * 30)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "very-secret")
    config = f"""
[[analyzer]]
name = "envdump"
command = {json.dumps(py(DIAG))}
format = "rdjsonl"
workdir = "scripts"
extensions = [".ts"]

[[analyzer]]
name = "slow"
command = "sleep 30"
timeout = 0.5

[[analyzer]]
name = "broken"
command = ["sh", "-c", "echo 'config not found: .lintrc' >&2; exit 2"]

[[analyzer]]
name = "garbage"
command = "echo this is not a results file"
"""
    base = polyglot.git("rev-parse", "HEAD").strip()
    polyglot.git("checkout", "-q", "-b", "feature", f"{base}~1")
    declare(polyglot, config)
    polyglot.git("cherry-pick", base)  # the change comes after the declaration
    data = review_json(polyglot, "--analyzers", "ruff")
    (dump,) = [c for c in data["comments"] if c["origin"] == "envdump"]
    assert (dump["path"], dump["line"], dump["severity"]) == ("scripts/deploy.sh", 6, "error")
    names = set(dump["body"].removeprefix("ENV1: env: ").split())
    assert "PATH" in names and "HOME" in names
    assert not names & {"GITHUB_TOKEN", "NOVA_LLM_API_KEY", "AWS_SECRET_ACCESS_KEY"}
    summary = data["summary"]
    assert "analyzer slow failed: timed out after 0.5s" in summary
    assert "analyzer broken failed: exited with 2: config not found: .lintrc" in summary
    assert "analyzer garbage: its output could not be read: format not recognised" in summary
    # .py: ruff; .sh: envdump named deploy.sh; .ts: envdump declares it
    assert "1 .js file: no analyzer configured" in summary and ".ts file" not in summary


def test_a_change_cannot_declare_an_analyzer_that_runs(polyglot: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    polyglot.write(".nova.toml", f'[[analyzer]]\nname = "evil"\ncommand = "touch {marker}"\n')
    polyglot.commit("add an analyzer in the change itself")
    result = run("review", "HEAD~1..HEAD", "--repo", str(polyglot.path), "-o", "json", "-q")
    assert result.exit_code == 0
    assert not marker.exists()
    assert "this change edits .nova.toml" in json.loads(result.stdout)["summary"]


def test_declared_analyzers_need_a_local_checkout(polyglot: GitRepo, tmp_path: Path) -> None:
    """A host without a checkout (a pull request read through the API): no command runs."""
    from bot.analyzers.collect import analyze
    from bot.analyzers.declared import DeclaredAnalyzer
    from bot.hosts.git.source import GitSource
    from bot.review.settings import ReviewSettings

    marker = tmp_path / "ran"
    settings = ReviewSettings(
        analyzers="ruff", declared_analyzers=(DeclaredAnalyzer("lint", f"touch {marker}"),)
    )
    change = GitSource(polyglot.path).fetch("HEAD")
    notes: list[str] = []
    analyze(settings, change, None, None, notes)
    assert not marker.exists()
    assert (
        "the analyzers declared in .nova.toml (lint) did not run: they run only in a "
        "local checkout of the change" in notes
    )


@pytest.mark.parametrize(
    "body, message",
    [
        ('[[analyzer]]\nname = "x"\n', "command must be a string or a list"),
        ('[[analyzer]]\ncommand = "x"\n', "needs a name"),
        ('[[analyzer]]\nname = "x"\ncommand = "x"\ntimeout = 0\n', "timeout must be"),
        ('[[analyzer]]\nname = "x"\ncommand = "x"\nworkdir = "../up"\n', "inside the repository"),
        ('[[analyzer]]\nname = "x"\ncommand = "x"\nformat = "junit"\n', "format must be one of"),
        ('[[analyzer]]\nname = "x"\ncommand = "x"\nshell = true\n', "unknown [[analyzer]] keys"),
    ],
)
def test_bad_declarations_are_configuration_errors(
    polyglot: GitRepo, body: str, message: str
) -> None:
    head = polyglot.git("rev-parse", "HEAD").strip()
    polyglot.git("checkout", "-q", "-b", "feature", f"{head}~1")
    declare(polyglot, body)
    polyglot.git("cherry-pick", head)
    result = run("review", "HEAD", "--repo", str(polyglot.path), "-o", "json", "-q")
    # a broken base config is reported and the review runs without it (issue 27)
    assert result.exit_code == 0, result.stderr
    assert message in result.stderr and message in json.loads(result.stdout)["summary"]


def test_posted_on_a_github_pull_request_and_nothing_outside_its_diff(
    polyglot: GitRepo, gh, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    """The done-when scenario, published: GitHub answers 422 for the whole review if one
    comment is off the diff, so the file mode's line 31 must go to the summary."""
    from tests.hosts.github.support import REPO, pull_from_repo
    from tests.servers.github_server import commentable_lines

    base, head = (polyglot.git("rev-parse", ref).strip() for ref in ("HEAD~1", "HEAD"))
    pr = gh.add_pull(pull_from_repo(polyglot, base, head, title="Deploy script"))
    llm_env.enqueue(
        text(
            model_says(
                {
                    "path": "web/app.js",
                    "line": 4,
                    "code": "  const unused = 42;",
                    "severity": "warning",
                    "body": "'unused' is assigned a value but never used; drop it.",
                }
            )
        )
    )
    result = run(
        "review",
        f"{REPO}#1",
        "--publish",
        "github",
        "--repo",
        str(polyglot.path),
        "-q",
        "-o",
        "json",
        "--filter-mode",
        "file",
        "--analyzers",
        "ruff",
        "--analyzer-results",
        str(eslint_sarif(polyglot, tmp_path)),
        "--analyzer-results",
        f"{shellcheck_xml(tmp_path)}:checkstyle",
    )
    assert result.exit_code == 0, result.stderr
    assert len(gh.reviews) == 1
    inline = [c for c in gh.review_comments if "nova:fp:" in c["body"]]
    assert {(c["path"], c["line"]) for c in inline} == {
        ("web/app.js", 4),
        ("web/app.js", 5),
        ("scripts/deploy.sh", 6),
        ("pkg/util.py", 1),
    }
    for c in inline:
        patch = next(f["patch"] for f in pr.files if f["filename"] == c["path"])
        assert c["line"] in commentable_lines(patch)
    unused = next(c for c in inline if c["line"] == 4)
    assert "no-unused-vars" in unused["body"] and "The model says the same" in unused["body"]
    # the rule links to its documentation (the SARIF rule's helpUri)
    assert (
        "([no-unused-vars](https://eslint.org/docs/latest/rules/no-unused-vars))"
        in (unused["body"])
    )
    (summary,) = gh.issue_comments
    assert "1 .ts file: no analyzer configured" in summary["body"]
    assert "line 31 is outside the diff" in summary["body"]


def test_analyzers_none_turns_ruff_off_but_reads_results_given(
    polyglot: GitRepo, tmp_path: Path
) -> None:
    data = review_json(
        polyglot, "--analyzers", "none", "--analyzer-results", str(eslint_sarif(polyglot, tmp_path))
    )
    assert {c["origin"] for c in data["comments"]} == {"eslint"}
    assert "1 .py file, 1 .sh file, 1 .ts file: no analyzer configured" in data["summary"]
    data = review_json(polyglot, "--analyzers", "none")
    assert data["comments"] == [] and "no analyzer configured" not in data["summary"]


def test_a_reviewdog_suggestion_on_the_line_becomes_a_suggestion(
    polyglot: GitRepo, tmp_path: Path
) -> None:
    fix = {
        "range": {"start": {"line": 6, "column": 15}, "end": {"line": 6, "column": 22}},
        "text": '"$target"',
    }
    results = tmp_path / "shellcheck.rdjsonl"
    results.write_text(
        "\n".join(
            json.dumps(d)
            for d in (
                {
                    "message": "Double quote to prevent globbing and word splitting.",
                    "location": {
                        "path": "scripts/deploy.sh",
                        "range": {"start": {"line": 6, "column": 15}},
                    },
                    "severity": "INFO",
                    "source": {"name": "shellcheck"},
                    "code": {"value": "SC2086"},
                    "suggestions": [fix],
                },
                {
                    "message": "out of range",
                    "location": {"path": "scripts/deploy.sh", "range": {"start": {"line": 6}}},
                    "suggestions": [
                        {
                            **fix,
                            "range": {
                                "start": {"line": 6, "column": 15},
                                "end": {"line": 6, "column": 99},
                            },
                        }
                    ],
                },
            )
        )
    )
    data = review_json(polyglot, "--analyzer-results", str(results))
    fixed, odd = [c for c in data["comments"] if c["path"] == "scripts/deploy.sh"]
    assert fixed["suggestion"] == 'cp -r build/* "$target"'
    assert odd["suggestion"] is None  # columns past the line's end: no suggestion
