"""Dismissals on the record, end to end on the local GitHub server (REST + GraphQL): who may
dismiss is asked of GitHub's collaborator-permission API, the gate opens for a maintainer's
dismissal, stays shut for anyone else's, and re-runs agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.conversation.support import (
    ERROR,
    HEAD,
    WARNING,
    findings,
    inline,
    names_dismissal,
    nova_replies,
    open_pull,
    push,
    review,
)
from tests.hosts.github.support import REPO
from tests.servers.github_server import FakeGitHub
from tests.servers.openai_server import FakeOpenAI, text


@pytest.fixture
def reviewed(repo: GitRepo, gh: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path) -> FakeGitHub:
    open_pull(repo, gh)
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    first = review(tmp_path, "--fail-on", "error")
    assert first.exit_code == 1, first.stderr
    return gh


def test_a_maintainers_dismissal_opens_the_gate_on_the_record(
    reviewed: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    gh = reviewed
    gh.permissions["alice"] = "maintain"
    gh.reply_as("alice", inline(gh, "error"), "@nova dismiss not a bug")
    llm_env.enqueue(text(findings(ERROR, WARNING)))  # the head is reviewed again once
    second = review(
        tmp_path, "--fail-on", "error", "-o", "json", "--events-file", str(tmp_path / "ev.jsonl")
    )
    assert second.exit_code == 0, second.stderr
    summary = gh.issue_comments[0]["body"]
    assert "Dismissed" in summary and "dismissed by `@alice`" in summary and "not a bug" in summary
    assert "nova:verdict:error=0,warning=1" in summary
    (ack,) = nova_replies(gh)
    assert (
        "Dismissed by `alice`" in ack["body"] and ack["in_reply_to_id"] == inline(gh, "error")["id"]
    )
    events = [json.loads(line) for line in (tmp_path / "ev.jsonl").read_text().splitlines()]
    decision = next(e for e in events if e["event_type"] == "decision")
    assert decision["actor"] == "alice" and decision["outcome"] == "dismissed"
    assert decision["allowed"] is True
    # a re-run on the same head: no model call, nothing new posted, the same exit code
    comments, calls = len(gh.review_comments) + len(gh.issue_comments), len(llm_env.requests)
    third = review(tmp_path, "--fail-on", "error")
    assert third.exit_code == 0, third.stderr
    assert len(gh.review_comments) + len(gh.issue_comments) == comments
    assert len(llm_env.requests) == calls


def test_a_dismissal_by_someone_without_write_access_changes_nothing(
    reviewed: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    gh = reviewed
    gh.permissions["mallory"] = "triage"  # GitHub's legacy "permission" reads "read"
    gh.reply_as("mallory", inline(gh, "error"), "@nova dismiss not a bug")
    comments_before = len(gh.review_comments)
    second = review(tmp_path, "--fail-on", "error")
    assert second.exit_code == 1, second.stderr
    (refusal,) = nova_replies(gh)
    assert "write, maintain or admin" in refusal["body"] and "`triage`" in refusal["body"]
    assert len(gh.review_comments) == comments_before + 1  # the one reply, nothing else
    third = review(tmp_path, "--fail-on", "error")
    assert third.exit_code == 1
    assert len(nova_replies(gh)) == 1  # never twice


def test_a_dismissal_holds_on_later_pushes(
    reviewed: FakeGitHub, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    gh = reviewed
    gh.permissions["alice"] = "admin"
    gh.reply_as("alice", inline(gh, "error"), "@nova dismiss not a bug")
    pr = gh.pulls[(REPO, 1)]
    pr = push(repo, gh, pr, HEAD + "\n\ndef refund(order):\n    return -order.total\n")
    # the last verdict still counts the error: this push is reviewed whole, once
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    second = review(tmp_path, "--fail-on", "error", "-o", "json")
    assert second.exit_code == 0, second.stderr
    assert "the whole change was reviewed" in json.loads(second.stdout)["summary"]
    # the next push is incremental again, and the dismissed error is not carried
    push(repo, gh, pr, HEAD + "\n\ndef refund(order):\n    return 0 - order.total\n")
    llm_env.enqueue(text(findings()))
    third = review(tmp_path, "--fail-on", "error", "-o", "json")
    assert third.exit_code == 0, third.stderr
    assert "incremental review" in json.loads(third.stdout)["summary"]
    assert names_dismissal(gh.issue_comments[0]["body"], "alice", "not a bug")


def test_each_decision_is_a_task_manager_step(
    reviewed: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.servers.taskmanager_server import FakeTaskManager

    tm = FakeTaskManager().start()
    try:
        tm.add_execution("exec-7")
        monkeypatch.setenv("NOVA_TASK_MANAGER_URL", tm.url)
        monkeypatch.setenv("NOVA_EXECUTION_ID", "exec-7")
        reviewed.reply_as("mallory", inline(reviewed, "error"), "@nova dismiss not a bug")
        assert review(tmp_path, "--fail-on", "error").exit_code == 1
        steps = {s["step_name"]: s for s in tm.steps_of("exec-7")}
    finally:
        tm.stop()
    assert steps["conversation"]["status"] == "completed"
    assert "1 command(s)" in steps["conversation"]["message"]
    assert steps["respond"]["status"] == "completed"
    assert "1 answer(s) posted" in steps["respond"]["message"]


def test_reactions_on_novas_comment_are_read_into_the_decision_event(
    reviewed: FakeGitHub, tmp_path: Path
) -> None:
    """👍 / 👎 on Nova's finding come with the threads query (GraphQL ``reactionGroups``,
    no extra call) and are counted in the JSONL decision about that finding."""
    gh = reviewed
    error = inline(gh, "error")
    gh.react_as("alice", error, "THUMBS_UP")
    gh.react_as("bob", error, "THUMBS_DOWN")
    gh.react_as("carol", error, "THUMBS_DOWN")
    gh.react_as("carol", error, "HEART")
    gh.react_as("alice", inline(gh, "warning"), "THUMBS_UP")  # another finding's comment
    gh.permissions["mallory"] = "read"
    reply = gh.reply_as("mallory", error, "@nova dismiss not a bug")
    gh.react_as("alice", reply, "THUMBS_UP")  # on a person's reply: not Nova's rating
    graphql = sum(p.endswith("/graphql") for _m, p, _b in gh.requests)
    events_file = tmp_path / "ev.jsonl"
    assert review(tmp_path, "--fail-on", "error", "--events-file", str(events_file)).exit_code == 1
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    (decision,) = [e for e in events if e["event_type"] == "decision"]
    assert decision["outcome"] == "refused" and decision["actor"] == "mallory"
    assert decision["reactions"] == {"up": 1, "down": 2}
    reads = [p for m, p, _b in gh.requests if m == "GET" and "reactions" in p]
    assert reads == []  # read with the threads, not one REST call per comment
    assert sum(p.endswith("/graphql") for _m, p, _b in gh.requests) > graphql
