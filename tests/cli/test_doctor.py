"""`nova doctor` against the local test servers, and against closed ports."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner

from bot.cli import cli
from tests.servers.conduit_server import TOKEN as CONDUIT_TOKEN
from tests.servers.conduit_server import FakeConduit
from tests.servers.github_server import FakeGitHub
from tests.servers.ollama_server import FakeOllama
from tests.servers.openai_server import error, text
from tests.servers.taskmanager_server import FakeTaskManager

GH_TOKEN = "ghs_doctortoken000000000000000000000"
LLM_KEY = "sk-doctor-key-000000000000000000"


def doctor():
    return CliRunner().invoke(cli, ["doctor"], catch_exceptions=False)


def rows(result) -> list[str]:
    """doctor's lines without GitLab's (tests/hosts/gitlab/test_gitlab.py checks that one)
    and the analyzers' (tests/analyzers/test_builtin.py)."""
    return [ln for ln in result.stdout.splitlines() if ln.split()[1] not in ("gitlab", "analyzer")]


def _closed() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.slow
def test_every_configured_service_reachable(llm, monkeypatch: pytest.MonkeyPatch) -> None:
    gh, phab, tm = FakeGitHub(GH_TOKEN).start(), FakeConduit().start(), FakeTaskManager().start()
    try:
        monkeypatch.setenv("NOVA_LLM_MODEL", "openai:test-model")
        monkeypatch.setenv("NOVA_LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("NOVA_LLM_API_KEY", LLM_KEY)
        monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
        monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
        monkeypatch.setenv("PHABRICATOR_URL", phab.url)
        monkeypatch.setenv("PHABRICATOR_API_TOKEN", CONDUIT_TOKEN)
        monkeypatch.setenv("NOVA_TASK_MANAGER_URL", tm.url)
        result = doctor()
        assert result.exit_code == 0, result.stdout
        lines = rows(result)
        assert [ln.split()[0] for ln in lines[:4]] == ["ok"] * 4
        assert "test-model at http://127.0.0.1" in lines[0]
        assert "served (GET /models lists it)" in lines[0]
        assert "token accepted (4999 requests left)" in lines[1]
        assert "user nova-bot" in lines[2]
        assert "healthy; NOVA_EXECUTION_ID is not set" in lines[3]
        for secret in (GH_TOKEN, LLM_KEY, CONDUIT_TOKEN):
            assert secret not in result.stdout
    finally:
        gh.stop(), phab.stop(), tm.stop()


@pytest.mark.slow
def test_closed_ports_are_reported_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOVA_LLM_MODEL", "openai:m")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", _closed() + "/v1")
    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", _closed())
    monkeypatch.setenv("PHABRICATOR_URL", _closed())
    monkeypatch.setenv("PHABRICATOR_API_TOKEN", CONDUIT_TOKEN)
    tm_url = _closed()
    monkeypatch.setenv("NOVA_TASK_MANAGER_URL", tm_url)
    result = doctor()
    assert result.exit_code == 3
    lines = rows(result)
    assert [ln.split()[0] for ln in lines[:4]] == ["FAIL"] * 4
    assert "connection refused" in lines[0] and "connection refused" in lines[1]
    assert "is unreachable" in lines[2]
    assert f"Connection failed to {tm_url}" in lines[3]


def test_nothing_configured_is_not_an_error() -> None:
    result = doctor()
    assert result.exit_code == 0
    assert [ln.split()[0] for ln in rows(result)[:4]] == ["-"] * 4
    assert "NOVA_LLM_MODEL" in result.stdout and "GITHUB_TOKEN" in result.stdout


@pytest.mark.slow
def test_refused_credentials(llm, monkeypatch: pytest.MonkeyPatch) -> None:
    gh = FakeGitHub(GH_TOKEN).start()
    try:
        monkeypatch.setenv("GITHUB_TOKEN", "ghs_wrong00000000000000000000000000000")
        monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
        result = doctor()
        assert result.exit_code == 3 and "token was refused (HTTP 401)" in result.stdout
        assert "wrong0000" not in result.stdout
    finally:
        gh.stop()


def test_testgen_tools_are_reported(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from bot.sandbox.run import choose_isolation
    from bot.testgen.frameworks import node_binary

    node = node_binary()
    lines = rows(doctor())[4:]
    assert [ln.split()[1] for ln in lines] == ["node", "test"]
    if node is not None:
        assert lines[0].split()[0] == "ok" and f"{node}: v" in lines[0]
    # the isolation this machine gives generated tests (tests/sandbox/test_doctor.py)
    assert lines[1].split()[1:3] == ["test", "sandbox"]
    assert choose_isolation().name in lines[1]
    # a node too old for per-line coverage is reported, but it is not an error: a Python
    # project does not need node
    old = tmp_path / "node"
    old.write_text("#!/bin/sh\necho v18.19.0\n")
    old.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    result = doctor()
    line = rows(result)[4]
    assert line.split()[0] == "-" and "v18.19.0: testgen for node:test projects" in line
    assert result.exit_code == 0


def test_a_model_the_server_does_not_have_fails(llm, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: "ok" because GET /models answered at all.
    monkeypatch.setenv("NOVA_LLM_MODEL", "openai:gpt-typo")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", llm.base_url)
    result = doctor()
    assert result.exit_code == 3
    line = rows(result)[0]
    assert line.split()[0] == "FAIL"
    assert "the server does not have 'gpt-typo' (GET /models: test-model)" in line


def test_no_model_list_asks_for_one_token(llm, monkeypatch: pytest.MonkeyPatch) -> None:
    llm.models = None  # GET /v1/models: 404
    monkeypatch.setenv("NOVA_LLM_MODEL", "openai:test-model")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", llm.base_url)
    monkeypatch.setenv("NOVA_LLM_API_KEY", LLM_KEY)
    llm.enqueue(text("OK"))
    result = doctor()
    assert result.exit_code == 0, result.stdout
    assert "answered a one-token completion" in rows(result)[0]
    assert llm.requests[-1]["max_completion_tokens"] == 1  # langchain-openai: max_tokens
    llm.enqueue(error(404, "The model `test-model` does not exist"))
    result = doctor()
    assert result.exit_code == 3
    assert "model 'test-model' not found" in rows(result)[0]
    assert LLM_KEY not in result.stdout


def test_ollama_model_is_looked_up_in_its_tags(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeOllama(models=("qwen2.5-coder", "llama3.1:8b")).start()
    try:
        monkeypatch.setenv("NOVA_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("NOVA_LLM_MODEL", "ollama:qwen2.5-coder")
        result = doctor()
        assert result.exit_code == 0, result.stdout
        assert "served (GET /api/tags lists it)" in rows(result)[0]
        monkeypatch.setenv("NOVA_LLM_MODEL", "ollama:llama3.1")  # pulled only as :8b
        result = doctor()
        assert result.exit_code == 3
        assert (
            "does not have 'llama3.1' (GET /api/tags: llama3.1:8b, qwen2.5-coder:latest)"
            in rows(result)[0]
        )
        assert server.paths == ["GET /api/tags", "GET /api/tags"]
    finally:
        server.stop()
    monkeypatch.setenv("NOVA_LLM_FALLBACK", "ollama:qwen2.5-coder")
    result = doctor()  # the server is gone: the fallback line says so too
    assert result.exit_code == 3 and "connection refused" in rows(result)[0]
    assert rows(result)[1].split()[:2] == ["FAIL", "fallback"]


def test_fallback_models_get_a_line_each(llm, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOVA_LLM_MODEL", "openai:test-model")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", llm.base_url)
    monkeypatch.setenv("NOVA_LLM_FALLBACK", "openai:small-model,groq:llama-3.3-70b-versatile")
    result = doctor()
    lines = rows(result)
    assert [ln.split()[:2] for ln in lines[:3]] == [
        ["ok", "model"],
        ["FAIL", "fallback"],
        ["FAIL", "fallback"],
    ]
    assert "does not have 'small-model'" in lines[1]
    assert 'pip install "nova-bot[groq]"' in lines[2]
    assert result.exit_code == 3
