"""GitHub's ``Retry-After`` is capped like GitLab's: a huge one is not slept out (urllib3
would), an HTTP date is read (issue 27, section 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hosts.github.support import REPO
from tests.hosts.github.test_github import model_reply, review
from tests.servers.github_server import FakeGitHub, PullSpec
from tests.servers.openai_server import FakeOpenAI, text


def _review_posts(gh: FakeGitHub) -> int:
    return sum(1 for m, p, _ in gh.requests if m == "POST" and p.endswith("/reviews"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["429", "secondary"])  # secondary: 403 + retry-after
def test_a_huge_retry_after_fails_at_once(
    pr: PullSpec, gh: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path, kind: str
) -> None:
    """Not slept out, and not taken for a read-only token (annotations, exit 0)."""
    gh.rate_limited_writes, gh.rate_limit_kind, gh.retry_after = 50, kind, "3600"
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, f"{REPO}#1", "--publish", "github")  # no sleep: it would not end
    assert result.exit_code == 3, result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("nova: error:")]
    assert errors and all("asked to wait 3,600 s" in ln for ln in errors), result.stderr
    assert "Traceback" not in result.stderr
    assert gh.reviews == [] and gh.issue_comments == []


@pytest.mark.slow
def test_retry_after_as_an_http_date_is_waited_and_the_review_posts(
    pr: PullSpec, gh: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    gh.rate_limited_writes, gh.retry_after = 1, "Wed, 21 Oct 2015 07:28:00 GMT"  # over
    llm_env.enqueue(text(model_reply()))
    result = review(tmp_path, f"{REPO}#1", "--publish", "github")
    assert result.exit_code == 0, result.stderr
    assert _review_posts(gh) == 2 and len(gh.reviews) == 1 and len(gh.issue_comments) == 1
