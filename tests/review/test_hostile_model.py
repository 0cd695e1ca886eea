"""A model endpoint that hangs, answers garbage or carries a password in its URL (issue 19,
items 6, 9, 10; issue 11's silent retries). ``nova review`` end to end against the local
OpenAI-compatible server; the analyzers' findings and the JSON output survive every case."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import GitRepo, run
from tests.servers.openai_server import FakeOpenAI, error, garbage, hang, text, truncated

pytestmark = pytest.mark.slow  # every test here takes seconds: not in the fast lane


@pytest.fixture
def py_repo(repo: GitRepo) -> GitRepo:
    repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.write("pkg/calc.py", "import os\n\n\ndef add(a, b):\n    return a + b\n")
    repo.commit("Use os")
    return repo


def ruff_findings(data: dict) -> list[str]:
    return [c["body"] for c in data["comments"] if c["origin"] == "ruff"]


def test_hung_model_stops_at_the_review_deadline_and_publishes_the_rest(
    py_repo: GitRepo, llm_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_TIMEOUT", "60")
    monkeypatch.setenv("NOVA_REVIEW_DEADLINE", "1")
    llm_env.responder = lambda body: hang()
    result = run("review", "--repo", str(py_repo.path), "-o", "json")
    assert result.exit_code == 3, result.stderr
    data = json.loads(result.stdout)
    assert ruff_findings(data) and ruff_findings(data)[0].startswith("F401")
    assert "the review deadline of 1s (NOVA_REVIEW_DEADLINE) passed first" in data["summary"]
    assert "review deadline of 1s passed: 1 of 1 batch(es) unfinished" in result.stderr
    assert "Traceback" not in result.stderr


def test_each_retry_is_shown_and_the_final_message_has_the_real_total(
    py_repo: GitRepo, llm_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_TIMEOUT", "0.3")
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "2")
    llm_env.enqueue(hang(), hang(), hang())
    result = run("review", "--repo", str(py_repo.path), "-o", "json")
    assert result.exit_code == 3
    assert llm_env.wait_for_requests(3) == 3  # the third may be read after nova exits
    shown = [line for line in result.stderr.splitlines() if "retrying in" in line]
    assert [re.search(r"attempt (\d) of 3", line).group(1) for line in shown] == ["1", "2"]
    assert all("no answer within 0.3s" in line for line in shown)
    total = re.search(
        r"timed out after 0.3s \(each of 3 attempts, ([\d.]+)s in all\)", result.stderr
    )
    assert total is not None and float(total.group(1)) >= 0.9  # three waits of 0.3s at least
    assert ruff_findings(json.loads(result.stdout))


def test_retry_then_success_is_shown_once(
    py_repo: GitRepo, llm_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "3")
    llm_env.enqueue(
        error(503, "busy", **{"retry-after-ms": "1"}),
        text(json.dumps({"summary": "fine", "comments": []})),
    )
    result = run("review", "--repo", str(py_repo.path), "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("retrying in 0.0s") == 1 and "HTTP 503" in result.stderr
    assert "attempt 1 of 4" in result.stderr


@pytest.mark.parametrize(
    "reply",
    [garbage(), truncated(), garbage(b'{"choices": null}'), garbage(b"")],
    ids=["binary", "truncated", "no-choices", "empty"],
)
def test_unreadable_200_answer_is_a_model_error_and_json_is_still_written(
    py_repo: GitRepo, llm_env: FakeOpenAI, reply
) -> None:
    llm_env.enqueue(reply)
    result = run("review", "--repo", str(py_repo.path), "-o", "json", "-q")
    assert result.exit_code == 3, result.stderr
    assert "Traceback" not in result.stderr
    data = json.loads(result.stdout)
    assert ruff_findings(data)
    assert f"model endpoint {llm_env.base_url} answered" in data["summary"]
    errors = [line for line in result.stderr.splitlines() if line.startswith("nova: error:")]
    assert len(errors) == 1 and "answered" in errors[0]


def test_a_password_in_the_base_url_is_never_shown(
    py_repo: GitRepo, llm_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    password = "Pa55word-in-url"
    url = llm_env.base_url.replace("http://", f"http://svc:{password}@")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", url)
    llm_env.enqueue(error(500, f"upstream {url} exploded"))
    events = tmp_path / "events.jsonl"
    result = run("review", "--repo", str(py_repo.path), "-o", "json", "--events-file", str(events))
    assert result.exit_code == 3
    assert llm_env.headers[0]["authorization"]  # the URL's credentials did reach the server
    seen = result.stdout + result.stderr + events.read_text()
    assert "answered HTTP 500" in seen and "svc:***@127.0.0.1" in seen
    assert password not in seen
    assert password not in json.dumps(llm_env.requests)


def test_a_short_password_in_a_url_is_hidden_by_shape(
    py_repo: GitRepo, llm_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under six characters a password is not registered, but a URL shows none."""
    url = llm_env.base_url.replace("http://", "http://svc:pw1@")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", url)
    llm_env.enqueue(error(500, "down"))
    result = run("review", "--repo", str(py_repo.path), "-o", "json")
    assert result.exit_code == 3
    assert "svc:pw1@" not in result.stdout + result.stderr
