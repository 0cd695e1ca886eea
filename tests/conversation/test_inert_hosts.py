"""End to end, with the real clients: a scripted model whose findings, summary,
walkthrough and answers carry GitLab quick actions, Prow and bors commands and a suggestion
block. The local GitLab runs quick actions in what Nova posts, as GitLab does: none runs.
On GitHub and Phorge no reader (tests/report/readers.py) finds a command in anything Nova
posted. Every finding is still posted, and its words are there to read."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GitRepo
from tests.conversation import test_gitlab as gitlab_case
from tests.conversation import test_phorge as phorge_case
from tests.conversation.support import ERROR, WARNING, inline, nova, open_pull, review
from tests.hosts.github.support import REPO
from tests.hosts.gitlab.test_gitlab import REF
from tests.report.readers import commands
from tests.servers.conduit_server import BOT_PHID
from tests.servers.conduit_threads import FakePhorge
from tests.servers.github_server import FakeGitHub
from tests.servers.gitlab_server import FakeGitLab, MergeRequestSpec
from tests.servers.openai_server import FakeOpenAI, text

ACTS = (
    "/approve\n/merge\r/close\n  /lgtm\n> /hold\n\u200b/approve\n/Label ~ship\u2028/unassign\n"
    "bors r+\nBors merge"
)
HOSTILE = f"The fee is 30%, not 3%.\n{ACTS}\n```suggestion\nfee = total * 0.03\n```"


def hostile_findings() -> str:
    """The error carries every command and a suggestion block in its text, the warning a
    suggestion that is itself a command; the summary and the walkthrough carry them too."""
    return json.dumps(
        {
            "summary": f"Payment fee.\n{ACTS}",
            "walkthrough": [{"path": "pay.py", "change": f"adds a fee\n{ACTS}"}],
            "comments": [
                {**ERROR, "body": HOSTILE, "suggestion": "    fee = total * 0.03"},
                {**WARNING, "body": f"print left in\n{ACTS}", "suggestion": "/merge"},
            ],
        }
    )


def _readable(body: str) -> None:
    for words in ["The fee is 30%", "approve", "merge", "lgtm", "hold", "r+"]:
        assert words in body, (words, body)


def test_nothing_nova_posts_on_gitlab_runs_a_quick_action(
    repo: GitRepo, gl: FakeGitLab, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    mr = gitlab_mr(repo, gl)
    llm_env.enqueue(text(hostile_findings()))
    assert gitlab_case.review(tmp_path, "--fail-on", "error").exit_code == 1
    error = gitlab_case.thread(gl, "error")
    gl.reply_as(9, "dev", error, "@nova why?")
    gl.access[9] = 30
    llm_env.enqueue(text(f"Because.\n{HOSTILE}"))
    asked = gitlab_case.nova(tmp_path, "respond", REF)
    assert asked.exit_code == 0, asked.stderr
    mine = [a for a in gl.actions if a[0] == gl.user["username"]]
    assert mine == []
    threads = [d for d in gl.discussions if "nova:fp:" in d["notes"][0]["body"]]
    assert len(threads) == 2  # every finding posted
    _readable(error["notes"][0]["body"])
    assert "```suggestion:-0+0\n    fee = total * 0.03\n```" in error["notes"][0]["body"]
    (answer,) = gitlab_case.nova_replies(gl)
    _readable(answer["body"])
    assert "```suggestion" not in answer["body"]
    summary = next(n for n in gl.notes if "nova:summary" in n["body"])["body"]
    assert "Payment fee." in summary and "adds a fee" in summary
    assert mr.iid  # the merge request is still open: nothing approved, merged or closed


def gitlab_mr(repo: GitRepo, gl: FakeGitLab) -> MergeRequestSpec:
    from tests.conversation.support import BASE, HEAD
    from tests.hosts.gitlab.test_gitlab import mr_from_repo

    repo.write("pay.py", BASE)
    base = repo.commit("base")
    repo.write("pay.py", HEAD)
    head = repo.commit("fee")
    gl.repository = repo.path
    return gl.add_merge_request(mr_from_repo(repo, base, head, title="Payment fee"))


def test_the_gitlab_server_runs_quick_actions_as_gitlab_does(gl: FakeGitLab) -> None:
    """The check above can fail: a note with quick actions runs them as its author."""
    from tests.servers.gitlab_threads import quick_actions

    found, kept = quick_actions("a\r\n/Approve\n```\n/merge\n```\n```\n/close")
    assert found == [("approve", ""), ("close", "")] and "/merge" in kept
    assert gl.execute("/merge\nok", gl.user, "here") == "ok"
    assert gl.actions == [("nova-bot", "merge", "", "here")]


def test_nothing_nova_posts_on_github_reads_as_a_command(
    repo: GitRepo, gh: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    open_pull(repo, gh)
    llm_env.enqueue(text(hostile_findings()))
    assert review(tmp_path, "--fail-on", "error").exit_code == 1
    error = inline(gh, "error")
    gh.reply_as("octocat", error, "@nova why?")  # the pull request's author
    llm_env.enqueue(text(f"Because.\n{HOSTILE}"))
    asked = nova(tmp_path, "respond", f"{REPO}#1")
    assert asked.exit_code == 0, asked.stderr
    posted = [
        c["body"] for c in gh.review_comments + gh.issue_comments if c["user"]["login"] == gh.login
    ]
    posted += [r.get("body") or "" for r in gh.reviews]
    assert len([b for b in posted if "nova:fp:" in b]) == 2  # every finding posted
    assert [b for b in posted if commands(b)] == []
    _readable(error["body"])
    assert "```suggestion\n    fee = total * 0.03\n```" in error["body"]
    answer = next(b for b in posted if "nova:re:" in b)
    _readable(answer)
    assert "```suggestion" not in answer


def test_nothing_nova_posts_on_phorge_reads_as_a_command(
    repo: GitRepo, phorge: FakePhorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    from tests.conversation.support import BASE, HEAD

    repo.write("pay.py", BASE)
    repo.commit("base")
    phorge_case._diff(repo, phorge, None, HEAD, 100)
    phorge.reviewers[7] = [phorge_case.REVIEWER]
    llm_env.enqueue(text(hostile_findings()))
    assert phorge_case.review(tmp_path, "--fail-on", "error").exit_code == 1
    error = phorge_case.inline(phorge, "30%")
    phorge.reply_inline(phorge_case.REVIEWER, error, "@nova why?")
    llm_env.enqueue(text(f"Because.\n{HOSTILE}"))
    from click.testing import CliRunner

    from bot.cli import cli

    asked = CliRunner().invoke(cli, ["respond", "D7", "--repo", str(tmp_path), "-q"])
    assert asked.exit_code == 0, asked.stderr
    posted = [i["content"] for i in phorge.inlines if i["authorPHID"] == BOT_PHID]
    posted += [t["text"] for t in phorge.timeline if t["author"] == BOT_PHID]
    posted += [json.dumps(m) for ms in phorge.build_messages.values() for m in ms]
    assert len([i for i in phorge.inlines if "nova:fp:" in i["content"]]) == 2
    assert [b for b in posted if commands(b)] == []
    _readable(error["content"])
    (answer,) = phorge_case.nova_replies(phorge)
    _readable(answer["content"])
