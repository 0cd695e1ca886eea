"""Every thread is read to the end on every host: a thread of 150 comments, questions
before and after the 100th, and repeated runs answer each question exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import cli
from tests.conftest import GitRepo
from tests.conversation import test_gitlab as gitlab_case
from tests.conversation import test_phorge as phorge_case
from tests.conversation.support import ERROR, WARNING, findings, inline, nova, open_pull, review
from tests.hosts.github.support import REPO
from tests.hosts.gitlab.test_gitlab import REF
from tests.servers.conduit_server import BOT_PHID
from tests.servers.conduit_threads import FakePhorge
from tests.servers.github_server import FakeGitHub
from tests.servers.gitlab_server import FakeGitLab
from tests.servers.openai_server import FakeOpenAI, text

COMMENTS = 150  # in the thread before Nova answers: its finding and 149 replies
ASKED = (10, 60, 99, 101, 130, 149)  # which replies ask Nova something
RUNS = 4


@pytest.fixture(autouse=True)
def _every_question_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOVA_ANSWERS_PER_PERSON_PER_HOUR", str(len(ASKED)))


def _reply(n: int) -> str:
    return f"@nova question {n}: why?" if n in ASKED else f"comment {n}, no command"


def _answered_once(bodies: list[str], ids: list[str]) -> None:
    for ident in ids:
        assert sum(f"nova:re:{ident}" in b for b in bodies) == 1, ident


def test_a_github_thread_of_150_comments_is_answered_once_per_question(
    repo: GitRepo, gh: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    open_pull(repo, gh)
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    assert review(tmp_path, "--fail-on", "error").exit_code == 1
    error = inline(gh, "error")
    asked = [gh.reply_as("octocat", error, _reply(n)) for n in range(1, COMMENTS)]
    llm_env.enqueue(*[text(f"answer {n}") for n in ASKED])
    for _ in range(RUNS):
        run = nova(tmp_path, "respond", f"{REPO}#1")
        assert run.exit_code == 0, run.stderr
    mine = [c["body"] for c in gh.review_comments if c["user"]["login"] == gh.login]
    _answered_once(mine, [str(asked[n - 1]["id"]) for n in ASKED])
    assert sum("nova:re:" in b for b in mine) == len(ASKED)


def test_a_gitlab_thread_of_150_notes_is_answered_once_per_question(
    repo: GitRepo, gl: FakeGitLab, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    from tests.conversation.test_inert_hosts import gitlab_mr

    gitlab_mr(repo, gl)
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    assert gitlab_case.review(tmp_path, "--fail-on", "error").exit_code == 1
    error = gitlab_case.thread(gl, "error")
    gl.max_per_page = 20  # the discussions themselves come in pages too
    for n in range(30):  # more threads than one page holds
        gl.add_thread(gl.merge_requests[next(iter(gl.merge_requests))], f"note {n}", {})
    gl.access[9] = 30
    asked = [gl.reply_as(9, "dev", error, _reply(n)) for n in range(1, COMMENTS)]
    llm_env.enqueue(*[text(f"answer {n}") for n in ASKED])
    for _ in range(RUNS):
        run = gitlab_case.nova(tmp_path, "respond", REF)
        assert run.exit_code == 0, run.stderr
    mine = [n["body"] for n in gitlab_case.nova_replies(gl)]
    _answered_once(mine, [str(asked[n - 1]["id"]) for n in ASKED])
    assert len(mine) == len(ASKED)


def test_a_phorge_thread_of_150_inlines_is_answered_once_per_question(
    repo: GitRepo, phorge: FakePhorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    from tests.conversation.support import BASE, HEAD

    repo.write("pay.py", BASE)
    repo.commit("base")
    phorge_case._diff(repo, phorge, None, HEAD, 100)
    phorge.reviewers[7] = [phorge_case.REVIEWER]
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    assert phorge_case.review(tmp_path, "--fail-on", "error").exit_code == 1
    error = phorge_case.inline(phorge, "30%")
    asked = [
        phorge.reply_inline(phorge_case.REVIEWER, error, _reply(n)) for n in range(1, COMMENTS)
    ]
    llm_env.enqueue(*[text(f"answer {n}") for n in ASKED])
    for _ in range(RUNS):
        run = CliRunner().invoke(cli, ["respond", "D7", "--repo", str(tmp_path), "-q"])
        assert run.exit_code == 0, run.stderr
    mine = [i["content"] for i in phorge.inlines if i["authorPHID"] == BOT_PHID]
    _answered_once(mine, [asked[n - 1]["cphid"] for n in ASKED])
    assert sum("nova:re:" in b for b in mine) == len(ASKED)
    assert phorge.pages_served > 1  # transaction.search was read in pages
