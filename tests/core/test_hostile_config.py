"""Bad settings and untrusted text on the CI runner's command channel (issue 19, items 7, 11,
12): every bad value is one line and exit 2, at once; model text never starts a GitHub Actions
workflow command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.config import all_settings, load_settings, settings_table
from bot.errors import ConfigError
from tests.conftest import GitRepo, run
from tests.servers.openai_server import FakeOpenAI, text, tool_call


@pytest.fixture
def py_repo(repo: GitRepo) -> GitRepo:
    repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.write("pkg/calc.py", "def add(a, b):\n    return a - b\n")
    repo.commit("Subtract")
    return repo


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("NOVA_LLM_MAX_RETRIES", "-1", "llm_max_retries must be at least 0, got -1"),
        ("NOVA_TOKEN_BUDGET", "0", "token_budget must be at least 1, got 0"),
        ("NOVA_TOKEN_BUDGET", "-5", "token_budget must be at least 1, got -5"),
        ("NOVA_MAX_CONCURRENCY", "0", "max_concurrency must be at least 1, got 0"),
        ("NOVA_MAX_INLINE_COMMENTS", "-3", "max_inline_comments must be at least 0, got -3"),
        ("NOVA_LLM_TIMEOUT", "0", "llm_timeout must be more than 0, got 0.0"),
        ("NOVA_GITHUB_TIMEOUT", "-1", "github_timeout must be more than 0, got -1.0"),
        ("NOVA_REVIEW_DEADLINE", "0", "review_deadline must be more than 0, got 0.0"),
        ("NOVA_TOOL_TIMEOUT", "-2.5", "tool_timeout must be more than 0, got -2.5"),
        ("NOVA_RECURSION_LIMIT", "0", "recursion_limit must be at least 1, got 0"),
        ("NOVA_LLM_MAX_RETRIES", "two", "llm_max_retries must be an integer, got 'two'"),
    ],
)
def test_out_of_range_settings_are_one_line_and_exit_2(
    py_repo: GitRepo, monkeypatch, name: str, value: str, says: str
) -> None:
    monkeypatch.setenv(name, value)
    result = run("review", "--repo", str(py_repo.path), "-q")
    assert result.exit_code == 2
    assert result.stderr == f"nova: error: {name}: {says}\n"


def test_ranges_apply_to_flags_and_the_repo_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="^--token-budget: token_budget must be at least 1"):
        load_settings(flags={"token_budget": 0}, env={})
    (tmp_path / ".nova.toml").write_text("max_inline_comments = -1\n")
    with pytest.raises(ConfigError, match="max_inline_comments must be at least 0"):
        load_settings(env={}, repo=tmp_path)
    (tmp_path / ".nova.toml").write_text("token_budget = true\n")
    with pytest.raises(ConfigError, match="token_budget must be an integer, got True"):
        load_settings(env={}, repo=tmp_path)
    (tmp_path / ".nova.toml").write_text("token_budget = 2.5\n")
    with pytest.raises(ConfigError, match="token_budget must be an integer, got 2.5"):
        load_settings(env={}, repo=tmp_path)


def test_every_number_setting_declares_its_range_and_shows_it() -> None:
    numbers = [s for s in all_settings() if s.parse in (int, float)]
    assert numbers and all(s.min is not None for s in numbers)
    table = settings_table()
    assert "| `NOVA_TOKEN_BUDGET` |" in table and "At least 1." in table
    assert "More than 0." in table
    help_text = run("review", "--help").stdout
    assert re.search(r"--max-concurrency.*At least 1\.", help_text, re.S)


def test_unwritable_events_file_is_one_line(py_repo: GitRepo, tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "events.jsonl"
    result = run("review", "--repo", str(py_repo.path), "-q", "--events-file", str(target))
    assert result.exit_code == 2
    assert result.stderr == (
        f"nova: error: cannot write --events-file {target}: No such file or directory\n"
    )


@pytest.mark.parametrize(
    ("model", "base_url"),
    [
        ("bogus", None),
        ("openai:", None),
        (":gpt-4o", None),
        ("open ai:gpt-4o", None),
        ("gpt 4o", "http://127.0.0.1:9/v1"),
    ],
)
def test_malformed_model_is_refused_at_once(
    model: str, base_url: str | None, monkeypatch, llm: FakeOpenAI
) -> None:
    monkeypatch.setenv("NOVA_LLM_MODEL", model)
    if base_url:
        monkeypatch.setenv("NOVA_LLM_BASE_URL", base_url)
    # a change that does not exist: the model string is judged before anything is fetched
    result = run("review", "no-such-revision", "--repo", "/nonexistent", "-q")
    assert result.exit_code == 2
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"nova: error: NOVA_LLM_MODEL: the model {model!r} is malformed")
    assert "provider:model" in first and "no key is set" not in result.stderr


def test_model_names_without_a_provider_that_are_accepted() -> None:
    cases = {
        "gpt-4o-mini": ("openai", "gpt-4o-mini"),
        "o3-mini": ("openai", "o3-mini"),
        "claude-sonnet-4-5": ("anthropic", "claude-sonnet-4-5"),
        "ft:gpt-4o-mini:acme::abc123": ("openai", "ft:gpt-4o-mini:acme::abc123"),
        "openai:llama3": ("openai", "llama3"),
    }
    for model, expected in cases.items():
        s = load_settings(env={"NOVA_LLM_MODEL": model})
        assert (s.llm.provider, s.llm.model_name) == expected, model
    # an OpenAI-compatible server names its models as it likes
    s = load_settings(env={"NOVA_LLM_MODEL": "llama3", "NOVA_LLM_BASE_URL": "http://h/v1"})
    assert (s.llm.provider, s.llm.model_name) == ("openai", "llama3")
    with pytest.raises(ConfigError, match="unknown model provider 'nope'"):
        load_settings(env={"NOVA_LLM_MODEL": "nope:x"})


INJECTED = "Fine.\n::error title=pwned::owned\n::set-output name=comments::0\n##[error]old"


def _answer_with_injection() -> str:
    return json.dumps(
        {
            "summary": INJECTED,
            "comments": [
                {
                    "path": "pkg/calc.py",
                    "line": 2,
                    "code": "return a - b",
                    "severity": "warning",
                    "body": "Subtraction?\n::add-mask::x\n  ::warning file=a::indented",
                }
            ],
        }
    )


def runner_commands(output: str) -> list[str]:
    """The lines the Actions runner would run, honouring ::stop-commands:: fences."""
    commands, stopped_by = [], None
    for line in output.splitlines():
        line = line.lstrip()
        if stopped_by is not None:
            if line == f"::{stopped_by}::":
                stopped_by = None
            continue
        if line.startswith("::stop-commands::"):
            stopped_by = line.removeprefix("::stop-commands::")
        elif line.startswith("::") or "##[" in line:
            commands.append(line)
    return commands


@pytest.mark.slow
def test_model_text_cannot_start_a_workflow_command(
    py_repo: GitRepo, llm_env: FakeOpenAI, monkeypatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "0")
    llm_env.enqueue(
        tool_call("read_file\n::error::from-a-tool-name", {"path": "x"}),
        text(_answer_with_injection()),
    )
    result = run("review", "--repo", str(py_repo.path))  # progress lines on stderr too
    assert result.exit_code == 0, result.stderr
    assert "::error title=pwned::owned" in result.stdout  # shown, but fenced
    assert runner_commands(result.stdout) == []
    assert runner_commands(result.stderr) == []
    tokens = re.findall(r"^::stop-commands::(\S+)$", result.stdout, re.M)
    assert len(tokens) == 1 and result.stdout.rstrip("\n").endswith(f"::{tokens[0]}::")
    llm_env.enqueue(text(_answer_with_injection()))
    again = run("review", "--repo", str(py_repo.path), "-q")
    assert re.findall(r"^::stop-commands::(\S+)$", again.stdout, re.M) != tokens  # fresh


@pytest.mark.slow
def test_outside_actions_stdout_is_not_fenced(py_repo: GitRepo, llm_env: FakeOpenAI) -> None:
    llm_env.enqueue(text(_answer_with_injection()))
    result = run("review", "--repo", str(py_repo.path), "-q", "-o", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["summary"].startswith("Fine.\n::error")
