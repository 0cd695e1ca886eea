"""GitLab's ``Retry-After``, as an HTTP date or a huge number: read by Nova, never a crash and
never slept out (issue 27, section 6), through python-gitlab against the local GitLab."""

from __future__ import annotations

import time
from email.utils import formatdate
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.hosts.timeouts import requested_wait
from tests.hosts.gitlab.test_gitlab import REF, model_reply, nova_notes, review, threads
from tests.servers.gitlab_server import FakeGitLab, MergeRequestSpec
from tests.servers.openai_server import FakeOpenAI, text

NOW = 1_800_000_000.0


def test_both_forms_of_retry_after_and_gitlabs_reset() -> None:
    assert requested_wait({"Retry-After": "30"}, NOW) == 30
    assert requested_wait({"retry-after": formatdate(NOW + 90, usegmt=True)}, NOW) == 90
    assert requested_wait({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, NOW) == 0  # past
    assert requested_wait({"Retry-After": "3600"}, NOW) == 3600
    assert requested_wait({"Retry-After": "soon"}, NOW) is None
    assert requested_wait({"RateLimit-Reset": str(int(NOW) + 12)}, NOW) == 12
    assert requested_wait({}, NOW) is None


@given(st.text(max_size=60), st.sampled_from(["Retry-After", "RateLimit-Reset"]))
def test_any_header_value_gives_a_wait_or_none(value: str, name: str) -> None:
    wait = requested_wait({name: value}, NOW)
    assert wait is None or wait >= 0


def _posts(gl: FakeGitLab, tail: str) -> int:
    return sum(1 for m, p, _ in gl.requests if m == "POST" and p.endswith(tail))


@pytest.mark.slow
def test_retry_after_as_an_http_date_is_waited_and_the_review_posts(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    """python-gitlab's int() raised on it: a traceback, exit 1, nothing posted."""
    past = "Wed, 21 Oct 2015 07:28:00 GMT"  # already over: no wait at all
    gl.retry_after_faults += [
        ("POST", r"/discussions$", 429, past),
        ("POST", r"/notes$", 429, lambda: formatdate(time.time() - 5, usegmt=True)),
        ("GET", r"/merge_requests/1$", 503, past),  # a read GitLab was too busy to answer
    ]
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, REF, "--publish", "gitlab")
    assert result.exit_code == 0, result.stderr
    assert gl.retry_after_faults == []  # each was met, and retried
    assert len(threads(gl)) == 7 and len(nova_notes(gl)) == 1
    assert _posts(gl, "/discussions") == 7 + 1


@pytest.mark.slow
def test_a_huge_retry_after_is_not_slept_out(
    mr: MergeRequestSpec, gl: FakeGitLab, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    """One 429 with Retry-After: 3600 kept the job asleep until it was killed."""
    gl.retry_after_faults += [("POST", r"/discussions$", 429, "3600")] * 20
    gl.retry_after_faults += [("POST", r"/notes$", 429, "3600")] * 5
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, REF, "--publish", "gitlab")  # no sleep: it would not end
    assert result.exit_code == 3, result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("nova: error:")]
    assert len(errors) == 1 and "asked to wait 3,600 s" in errors[0], result.stderr
    assert "Traceback" not in result.stderr
    assert threads(gl) == [] and nova_notes(gl) == []  # nothing was stored, nothing half-done
