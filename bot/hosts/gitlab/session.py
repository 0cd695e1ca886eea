"""One merge request on GitLab: the client and the fetched objects its source and publisher
share, and Nova's own identity there."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bot.config import Settings
from bot.hosts.gitlab.client import MergeRequestRef, credentials
from bot.hosts.gitlab.settings import GitLabSettings
from bot.hosts.gitlab.source import GitLabSource

if TYPE_CHECKING:  # the publisher imports this module
    from gitlab import Gitlab
    from gitlab.v4.objects import Project, ProjectMergeRequest

    from bot.hosts.gitlab.conversation import GitLabConversation
    from bot.hosts.gitlab.publisher import GitLabPublisher

__all__ = ["GitLabSession"]


@dataclass
class GitLabSession:
    settings: Settings
    repo_path: Path | None = None
    log: IO[str] | None = None  # the job log: where findings go when Nova cannot post
    ref: MergeRequestRef | None = None  # set by fetch
    client: Gitlab | None = None
    project: Project | None = None  # lazy: no GET
    mr: ProjectMergeRequest | None = None  # set by fetch (None: diffed from the checkout)
    diff_refs: dict[str, str] = field(default_factory=dict)  # base_sha, start_sha, head_sha
    _me: int | None = field(default=None, repr=False)
    _me_known: bool = field(default=False, repr=False)
    source: GitLabSource = field(init=False)

    def __post_init__(self) -> None:
        self.source = GitLabSource(self)

    @property
    def gitlab(self) -> GitLabSettings:
        return self.settings.section(GitLabSettings)

    def publisher(self, *, force: bool) -> GitLabPublisher:
        from bot.hosts.gitlab.publisher import GitLabPublisher

        return GitLabPublisher(self, force=force, log=self.log or sys.stderr)

    def conversation(self) -> GitLabConversation:
        """The merge request's discussions and notes (``bot.conversation``)."""
        from bot.hosts.gitlab.conversation import GitLabConversation

        return GitLabConversation(self)

    @property
    def job_token_only(self) -> bool:
        return credentials(self.gitlab).job_only

    def me(self) -> int | None:
        """Nova's own user id: the token's user (a project or group token's bot user).
        None when it cannot be known (CI_JOB_TOKEN): then no note counts as Nova's."""
        if not self._me_known:
            self._me_known = True
            if self.client is None or self.job_token_only:
                return None
            from gitlab.exceptions import GitlabError
            from requests import RequestException

            try:
                user = self.client.http_get("/user")
            except (GitlabError, RequestException) as exc:
                from bot.hosts.gitlab.client import gitlab_error

                raise gitlab_error(exc, "reading the token's user (GET /user)") from exc
            self._me = int(user["id"]) if isinstance(user, dict) and "id" in user else None
        return self._me

    def is_mine(self, note: dict[str, Any]) -> bool:
        me = self.me()
        author = note.get("author") or {}
        return me is not None and author.get("id") == me
