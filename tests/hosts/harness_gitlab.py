"""The host contract's harness for GitLab: the local GitLab server."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import Result

from tests.conftest import GitRepo
from tests.hosts.contract import TITLE, Inline
from tests.hosts.gitlab.test_gitlab import JOB_TOKEN, REF, TOKEN, mr_from_repo, review
from tests.servers.gitlab_server import FakeGitLab, MergeRequestSpec

__all__ = ["GitLabHarness"]


class GitLabHarness:
    name = "gitlab"
    # read-only credentials: CI_JOB_TOKEN: the job log and the Code Quality report instead
    refusal = "the GitLab token cannot post"
    edits_summary = True  # one summary note, edited in place

    def start(self, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gl = FakeGitLab(TOKEN, job_token=JOB_TOKEN).start()
        monkeypatch.setenv("GITLAB_TOKEN", TOKEN)
        monkeypatch.setenv("GITLAB_URL", self.gl.url)
        self.mr: MergeRequestSpec | None = None

    def stop(self) -> None:
        self.gl.stop()

    def add_change(self, repo: GitRepo, base: str, head: str) -> str:
        self.mr = self.gl.add_merge_request(mr_from_repo(repo, base, head, title=TITLE))
        return REF

    def review(self, tmp_path: Path, *args: str) -> Result:
        result: Result = review(tmp_path, *args)
        return result

    def _nova(self, note: dict[str, object]) -> bool:
        author = note["author"]
        return isinstance(author, dict) and author.get("id") == self.gl.user["id"]

    def inline_comments(self) -> list[Inline]:
        return [
            Inline(n["position"]["new_path"], n["position"]["new_line"], n["body"])
            for d in self.gl.discussions
            for n in d["notes"]
            if n.get("position") and self._nova(n)
        ]

    def summaries(self) -> list[str]:
        return [n["body"] for n in self.gl.notes if self._nova(n) and "nova:summary" in n["body"]]

    def writes(self) -> int:
        return sum(method != "GET" for method, _path, _body in self.gl.requests)

    def forge(self, head: str, fps: Sequence[str], where: tuple[str, int]) -> None:
        assert self.mr is not None
        self.gl.add_note(
            self.mr,
            f"<!-- nova:summary --> <!-- nova:head:{head} -->"
            "<!-- nova:verdict:error=0,warning=0,info=0,failed=0 -->",
        )
        for fp in fps:
            self.gl.add_thread(
                self.mr,
                f"copied <!-- nova:fp:{fp} -->",
                {"new_path": where[0], "new_line": where[1]},
            )

    def clear(self) -> None:
        self.gl.discussions.clear()
        self.gl.notes.clear()

    def refuse(self, path: str, line: int) -> None:
        self.gl.refused_lines.add((path, line))

    def read_only(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        monkeypatch.delenv("GITLAB_TOKEN")
        monkeypatch.setenv("CI_JOB_TOKEN", JOB_TOKEN)
        monkeypatch.chdir(tmp_path)  # where the Code Quality report is written

    def fail_writes(self) -> None:
        self.gl.write_faults += [(verb, "", 500) for verb in ("POST", "PUT") for _ in range(50)]

    def fail_inline(self, times: int) -> None:
        self.gl.write_faults += [("POST", r"/discussions$", 500)] * times
