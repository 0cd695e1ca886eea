"""A new push to a reviewed pull request: only what the new commits changed reaches the model,
earlier findings still stand (listed, and counted by --fail-on until their line changes),
a force-push falls back to the whole change, --full forces it. Local GitHub server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.hosts.github.support import REPO, files_between, pull_from_repo
from tests.hosts.github.test_github import _nova_inline, model_reply, review
from tests.servers.github_server import FakeGitHub, PullSpec
from tests.servers.openai_server import FakeOpenAI, text

pytestmark = pytest.mark.slow  # every test here takes seconds: not in the fast lane


def _prompt(llm: FakeOpenAI) -> str:
    return "\n".join(str(m.get("content")) for m in llm.requests[-1]["messages"])


def _push(
    repo: GitRepo, gh: FakeGitHub, pr: PullSpec, since: str, status: str = "ahead"
) -> PullSpec:
    head = repo.git("rev-parse", "HEAD").strip()
    gh.comparisons[(since, head)] = (status, files_between(repo, since, head))
    return gh.add_pull(pull_from_repo(repo, pr.base_sha, head, title="Cart changes"))


def test_a_second_push_reviews_only_the_new_commits(
    pr: PullSpec, gh: FakeGitHub, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    llm_env.enqueue(text(model_reply()))
    first = review(tmp_path, f"{REPO}#1", "--publish", "github", "--fail-on", "error")
    assert first.exit_code == 1  # "None items" on shop/total.py is an error
    repo.write("shop/extra.py", "LIMIT = 10\n")
    repo.commit("add a limit")
    _push(repo, gh, pr, pr.head_sha)
    llm_env.enqueue(
        text(
            json.dumps(
                {
                    "summary": "s",
                    "comments": [
                        {
                            "path": "shop/extra.py",
                            "line": 1,
                            "code": "LIMIT = 10",
                            "body": "magic limit",
                            "severity": "info",
                        }
                    ],
                }
            )
        )
    )
    second = review(
        tmp_path, f"{REPO}#1", "--publish", "github", "--fail-on", "error", "-o", "json"
    )
    prompt = _prompt(llm_env)
    assert "shop/extra.py" in prompt and "shop/cart.py" not in prompt
    assert "incremental review" in json.loads(second.stdout)["summary"]
    assert {(c["path"], c["line"]) for c in _nova_inline(gh)} >= {
        ("shop/extra.py", 1),
        ("shop/total.py", 5),
    }
    # the earlier error still stands on an unchanged line: the gate stays red
    assert second.exit_code == 1, second.stderr
    summary = gh.issue_comments[0]["body"]
    assert "nova:verdict:error=1,warning=" in summary
    earlier = summary.split("### Earlier findings")[1]
    assert "shop/cart.py:12" in earlier and "deleted" in earlier  # still listed
    # a push that changes the error's line makes it outdated: the gate opens
    repo.write("shop/total.py", "\n\ndef total(items):\n    return sum(items or [])\n")
    repo.commit("handle None")
    _push(repo, gh, pr, repo.git("rev-parse", "HEAD~1").strip())
    llm_env.enqueue(text(json.dumps({"summary": "fixed", "comments": []})))
    third = review(tmp_path, f"{REPO}#1", "--publish", "github", "--fail-on", "error")
    assert third.exit_code == 0, third.stderr
    assert "nova:verdict:error=0," in gh.issue_comments[0]["body"]
    assert len(gh.issue_comments) == 1


def test_a_force_push_reviews_the_whole_change(
    pr: PullSpec, gh: FakeGitHub, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    llm_env.enqueue(text(model_reply()))
    review(tmp_path, f"{REPO}#1", "--publish", "github")
    repo.git("commit", "-q", "--amend", "-m", "Cart changes, amended")
    _push(repo, gh, pr, pr.head_sha, status="diverged")
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, f"{REPO}#1", "--publish", "github", "-o", "json")
    assert "no longer in this branch" in json.loads(result.stdout)["summary"]
    assert "shop/cart.py" in _prompt(llm_env)
    assert len(_nova_inline(gh)) == 5  # nothing posted twice


def test_full_reviews_everything(
    pr: PullSpec, gh: FakeGitHub, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    llm_env.enqueue(text(model_reply()))
    review(tmp_path, f"{REPO}#1", "--publish", "github")
    repo.write("shop/extra.py", "LIMIT = 10\n")
    repo.commit("add a limit")
    _push(repo, gh, pr, pr.head_sha)
    llm_env.enqueue(text(model_reply()))
    review(tmp_path, f"{REPO}#1", "--publish", "github", "--full")
    assert "shop/cart.py" in _prompt(llm_env) and "shop/extra.py" in _prompt(llm_env)
