"""A GitLab that throttles a thread past python-gitlab's waits (429): GitLab failed, not the
token, so the run exits 3 and the next run posts the thread (issue 27, section 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hosts.gitlab.test_gitlab import REF, model_reply, nova_notes, review, threads
from tests.servers.gitlab_server import FakeGitLab, MergeRequestSpec
from tests.servers.openai_server import FakeOpenAI, text


@pytest.mark.slow  # python-gitlab's waits, two runs
def test_a_thread_still_throttled_after_the_waits_exits_3_and_is_posted_next_run(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    gl.write_faults = [("POST", r"/discussions$", 429)] * 4  # one thread, past its retries
    llm_env.enqueue(text(model_reply()))
    first = review(tmp_path, REF, "--publish", "gitlab", "--analyzers", "none")
    assert first.exit_code == 3, first.stderr
    (summary,) = nova_notes(gl)
    assert "HTTP 429" in summary["body"] and "failed=1" in summary["body"]
    posted = len(threads(gl))
    llm_env.enqueue(text(model_reply()))
    second = review(tmp_path, REF, "--publish", "gitlab", "--analyzers", "none")
    assert second.exit_code == 0, second.stderr
    assert len(threads(gl)) == posted + 1 and len(nova_notes(gl)) == 1
    assert "failed=0" in nova_notes(gl)[0]["body"]
