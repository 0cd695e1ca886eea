"""The conversation on the local GitLab server, through python-gitlab: a Developer's
dismissal opens the gate, a Reporter's is refused once, a fixed thread is resolved, a
question is answered once."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bot.cli import cli
from tests.conftest import GitRepo
from tests.conversation.support import BASE, ERROR, HEAD, WARNING, findings
from tests.hosts.gitlab.test_gitlab import REF, mr_from_repo
from tests.servers.gitlab_server import FakeGitLab, MergeRequestSpec
from tests.servers.openai_server import FakeOpenAI, text


@pytest.fixture
def mr(repo: GitRepo, gl: FakeGitLab, llm_env: FakeOpenAI, tmp_path: Path) -> MergeRequestSpec:
    repo.write("pay.py", BASE)
    base = repo.commit("base")
    repo.write("pay.py", HEAD)
    head = repo.commit("fee")
    spec = gl.add_merge_request(mr_from_repo(repo, base, head, title="Payment fee"))
    gl.repository = repo.path
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    assert review(tmp_path, "--fail-on", "error").exit_code == 1
    return spec


def nova(tmp_path: Path, *args: str) -> Result:
    empty = tmp_path / "no-checkout"
    empty.mkdir(exist_ok=True)
    return CliRunner().invoke(
        cli, [*args[:1], "--repo", str(empty), "-q", *args[1:]], catch_exceptions=False
    )


def review(tmp_path: Path, *args: str) -> Result:
    return nova(tmp_path, "review", REF, "--publish", "gitlab", "--analyzers", "none", *args)


def thread(gl: FakeGitLab, severity: str) -> dict:
    return next(d for d in gl.discussions if f"**{severity}**" in d["notes"][0]["body"])


def nova_replies(gl: FakeGitLab) -> list[dict]:
    return [n for d in gl.discussions for n in d["notes"][1:] if n["author"]["id"] == gl.user["id"]]


def test_a_developers_dismissal_opens_the_gate_a_reporters_does_not(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    error = thread(gl, "error")
    gl.access[8] = 20  # Reporter
    gl.reply_as(8, "rita", error, "@nova dismiss not a bug")
    second = review(tmp_path, "--fail-on", "error")
    assert second.exit_code == 1, second.stderr
    (refusal,) = nova_replies(gl)
    assert "Developer access or above" in refusal["body"] and "`Reporter`" in refusal["body"]
    gl.access[9] = 30  # Developer
    gl.reply_as(9, "dev", error, "@nova false positive: the fee is 30% by contract")
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    third = review(tmp_path, "--fail-on", "error")
    assert third.exit_code == 0, third.stderr
    summary = next(n for n in gl.notes if "nova:summary" in n["body"])["body"]
    assert "dismissed by `@dev`" in summary and "the fee is 30% by contract" in summary
    assert len(nova_replies(gl)) == 2  # the refusal, the acknowledgement
    fourth = review(tmp_path, "--fail-on", "error")
    assert fourth.exit_code == 0, fourth.stderr
    assert len(nova_replies(gl)) == 2


def test_a_fixed_thread_is_resolved_and_a_question_answered_once(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    warning, error = thread(gl, "warning"), thread(gl, "error")
    gl.access[9] = 30  # a Developer: may ask
    question = gl.reply_as(9, "dev", error, "@nova why is this an error?")
    repo.write("pay.py", HEAD.replace("print('paid', total)", "log.info('paid %s', total)"))
    head = repo.commit("no print")
    gl.add_merge_request(mr_from_repo(repo, mr.base_sha, head, title="Payment fee"))
    llm_env.enqueue(text(findings()))  # the review: the warning is gone
    llm_env.enqueue(text("Because 0.3 is a 30% fee."))  # the answer
    second = review(tmp_path, "--fail-on", "error")
    assert second.exit_code == 1, second.stderr  # the error still stands
    assert warning["notes"][0]["resolved"] and not error["notes"][0].get("resolved")
    assert warning["notes"][-1]["body"].startswith(f"Fixed in `{head[:12]}`")
    answers = [n for n in error["notes"] if f"nova:re:{question['id']}" in n["body"]]
    assert len(answers) == 1 and "30% fee" in answers[0]["body"]
    again = nova(tmp_path, "respond", REF, "--comment", str(question["id"]))
    assert again.exit_code == 0 and "answered already" in again.stderr


def test_bots_edits_and_quotes_are_no_commands_on_gitlab(
    mr: MergeRequestSpec, gl: FakeGitLab, tmp_path: Path
) -> None:
    error = thread(gl, "error")
    gl.access.update({11: 40, 12: 40, 13: 40})
    gl.reply_as(11, "project_42_bot_0a1b", error, "@nova dismiss a token's bot")
    edited = gl.reply_as(12, "maya", error, "fine")
    gl.edit_as_author(edited, "@nova dismiss edited into a command")
    gl.reply_as(13, "max", error, "> @nova dismiss\n\nquoting, not asking")
    result = review(tmp_path, "--fail-on", "error", "--events-file", str(tmp_path / "e.jsonl"))
    assert result.exit_code == 1, result.stderr
    assert nova_replies(gl) == []
    assert '"decision"' not in (tmp_path / "e.jsonl").read_text()


def test_nova_review_on_gitlab_reviews_the_new_commits(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    repo.write("pay.py", HEAD + "\n\ndef refund(order):\n    return -order.total\n")
    head = repo.commit("refund")
    gl.add_merge_request(mr_from_repo(repo, mr.base_sha, head, title="Payment fee"))
    ask = gl.add_note(mr, "@nova review", user_id=9, username="dev")
    llm_env.enqueue(text(findings()))
    result = nova(tmp_path, "respond", REF, "--comment", str(ask["id"]), "--fail-on", "error")
    assert result.exit_code == 1, result.stderr  # the earlier error still stands
    prompt = str(llm_env.requests[-1]["messages"])
    assert "refund" in prompt and "fee = total" not in prompt  # only the new commit
    acks = [n for n in gl.notes if f"nova:re:{ask['id']}" in n["body"]]
    assert len(acks) == 1 and "Reviewing the new commits" in acks[0]["body"]


def test_award_emoji_on_novas_note_are_counted_in_the_decision_event(
    mr: MergeRequestSpec, gl: FakeGitLab, tmp_path: Path
) -> None:
    """👍 / 👎 (award emoji on the thread's first note) are read for Nova's threads and
    counted in the JSONL decision about that finding; emoji on a person's note are not."""
    import json

    error = thread(gl, "error")
    gl.award_as(8, "rita", error["notes"][0], "thumbsup")
    gl.award_as(9, "dev", error["notes"][0], "thumbsdown")
    gl.award_as(9, "dev", error["notes"][0], "thumbsdown")  # once each, as GitLab
    gl.award_as(9, "dev", error["notes"][0], "rocket")
    gl.access[8] = 20  # Reporter
    reply = gl.reply_as(8, "rita", error, "@nova dismiss not a bug")
    gl.award_as(9, "dev", reply, "thumbsdown")
    events_file = tmp_path / "e.jsonl"
    assert review(tmp_path, "--fail-on", "error", "--events-file", str(events_file)).exit_code == 1
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    (decision,) = [e for e in events if e["event_type"] == "decision"]
    assert decision["outcome"] == "refused" and decision["actor"] == "rita"
    assert decision["reactions"] == {"up": 1, "down": 1}
