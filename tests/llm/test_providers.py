"""Model providers end to end: Ollama's native API on a local server, and the models of
NOVA_LLM_FALLBACK taking over when the first one fails. Real clients, real sockets."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.conftest import GitRepo, run
from tests.servers.ollama_server import FakeOllama
from tests.servers.openai_server import FakeOpenAI, error, text, tool_call

KEY = "sk-provider-test-key-0000000000"
FINDING = {
    "path": "pkg/calc.py",
    "line": 9,
    "code": "    return a / b",
    "body": "b == 0 raises ZeroDivisionError",
    "severity": "error",
    "end_line": None,
    "suggestion": None,
}


def answer(*comments: dict) -> str:
    return json.dumps({"summary": "One problem.", "comments": list(comments)})


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    server = FakeOllama().start()
    yield server
    server.stop()


@pytest.fixture
def py_repo(repo: GitRepo) -> GitRepo:
    repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.write(
        "pkg/calc.py",
        "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n",
    )
    repo.commit("Add div")
    return repo


def _llm_comments(stdout: str) -> list[tuple[str, int, str]]:
    data = json.loads(stdout)
    return [(c["path"], c["line"], c["severity"]) for c in data["comments"] if c["origin"] == "llm"]


def test_review_with_ollama_places_the_finding(
    py_repo: GitRepo, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_MODEL", "ollama:qwen2.5-coder")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", ollama.base_url)
    # a context tool first (read the file), then the answer through the submit_review tool
    ollama.enqueue(
        tool_call("read_file", {"path": "pkg/calc.py"}),
        tool_call("submit_review", json.loads(answer(FINDING))),
    )
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.stderr
    assert _llm_comments(result.stdout) == [("pkg/calc.py", 9, "error")]
    first, second = ollama.requests
    assert first["model"] == "qwen2.5-coder" and first["stream"] is True
    assert {t["function"]["name"] for t in first["tools"]} >= {"read_file", "submit_review"}
    assert "Add div" in first["messages"][1]["content"]
    tool_result = second["messages"][-1]
    assert tool_result["role"] == "tool" and "def div(a, b):" in tool_result["content"]
    assert json.loads(result.stdout)["stats"]["llm_calls"] == 2


def test_ollama_answer_in_text_is_read_too(
    py_repo: GitRepo, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ollama ignores tool_choice: a model may answer in the message text instead.
    monkeypatch.setenv("NOVA_LLM_MODEL", "ollama:qwen2.5-coder")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", ollama.base_url)
    ollama.enqueue(text(answer(FINDING)))
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.stderr
    assert _llm_comments(result.stdout) == [("pkg/calc.py", 9, "error")]


def test_ollama_model_not_pulled_is_a_clear_error(
    py_repo: GitRepo, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_MODEL", "ollama:llama9")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", ollama.base_url)
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 3
    assert "model 'llama9' not found" in result.stderr and "HTTP 404" in result.stderr
    assert "Traceback" not in result.stderr


def test_ollama_500_is_retried(
    py_repo: GitRepo, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_MODEL", "ollama:qwen2.5-coder")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", ollama.base_url)
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "1")
    ollama.enqueue(error(500, "llama runner process has terminated"), text(answer(FINDING)))
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.stderr
    assert _llm_comments(result.stdout) == [("pkg/calc.py", 9, "error")]
    assert len(ollama.requests) == 2


@pytest.fixture
def openai_env(llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.setenv("NOVA_LLM_MODEL", "openai:big-model")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", llm.base_url)
    monkeypatch.setenv("NOVA_LLM_API_KEY", KEY)
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "1")
    return llm


def test_fallback_of_another_provider_takes_over_after_a_500(
    py_repo: GitRepo, openai_env: FakeOpenAI, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_FALLBACK", "ollama:qwen2.5-coder")
    monkeypatch.setenv("OLLAMA_HOST", ollama.base_url)  # another provider: its own defaults
    openai_env.enqueue(error(500, "upstream exploded"), error(500, "upstream exploded"))
    ollama.enqueue(text(answer(FINDING)))
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.stderr
    assert _llm_comments(result.stdout) == [("pkg/calc.py", 9, "error")]
    assert [r["model"] for r in openai_env.requests] == ["big-model", "big-model"]
    assert len(ollama.requests) == 1
    summary = json.loads(result.stdout)["summary"]
    assert "model openai:big-model failed" in summary and "HTTP 500" in summary
    assert "ollama:qwen2.5-coder answered from then on" in summary
    assert KEY not in result.stdout + result.stderr


def test_fallback_answers_for_the_rest_of_the_run(
    py_repo: GitRepo, openai_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two models of one OpenAI-compatible server (a LiteLLM proxy): the second keeps the
    # base URL and the key. After the switch the failed model is not asked again.
    monkeypatch.setenv("NOVA_LLM_FALLBACK", "openai:small-model, openai:tiny-model")
    openai_env.responder = lambda body: (
        error(503, "overloaded") if body["model"] == "big-model" else text("")
    )
    openai_env.enqueue(
        error(503, "overloaded"),
        error(503, "overloaded"),
        tool_call("read_file", {"path": "pkg/calc.py"}),
        text(answer(FINDING)),
    )
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.stderr
    assert _llm_comments(result.stdout) == [("pkg/calc.py", 9, "error")]
    assert [r["model"] for r in openai_env.requests] == [
        "big-model",
        "big-model",
        "small-model",
        "small-model",
    ]
    assert {h["authorization"] for h in openai_env.headers} == {f"Bearer {KEY}"}


def test_a_refused_key_does_not_fall_back(
    py_repo: GitRepo, openai_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_FALLBACK", "openai:small-model")
    openai_env.enqueue(error(401, "invalid key"))
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 3
    assert "refused the credentials (HTTP 401)" in result.stderr
    assert [r["model"] for r in openai_env.requests] == ["big-model"]


def test_a_fallback_needs_its_extra_and_a_known_provider(
    py_repo: GitRepo, openai_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_FALLBACK", "nope:x")
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-q")
    assert result.exit_code == 2
    assert "unknown model provider 'nope' in NOVA_LLM_FALLBACK" in result.stderr
    monkeypatch.setenv("NOVA_LLM_FALLBACK", "groq:llama-3.3-70b-versatile")
    result = run("review", "HEAD", "--repo", str(py_repo.path), "-q")
    assert result.exit_code == 2
    assert 'pip install "nova-bot[groq]"' in result.stderr
    assert openai_env.requests == []


def test_fallback_settings_and_keys() -> None:
    from bot.config import load_settings
    from bot.errors import redact
    from bot.llm.fallback import fallback_settings

    anthropic_key, groq_key = "sk-ant-fallback-key-123456", "gsk-fallback-key-654321"
    s = load_settings(
        env={
            "NOVA_LLM_MODEL": "openai:big",
            "NOVA_LLM_BASE_URL": "http://x/v1",
            "OPENAI_API_KEY": KEY,
            "ANTHROPIC_API_KEY": anthropic_key,
            "GROQ_API_KEY": groq_key,
            "NOVA_LLM_FALLBACK": "openai:small,anthropic:claude-x,ollama:q",
        }
    ).llm
    assert s.fallback == ("openai:small", "anthropic:claude-x", "ollama:q")
    same = fallback_settings(s, "openai:small")
    assert (same.api_key, same.base_url, same.model_name) == (KEY, "http://x/v1", "small")
    other = fallback_settings(s, "anthropic:claude-x")
    assert (other.api_key, other.base_url) == (anthropic_key, None)
    keyless = fallback_settings(s, "ollama:q")
    assert (keyless.api_key, keyless.base_url) == (None, None)
    assert groq_key not in s.fallback_keys.values()  # only the providers that are used
    assert anthropic_key not in repr(s) and redact(anthropic_key) == "***"


_PROVIDER_NAMES = st.sampled_from(
    [
        "openai",
        "anthropic",
        "ollama",
        "groq",
        "mistralai",
        "google_genai",
        "bedrock",
        "azure_openai",
    ]
)


@hsettings(max_examples=150, deadline=None)
@given(
    first=_PROVIDER_NAMES,
    others=st.lists(_PROVIDER_NAMES, max_size=4),
    base=st.sampled_from([None, "http://127.0.0.1:9/v1"]),
)
def test_a_key_never_goes_to_another_provider(
    first: str, others: list[str], base: str | None
) -> None:
    from bot.config import load_settings
    from bot.llm.fallback import fallback_settings
    from bot.llm.providers import key_envs

    env = {"NOVA_LLM_MODEL": f"{first}:m0", "NOVA_LLM_API_KEY": "primary-key-000000"}
    if base:
        env["NOVA_LLM_BASE_URL"] = base
    for i, provider in enumerate(others):
        for name in key_envs(provider):
            env[name] = f"{provider}-key-{i:06d}"
    env["NOVA_LLM_FALLBACK"] = ",".join(f"{p}:m{i + 1}" for i, p in enumerate(others))
    s = load_settings(env=env).llm
    for model in s.fallback:
        f = fallback_settings(s, model)
        if f.provider == first:
            assert (f.api_key, f.base_url) == ("primary-key-000000", base)
        else:
            assert f.api_key != "primary-key-000000" and f.base_url is None
            assert f.api_key is None or f.api_key.startswith(f"{f.provider}-key-")


def test_concurrent_batches_switch_once(
    repo: GitRepo, openai_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b", "c"):
        repo.write(f"{name}.py", "x = 1\n")
    repo.commit("base")
    for name in ("a", "b", "c"):
        repo.write(f"{name}.py", "x = 1\n" + "".join(f"y{i} = {i}\n" for i in range(40)))
    repo.commit("three files")
    monkeypatch.setenv("NOVA_TOKEN_BUDGET", "300")  # several batches
    monkeypatch.setenv("NOVA_MAX_CONCURRENCY", "3")
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("NOVA_LLM_FALLBACK", "openai:small-model")
    openai_env.responder = lambda body: (
        error(502, "bad gateway")
        if body["model"] == "big-model"
        else text(json.dumps({"summary": "fine", "comments": []}))
    )
    result = run("review", "HEAD", "--repo", str(repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.stderr  # a failed batch would exit 3
    models = [r["model"] for r in openai_env.requests]
    batches = models.count("small-model")  # every batch answered by the fallback
    assert batches >= 2 and 1 <= models.count("big-model") <= batches
    summary = json.loads(result.stdout)["summary"]
    assert summary.count("model openai:big-model failed") == 1  # one switch, not one a batch
