"""A comment addressing Nova, delivered to ``nova serve``, answered by a real
``nova respond`` job on the local GitHub server — exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.conversation.support import (
    ERROR,
    WARNING,
    findings,
    inline,
    nova_replies,
    open_pull,
    review,
)
from tests.hosts.github.support import REPO, TOKEN
from tests.serve.support import ServeProcess, base_env, ended, github_post
from tests.servers.github_server import FakeGitHub
from tests.servers.openai_server import FakeOpenAI, text

pytestmark = pytest.mark.slow


def test_a_question_to_nova_gets_one_answer(
    repo: GitRepo, gh: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    open_pull(repo, gh)
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    assert review(tmp_path, "--fail-on", "error").exit_code == 1  # Nova's threads exist
    gh.permissions["bob"] = "write"  # he may ask (NOVA_QUESTIONS_FROM)
    question = gh.reply_as("bob", inline(gh, "warning"), "@nova explain")
    env = base_env(
        tmp_path, GITHUB_TOKEN=TOKEN, GITHUB_API_URL=gh.base_url, NOVA_GITHUB_WRITE_INTERVAL="0"
    )  # no model in the jobs: the answer says how to turn it on
    server = ServeProcess(tmp_path / "data", env).start()
    try:
        event = {
            "action": "created",
            "comment": question,
            "pull_request": {"number": 1},
            "repository": {"full_name": REPO},
            "sender": {"login": "bob", "type": "User"},
        }
        answer = github_post(server.client, "pull_request_review_comment", event, "q-1")
        assert answer.status_code == 202 and answer.json()["kind"] == "respond"
        again = github_post(server.client, "pull_request_review_comment", event, "q-1")
        assert again.json() == {"status": "duplicate"}
        m = server.wait_for(lambda m: ended(m) >= 1, "the respond job")
        logs = [p.read_text(errors="replace") for p in (tmp_path / "data").rglob("*.log")]
        assert m['nova_serve_jobs_total{outcome="done"}'] == 1, "".join([*server.lines, *logs])
        (reply,) = nova_replies(gh)
        assert reply["in_reply_to_id"] == inline(gh, "warning")["id"]
        assert "NOVA_LLM_MODEL" in reply["body"]
        # Nova's own answer, delivered back to the server, starts nothing
        own = {**event, "comment": reply, "sender": {"login": gh.login, "type": "Bot"}}
        assert (
            github_post(server.client, "pull_request_review_comment", own, "q-2").json()["status"]
            == "ignored"
        )
    finally:
        server.stop()
