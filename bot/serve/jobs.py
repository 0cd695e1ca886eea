"""What a webhook asks for: a ``JobRequest`` (plain data, stored in the queue), ``Cancel``
(the change was closed) or ``Ignored`` with the reason the server answers."""

from __future__ import annotations

import hmac
import json
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["KINDS", "Cancel", "Ignored", "JobRequest", "same_secret"]

KINDS = ("review", "respond", "testgen")


@dataclass(frozen=True)
class Ignored:
    reason: str


@dataclass(frozen=True)
class Cancel:
    """The change was closed: its queued and running jobs stop."""

    change: str
    reason: str


@dataclass(frozen=True)
class JobRequest:
    """One job: ``kind`` on the change ``ref`` of ``host`` at ``head``.

    ``change`` names the change across heads (``github:acme/shop#7``): one job per change
    and kind runs at a time, and a newer head replaces an older one. ``delivery`` makes a
    redelivery a no-op."""

    host: str  # github | gitlab | phabricator
    kind: str  # review | respond | testgen
    change: str
    ref: str
    head: str
    delivery: str
    comment: str | None = None  # respond: the comment that addressed Nova
    target: str | None = None  # Harbormaster build target PHID
    repository: str | None = None  # GitHub owner/repo (App tokens are scoped to it)
    installation: int | None = None  # GitHub App installation id
    clone_url: str | None = None  # testgen: the repository to clone

    @property
    def key(self) -> str:
        """Jobs with the same key run one at a time; a newer head supersedes."""
        base = f"{self.kind}:{self.change}"
        return f"{base}:{self.comment}" if self.comment else base

    def argv(self) -> list[str]:
        """The ``nova`` arguments of the job (the same one-shot command CI runs)."""
        if self.kind == "respond":  # no comment: every question not answered yet
            return ["respond", self.ref, *(["--comment", self.comment] if self.comment else [])]
        if self.kind == "testgen":
            # run in the job's work directory, cloned there first (``checkout``)
            return ["testgen", self.head, "--repo", "checkout", "--publish", self.host]
        args = ["review", self.ref, "--publish", self.host, "-q"]
        if self.target:
            args += ["--harbormaster-target", self.target]
        return args

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> JobRequest:
        data: dict[str, Any] = json.loads(text)
        return cls(**data)


def same_secret(given: str | bytes | None, expected: str | bytes) -> bool:
    """Constant-time comparison; a missing value never matches."""
    if given is None:
        return False
    a = given.encode() if isinstance(given, str) else given
    b = expected.encode() if isinstance(expected, str) else expected
    return hmac.compare_digest(a, b)
