"""A new push to a reviewed merge request: only what the new commits changed reaches the
model (from the checkout when it has both commits, else GitLab's compare API), threads land
on the merge request's whole diff, earlier findings still stand until their line changes, a
force-push falls back to the whole change, ``--full`` forces it, and CI_JOB_TOKEN (which
cannot tell Nova's own notes) always reviews the whole change. Local GitLab server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gitlab.exceptions import GitlabGetError

from bot.config import load_settings
from bot.hosts import host_named
from bot.hosts.base import IncrementalSource
from tests.conftest import GitRepo
from tests.hosts.gitlab.test_gitlab import (
    JOB_TOKEN,
    REF,
    model_reply,
    mr_from_repo,
    nova_notes,
    review,
    threads,
)
from tests.servers.gitlab_server import FakeGitLab, MergeRequestSpec
from tests.servers.openai_server import FakeOpenAI, text

pytestmark = pytest.mark.slow  # every test here takes seconds: not in the fast lane

LIMIT = {"path": "shop/extra.py", "line": 1, "code": "LIMIT = 10", "body": "magic limit"}
# line_25 of the base is new line 24 (line 12 was dropped): an added line of the whole diff
BIG = {"path": "shop/cart.py", "line": 24, "code": "line_25 = 250", "body": "big again"}


def _prompt(llm: FakeOpenAI) -> str:
    return "\n".join(str(m.get("content")) for m in llm.requests[-1]["messages"])


def _reply(*comments: dict[str, object]) -> str:
    return json.dumps({"summary": "s", "comments": list(comments)})


def _push(repo: GitRepo, gl: FakeGitLab, mr: MergeRequestSpec) -> MergeRequestSpec:
    """The merge request now ends at the repository's HEAD (GitLab's repository has it)."""
    head = repo.git("rev-parse", "HEAD").strip()
    gl.repository = repo.path
    return gl.add_merge_request(mr_from_repo(repo, mr.base_sha, head, title=mr.title))


def _second_push(repo: GitRepo, gl: FakeGitLab, mr: MergeRequestSpec) -> MergeRequestSpec:
    repo.write("shop/extra.py", "LIMIT = 10\n")
    repo.write(
        "shop/cart.py",
        "".join(
            f"line_{i} = {i * 10 if i in (5, 20, 25) else i}\n" for i in range(1, 31) if i != 12
        ),
    )
    repo.commit("add a limit")
    return _push(repo, gl, mr)


def _summary(gl: FakeGitLab) -> str:
    (note,) = [n for n in nova_notes(gl) if "nova:summary" in n["body"]]
    return str(note["body"])


def _asked(gl: FakeGitLab, what: str) -> bool:
    return any(m == "GET" and p.endswith(what) for m, p, _b in gl.requests)


@pytest.mark.parametrize("where", ["compare API", "checkout"])
def test_a_second_push_reviews_only_the_new_commits(
    where: str,
    mr: MergeRequestSpec,
    gl: FakeGitLab,
    llm_env: FakeOpenAI,
    repo: GitRepo,
    tmp_path: Path,
) -> None:
    checkout = repo.path if where == "checkout" else None
    llm_env.enqueue(text(model_reply()))
    first = review(tmp_path, REF, "--publish", "gitlab", "--fail-on", "error", repo=checkout)
    assert first.exit_code == 1, first.stderr  # "None items" on shop/total.py is an error
    pushed = _second_push(repo, gl, mr)
    llm_env.enqueue(text(_reply({**LIMIT, "severity": "info"}, BIG)))
    second = review(
        tmp_path, REF, "--publish", "gitlab", "--fail-on", "error", "-o", "json", repo=checkout
    )
    prompt = _prompt(llm_env)
    assert "1 + LIMIT = 10" in prompt and "24 + line_25 = 250" in prompt  # new numbering
    assert "shop/total.py" not in prompt and "line_5 = 50" not in prompt  # reviewed before
    assert _asked(gl, "/repository/compare") is (where == "compare API")
    assert f"only what changed since {mr.head_sha[:12]}" in json.loads(second.stdout)["summary"]
    assert gl.rejected_positions == []
    new = {
        (n["position"]["new_path"], n["position"].get("old_line"), n["position"]["new_line"])
        for n in threads(gl)
        if n["position"]["head_sha"] == pushed.head_sha
    }
    # placed on the merge request's whole diff: line 24 is an added line there
    assert new == {("shop/extra.py", None, 1), ("shop/cart.py", None, 24)}
    assert all(n["position"]["base_sha"] == mr.base_sha for n in threads(gl))
    summary = _summary(gl)
    assert f"only what changed since {mr.head_sha[:12]}" in summary  # names the last head
    assert f"<!-- nova:head:{pushed.head_sha} -->" in summary
    # the earlier error still stands on an unchanged line: the gate stays red
    assert second.exit_code == 1, second.stderr
    assert "nova:verdict:error=1,warning=" in summary
    earlier = summary.split("### Earlier findings")[1]
    assert "shop/cart.py:12" in earlier and "deleted" in earlier  # still listed


def test_a_push_that_changes_an_earlier_findings_line_makes_it_outdated(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    llm_env.enqueue(text(model_reply()))
    assert review(tmp_path, REF, "--publish", "gitlab", "--fail-on", "error").exit_code == 1
    repo.write("shop/total.py", "import os\n\n\ndef total(items):\n    return sum(items or [])\n")
    repo.commit("handle None")
    _push(repo, gl, mr)
    llm_env.enqueue(text(_reply()))
    fixed = review(tmp_path, REF, "--publish", "gitlab", "--fail-on", "error")
    assert fixed.exit_code == 0, fixed.stderr
    assert "nova:verdict:error=0," in _summary(gl)
    (outdated,) = [n for n in threads(gl) if n["body"].startswith("> **Outdated**")]
    assert "None items" in outdated["body"]
    assert len(nova_notes(gl)) == 1 and len(threads(gl)) == 7  # edited, nothing new


def test_full_reviews_everything(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    llm_env.enqueue(text(model_reply()))
    review(tmp_path, REF, "--publish", "gitlab")
    _second_push(repo, gl, mr)
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, REF, "--publish", "gitlab", "--full", "-o", "json")
    assert "shop/total.py" in _prompt(llm_env) and "shop/extra.py" in _prompt(llm_env)
    assert "incremental" not in json.loads(result.stdout)["summary"]
    assert not _asked(gl, "/repository/compare") and not _asked(gl, "/repository/merge_base")


@pytest.mark.parametrize("where", ["compare API", "checkout"])
def test_a_force_push_reviews_the_whole_change(
    where: str,
    mr: MergeRequestSpec,
    gl: FakeGitLab,
    llm_env: FakeOpenAI,
    repo: GitRepo,
    tmp_path: Path,
) -> None:
    checkout = repo.path if where == "checkout" else None
    llm_env.enqueue(text(model_reply()))
    review(tmp_path, REF, "--publish", "gitlab", repo=checkout)
    repo.git("commit", "-q", "--amend", "-m", "Cart changes, amended")  # the old head is gone
    _push(repo, gl, mr)
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, REF, "--publish", "gitlab", "-o", "json", repo=checkout)
    summary = json.loads(result.stdout)["summary"]
    assert f"last reviewed head {mr.head_sha[:12]} is no longer in this branch" in summary
    assert "shop/total.py" in _prompt(llm_env)
    assert len(threads(gl)) == 7  # nothing posted twice


def test_a_last_head_gitlab_does_not_know_reviews_the_whole_change(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    llm_env.enqueue(text(model_reply()))
    review(tmp_path, REF, "--publish", "gitlab")
    (note,) = nova_notes(gl)
    note["body"] = note["body"].replace(mr.head_sha, "f" * 40)  # a head GitLab no longer has
    _second_push(repo, gl, mr)
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, REF, "--publish", "gitlab", "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert "is no longer in this branch" in json.loads(result.stdout)["summary"]
    assert "shop/total.py" in _prompt(llm_env) and "shop/extra.py" in _prompt(llm_env)


def test_a_summary_by_anyone_else_is_no_history(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    gl.add_note(
        mr,
        f"<!-- nova:summary --> <!-- nova:head:{mr.head_sha} -->"
        "<!-- nova:verdict:error=0,warning=0,info=0,failed=0 -->",
    )
    _second_push(repo, gl, mr)
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, REF, "--publish", "gitlab", "-o", "json")
    assert "incremental" not in json.loads(result.stdout)["summary"]
    assert "shop/total.py" in _prompt(llm_env)


def test_job_token_only_reviews_the_whole_change(
    mr: MergeRequestSpec,
    gl: FakeGitLab,
    llm_env: FakeOpenAI,
    repo: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm_env.enqueue(text(model_reply()))
    review(tmp_path, REF, "--publish", "gitlab")  # Nova's own summary is there
    _second_push(repo, gl, mr)
    monkeypatch.delenv("GITLAB_TOKEN")
    monkeypatch.setenv("CI_JOB_TOKEN", JOB_TOKEN)
    monkeypatch.chdir(tmp_path)
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, REF, "--publish", "gitlab", "-o", "json", repo=repo.path)
    assert result.exit_code == 0, result.stderr
    assert "incremental" not in json.loads(result.stdout)["summary"]
    assert "shop/total.py" in _prompt(llm_env) and "shop/extra.py" in _prompt(llm_env)


def test_changes_since_through_the_source(
    mr: MergeRequestSpec, gl: FakeGitLab, repo: GitRepo
) -> None:
    pushed = _second_push(repo, gl, mr)
    session = host_named("gitlab").open(load_settings(), None)
    change = session.source.fetch(REF)
    assert isinstance(session.source, IncrementalSource)
    since = session.source.changes_since(change, mr.head_sha)
    assert since is not None and since.id == REF and since.head_ref == pushed.head_sha
    assert since.base_ref == mr.head_sha
    assert {f.path for f in since.files} == {"shop/cart.py", "shop/extra.py"}
    assert session.source.changes_since(change, pushed.head_sha) is not None  # nothing new
    assert session.source.changes_since(change, "0" * 40) is None  # unknown to GitLab
    assert session.source.changes_since(change, mr.base_sha + "x") is None


def test_the_server_answers_compare_and_merge_base_like_gitlab(
    mr: MergeRequestSpec, gl: FakeGitLab, repo: GitRepo
) -> None:
    import gitlab

    pushed = _second_push(repo, gl, mr)
    project = gitlab.Gitlab(gl.url, private_token=gl.token).projects.get(mr.project, lazy=True)
    found = project.repository_compare(mr.head_sha, pushed.head_sha)
    assert isinstance(found, dict)
    assert [c["id"] for c in found["commits"]] == [pushed.head_sha]
    assert {d["new_path"] for d in found["diffs"]} == {"shop/cart.py", "shop/extra.py"}
    assert found["compare_timeout"] is False and found["compare_same_ref"] is False
    base = project.repository_merge_base([mr.head_sha, pushed.head_sha])
    assert isinstance(base, dict) and base["id"] == mr.head_sha
    with pytest.raises(GitlabGetError) as unknown:
        project.repository_compare("0" * 40, pushed.head_sha)
    assert unknown.value.response_code == 404 and "Ref Not Found" in str(unknown.value)
    with pytest.raises(GitlabGetError) as bad:
        project.repository_merge_base(["0" * 40, pushed.head_sha])
    assert bad.value.response_code == 400
    assert re.search(r"Could not find ref: 0{40}", str(bad.value))
