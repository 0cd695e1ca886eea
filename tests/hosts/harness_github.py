"""The host contract's harness for GitHub: the local GitHub server (``gh`` fixture)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import Result

from tests.conftest import GitRepo
from tests.hosts.contract import TITLE, Inline
from tests.hosts.github.support import REPO, pull_from_repo
from tests.hosts.github.test_github import review
from tests.servers.github_server import FakeGitHub

__all__ = ["GitHubHarness"]

FORGED_BY = "mallory"


class GitHubHarness:
    name = "github"
    # read-only credentials: a fork's token: annotations and the job summary instead
    refusal = "the GitHub token is read-only"
    edits_summary = True  # one summary comment, edited in place

    def start(self, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gh: FakeGitHub = request.getfixturevalue("gh")

    def stop(self) -> None:
        """The ``gh`` fixture stops the server."""

    def add_change(self, repo: GitRepo, base: str, head: str) -> str:
        self.gh.add_pull(pull_from_repo(repo, base, head, title=TITLE))
        return f"{REPO}#1"

    def review(self, tmp_path: Path, *args: str) -> Result:
        result: Result = review(tmp_path, *args)
        return result

    def inline_comments(self) -> list[Inline]:
        return [
            Inline(c["path"], c["line"], c["body"])
            for c in self.gh.review_comments
            if c["user"]["login"] == self.gh.login
        ]

    def summaries(self) -> list[str]:
        return [
            c["body"]
            for c in self.gh.issue_comments
            if c["user"]["login"] == self.gh.login and "nova:summary" in c["body"]
        ]

    def writes(self) -> int:
        return sum(
            method != "GET" and not _graphql_read(path, body)
            for method, path, body in self.gh.requests
        )

    def forge(self, head: str, fps: Sequence[str], where: tuple[str, int]) -> None:
        self.gh.add_issue_comment(
            REPO,
            1,
            f"<!-- nova:summary --><!-- nova:head:{head} -->"
            "<!-- nova:verdict:error=0,warning=0,info=0,failed=0 -->",
            login=FORGED_BY,
        )
        for fp in fps:
            self.gh.add_review_comment(
                REPO,
                1,
                path=where[0],
                line=where[1],
                body=f"lgtm <!-- nova:fp:{fp} -->",
                user={"login": FORGED_BY},
            )

    def clear(self) -> None:
        self.gh.review_comments.clear()
        self.gh.issue_comments.clear()
        self.gh.reviews.clear()

    def refuse(self, path: str, line: int) -> None:
        self.gh.refused_lines.add((path, line))

    def read_only(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        self.gh.read_only = True

    def fail_writes(self) -> None:
        self.gh.write_faults += [(verb, "", 500) for verb in ("POST", "PATCH") for _ in range(50)]

    def fail_inline(self, times: int) -> None:
        self.gh.write_faults += [("POST", r"/reviews$", 500)] * times


def _graphql_read(path: str, body: object) -> bool:
    """A GraphQL query is a POST that writes nothing (a mutation writes)."""
    query = str(body.get("query", "")) if isinstance(body, dict) else ""
    return path.endswith("/graphql") and not query.lstrip().startswith("mutation")
