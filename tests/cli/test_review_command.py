"""``nova review`` end to end: real git repos, the local OpenAI-compatible server."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import cli
from tests.conftest import GitRepo
from tests.servers.openai_server import FakeOpenAI, error, text, tool_call

SECRET = "sk-test-secret-key-1234567890"


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def answer(comments: list[dict], summary: str = "Looks reasonable.") -> str:
    return json.dumps({"summary": summary, "comments": comments})


@pytest.fixture
def py_repo(repo: GitRepo) -> GitRepo:
    repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.write(
        "pkg/calc.py",
        "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n",
    )
    repo.commit("Add div\n\nDivision helper.")
    return repo


def test_no_model_runs_ruff_and_says_how_to_turn_the_llm_on(py_repo: GitRepo) -> None:
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["change"]["title"] == "Add div"
    f401 = [c for c in data["comments"] if c["body"].startswith("F401")]
    assert f401 and f401[0]["line"] == 1 and f401[0]["origin"] == "ruff"
    assert f401[0]["suggestion"] == ""  # ruff's fix deletes the line
    assert "LLM review is off" in data["summary"] and "NOVA_LLM_MODEL" in data["summary"]
    assert data["stats"]["llm_calls"] == 0


def test_text_output_groups_by_file_and_shows_the_line(py_repo: GitRepo) -> None:
    result = run("review", "--repo", str(py_repo.path), "-q")
    assert result.exit_code == 0
    assert "pkg/calc.py\n" in result.stdout
    assert "1 | import os" in result.stdout and "F401" in result.stdout


def test_fail_on_warning_exits_1(py_repo: GitRepo) -> None:
    assert run("review", "--repo", str(py_repo.path), "-q", "--fail-on", "warning").exit_code == 1
    assert run("review", "--repo", str(py_repo.path), "-q", "--fail-on", "error").exit_code == 0


def test_not_a_repository(tmp_path: Path) -> None:
    result = run("review", "HEAD", "--repo", str(tmp_path))
    assert result.exit_code == 2
    assert "not a git repository" in result.stderr and "Traceback" not in result.stderr


def test_unknown_revision(py_repo: GitRepo) -> None:
    result = run("review", "no-such-ref", "--repo", str(py_repo.path))
    assert result.exit_code == 2 and "unknown revision 'no-such-ref'" in result.stderr


def test_empty_change(repo: GitRepo, llm_env: FakeOpenAI) -> None:
    repo.write("a.txt", "a\n")
    repo.commit("base")
    repo.commit("nothing")
    result = run("review", "--repo", str(repo.path), "-o", "json", "-q")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["comments"] == [] and "nothing to review" in data["summary"]
    assert llm_env.requests == []


def test_binary_only_change_skips_the_model_and_says_so(repo: GitRepo, llm_env: FakeOpenAI) -> None:
    repo.write("a.txt", "a\n")
    repo.commit("base")
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    repo.commit("logo")
    result = run("review", "--repo", str(repo.path), "-o", "json", "-q")
    assert result.exit_code == 0
    assert "skipped logo.png: binary" in json.loads(result.stdout)["summary"]
    assert llm_env.requests == []


@pytest.mark.slow
def test_garbage_twice_exits_3_but_keeps_the_analyzer_findings(
    py_repo: GitRepo, llm_env: FakeOpenAI
) -> None:
    llm_env.enqueue(text("I think it is fine!"), text("{not json"))
    result = run("review", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 3
    assert "unusable output twice" in result.stderr and "Traceback" not in result.stderr
    data = json.loads(result.stdout)
    assert any(c["origin"] == "ruff" for c in data["comments"])
    assert "unusable output twice" in data["summary"]
    repair = llm_env.requests[1]["messages"][-1]["content"]
    assert "could not be used" in repair and "invalid JSON" in repair


@pytest.mark.slow
def test_garbage_then_a_repaired_answer(py_repo: GitRepo, llm_env: FakeOpenAI) -> None:
    good = answer(
        [
            {
                "path": "pkg/calc.py",
                "line": 9,
                "code": "    return a / b",
                "body": "b == 0 raises ZeroDivisionError",
                "severity": "error",
            }
        ]
    )
    llm_env.enqueue(text('```json\n{"summary": oops```'), text(f"Sure:\n```json\n{good}\n```"))
    result = run("review", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.stderr
    llm = [c for c in json.loads(result.stdout)["comments"] if c["origin"] == "llm"]
    assert [(c["line"], c["severity"]) for c in llm] == [(9, "error")]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_model_endpoint_down_exits_3_with_a_clear_message(
    py_repo: GitRepo, llm_env, monkeypatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    result = run("review", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 3
    assert "is unreachable" in result.stderr and "Traceback" not in result.stderr
    assert SECRET not in result.stderr + result.stdout


@pytest.mark.slow
def test_model_http_500_and_401(py_repo: GitRepo, llm_env: FakeOpenAI) -> None:
    llm_env.enqueue(error(500, "upstream exploded"))
    result = run("review", "--repo", str(py_repo.path), "-q")
    assert result.exit_code == 3 and "answered HTTP 500" in result.stderr
    llm_env.enqueue(error(401, "bad key"))
    result = run("review", "--repo", str(py_repo.path), "-q")
    assert result.exit_code == 3 and "NOVA_LLM_API_KEY" in result.stderr


@pytest.mark.slow
def test_retries_then_succeeds(py_repo: GitRepo, llm_env: FakeOpenAI, monkeypatch) -> None:
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "2")
    llm_env.enqueue(error(503, "busy", **{"retry-after-ms": "1"}), text(answer([])))
    result = run("review", "--repo", str(py_repo.path), "-q", "-o", "json")
    assert result.exit_code == 0 and len(llm_env.requests) == 2


@pytest.mark.slow
def test_tool_calls_read_the_head_revision(
    py_repo: GitRepo, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    py_repo.write("pkg/calc.py", "changed in the work tree only\n")  # must not be read
    llm_env.enqueue(
        tool_call("read_file", {"path": "pkg/calc.py", "start_line": 8}),
        tool_call("search_code", {"pattern": "def add"}),
        tool_call("read_file", {"path": "../../etc/passwd"}),
        text(answer([])),
    )
    events = tmp_path / "events.jsonl"
    result = run("review", "--repo", str(py_repo.path), "-q", "--events-file", str(events))
    assert result.exit_code == 0, result.stderr
    tool_results = [m["content"] for m in llm_env.requests[-1]["messages"] if m["role"] == "tool"]
    assert "8: def div(a, b):" in tool_results[0] and "9:     return a / b" in tool_results[0]
    assert "pkg/calc.py:4: def add(a, b):" in tool_results[1]
    assert tool_results[2].startswith("error:")
    kinds = [json.loads(line)["event_type"] for line in events.read_text().splitlines()]
    assert kinds.count("tool_call") == 3 and kinds.count("tool_result") == 3
    assert kinds[-1] == "done" and "step" in kinds
    assert SECRET not in events.read_text()


@pytest.mark.slow
def test_recursion_limit_ends_with_a_clear_message(
    py_repo: GitRepo, llm_env: FakeOpenAI, monkeypatch
) -> None:
    monkeypatch.setenv("NOVA_RECURSION_LIMIT", "5")
    llm_env.responder = lambda body: tool_call("search_code", {"pattern": "x"})
    result = run("review", "--repo", str(py_repo.path), "-q")
    assert result.exit_code == 3
    assert "did not finish within 5 steps" in result.stderr
    assert "NOVA_RECURSION_LIMIT" in result.stderr


@pytest.mark.slow
def test_big_changes_are_split_into_batches_and_merged(
    repo: GitRepo, llm_env: FakeOpenAI, monkeypatch
) -> None:
    for i in range(6):
        repo.write(f"m{i}.txt", "".join(f"old {i} {n}\n" for n in range(30)))
    repo.commit("base")
    for i in range(6):
        repo.write(f"m{i}.txt", "".join(f"new {i} {n}\n" for n in range(30)))
    repo.commit("rewrite")
    monkeypatch.setenv("NOVA_TOKEN_BUDGET", "250")

    def reply(body: dict) -> object:
        prompt = body["messages"][1]["content"]
        names = sorted(set(__import__("re").findall(r"File: (m\d\.txt)", prompt)))
        return text(
            answer(
                [{"path": n, "line": 1, "code": f"new {n[1]} 0", "body": "batch"} for n in names],
                summary=f"part with {len(names)} files",
            )
        )

    llm_env.responder = reply
    result = run("review", "--repo", str(repo.path), "-q", "-o", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert len(llm_env.requests) >= 3
    assert sorted(c["path"] for c in data["comments"]) == [f"m{i}.txt" for i in range(6)]
    parts = {
        __import__("re").search(r"part (\d+) of (\d+)", r["messages"][1]["content"]).groups()
        for r in llm_env.requests
    }
    count = len(llm_env.requests)
    assert parts == {(str(i), str(count)) for i in range(1, count + 1)}  # each batch once


@pytest.mark.slow
def test_stdin_diff_and_staged(py_repo: GitRepo, llm_env: FakeOpenAI) -> None:
    diff = py_repo.git("show", "--format=", "HEAD")
    llm_env.enqueue(
        text(answer([{"path": "b/pkg/calc.py", "line": 9, "code": "return a / b", "body": "zero"}]))
    )
    result = run("review", "-", "--repo", str(py_repo.path), "-q", "-o", "json", input=diff)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["change"]["source"] == "stdin"
    assert [(c["path"], c["line"]) for c in data["comments"] if c["origin"] == "llm"] == [
        ("pkg/calc.py", 9)
    ]
    py_repo.write("pkg/new.py", "import sys\n")
    py_repo.git("add", "pkg/new.py")
    result = run("review", "--staged", "--repo", str(py_repo.path), "-q", "-o", "json", "--no-llm")
    data = json.loads(result.stdout)
    assert data["change"]["id"] == "staged"
    assert [c["path"] for c in data["comments"]] == ["pkg/new.py"]


@pytest.mark.slow
def test_repo_config_cannot_redirect_the_model(repo: GitRepo, llm_env: FakeOpenAI) -> None:
    repo.write(".nova.toml", 'llm_base_url = "http://evil.invalid/v1"\n')
    repo.commit("config in the base")
    repo.write("pkg/a.py", "import os\n")
    repo.commit("change")
    llm_env.enqueue(text(answer([])))
    result = run("review", "--repo", str(repo.path), "-q")
    # reported, and the review ran without the file (issue 27): the model was not redirected
    assert result.exit_code == 0 and "cannot be set in the repository" in result.stderr
    assert len(llm_env.requests) == 1
    repo.write(".nova.toml", 'fail_on = "info"\nextra_instructions = "Be terse."\n')
    repo.commit("config in the base")
    repo.write("pkg/b.py", "import sys\n")
    repo.commit("change")
    llm_env.enqueue(text(answer([])))
    result = run("review", "--repo", str(repo.path), "-q")
    assert result.exit_code == 1  # ruff's findings reach fail_on = "info"
    assert "Be terse." in llm_env.requests[-1]["messages"][0]["content"]


def test_a_change_cannot_configure_its_own_review(py_repo: GitRepo) -> None:
    py_repo.write(".nova.toml", 'analyzers = "none"\nexclude = ["*"]\nfail_on = "never"\n')
    py_repo.write("pkg/more.py", "import sys\n")
    py_repo.commit("Turn my own review off")
    result = run("review", "--repo", str(py_repo.path), "-q", "-o", "json", "--fail-on", "info")
    assert result.exit_code == 1, result.stderr  # ruff still ran and its finding counts
    data = json.loads(result.stdout)
    assert [c["path"] for c in data["comments"]] == ["pkg/more.py"]
    assert "this change edits .nova.toml" in data["summary"]
    # the same file in the work tree, uncommitted, is not the base either
    result = run("review", "--repo", str(py_repo.path), "-q", "-o", "json", "HEAD~1")
    assert json.loads(result.stdout)["comments"], "the base of HEAD~1 has no .nova.toml"


def test_markdown_and_sarif(py_repo: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "r.sarif"
    assert (
        run(
            "review", "--repo", str(py_repo.path), "-q", "-o", "sarif", "--output-file", str(out)
        ).exit_code
        == 0
    )
    sarif = json.loads(out.read_text())
    assert sarif["version"] == "2.1.0"
    locations = [r["locations"][0]["physicalLocation"] for r in sarif["runs"][0]["results"]]
    assert {
        "artifactLocation": {"uri": "pkg/calc.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 1},
    } in locations
    md = run("review", "--repo", str(py_repo.path), "-q", "-o", "markdown").stdout
    assert "`pkg/calc.py:1`" in md and "### Findings (1)" in md


@pytest.mark.slow
def test_real_process_has_no_traceback_and_help_lists_variables(py_repo: GitRepo) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "review", "nope", "--repo", str(py_repo.path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("nova: error: unknown revision 'nope'")
    helptext = subprocess.run(
        [sys.executable, "-m", "bot", "review", "--help"], capture_output=True, text=True
    ).stdout
    for name in ("NOVA_LLM_MODEL", "NOVA_LLM_BASE_URL", "NOVA_FAIL_ON", "NOVA_TOKEN_BUDGET"):
        assert name in helptext


@pytest.mark.slow
def test_extra_mcp_tools_are_lent_and_broken_servers_skipped(
    py_repo: GitRepo, llm_env, tmp_path: Path, monkeypatch
) -> None:
    script = Path(__file__).parents[1] / "servers" / "mcp_tool_server.py"
    root = str(Path(__file__).parents[2])
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "servers": [
                    {
                        "name": "team",
                        "command": sys.executable,
                        "args": [str(script)],
                        "env": {"PYTHONPATH": root},
                    },
                    {"name": "missing", "command": str(tmp_path / "no-such-binary")},
                    {
                        "name": "hang",
                        "command": sys.executable,
                        "args": ["-c", "import time; time.sleep(60)"],
                        "timeout": 1,
                    },
                    {"name": "off", "command": "whatever", "disabled": True},
                ]
            }
        )
    )
    monkeypatch.setenv("NOVA_MCP_CONFIG", str(config))
    llm_env.enqueue(tool_call("team_owner_of", {"path": "pkg/calc.py"}), text(answer([])))
    result = run("review", "--repo", str(py_repo.path), "-q", "-o", "json")
    assert result.exit_code == 0, result.stderr
    offered = {t["function"]["name"] for t in llm_env.requests[0]["tools"]}
    assert offered == {"read_file", "search_code", "team_owner_of"}
    tool_reply = [m["content"] for m in llm_env.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_reply == ["pkg/calc.py is owned by alice (team payments)"]
    summary = json.loads(result.stdout)["summary"]
    assert "MCP server 'missing' skipped" in summary
    assert "MCP server 'hang' skipped: timed out" in summary
    assert "'off'" not in summary


def test_bad_mcp_config_is_a_configuration_error(
    py_repo: GitRepo, llm_env, tmp_path: Path, monkeypatch
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{"servers": [{"name": "x"}]}')
    monkeypatch.setenv("NOVA_MCP_CONFIG", str(config))
    result = run("review", "--repo", str(py_repo.path), "-q")
    assert result.exit_code == 2 and "needs a name and a command or url" in result.stderr


@pytest.mark.slow
def test_a_configured_key_committed_into_the_diff_never_reaches_the_model(
    repo: GitRepo, llm_env: FakeOpenAI
) -> None:
    repo.write("cfg.py", "x = 1\n")
    repo.commit("base")
    repo.write("cfg.py", f'x = 1\nKEY = "{SECRET}"\n')
    repo.commit("oops")
    llm_env.enqueue(tool_call("read_file", {"path": "cfg.py"}), text(answer([])))
    result = run("review", "--repo", str(repo.path), "-q", "-o", "json")
    assert result.exit_code == 0, result.stderr
    sent = json.dumps(llm_env.requests)
    assert SECRET not in sent and sent.count("***") >= 2  # the diff and the tool result
    assert SECRET not in result.stdout


def test_json_output_is_written_when_the_run_ends_in_an_error(py_repo: GitRepo) -> None:
    result = run("review", "deadbeef", "--repo", str(py_repo.path), "-q", "-o", "json")
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert "unknown revision 'deadbeef'" in data["summary"] and data["comments"] == []
    assert "nova: error: unknown revision" in result.stderr
