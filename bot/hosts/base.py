"""The host seam: what every code host provides, and the optional abilities some have.

A *host* (git, GitHub, GitLab, Phabricator) is one package under ``bot/hosts/`` with a
``HOST`` object registered in ``bot.hosts``. It knows its reference grammar (``matches``),
how to find the change from a CI environment (``ref_from_ci``), and opens a ``HostSession``
that owns the client and what was fetched; the session's ``source`` and ``publisher()`` share
it explicitly, never through each other's private attributes.

Optional abilities are named protocols, checked with ``isinstance`` (never ``getattr``):

- ``RerunGuard``  — a publisher that can read back Nova's own earlier review of a head;
- ``BuildStatus`` — a publisher that reports a build (Harbormaster) as working / done / broken;
- ``LocalTree``   — a tree reader that is a real checkout (analyzers run in its ``root``);
- ``ReviewHistory`` / ``IncrementalSource`` — the last head Nova reviewed, and the diff
  since then (incremental review of new pushes);
- ``Proposer``    — a host that opens a pull / merge request or revision (``--publish``).

Trust rules every host keeps: only comments authored by Nova's own identity count (markers
from anyone else are ignored); a write that timed out may have landed (re-read, never blindly
re-POST); a publish that fell back because the host failed is an error, marked in the
summary's verdict (``failed=N``) so the next run completes it; the summary is always
attempted whatever failed before it; bodies are capped to
the host's limit; a re-run on a reviewed head exits as the first run did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol, runtime_checkable

from bot.change import Change
from bot.review.result import PriorReview, PublishReport, ReviewResult

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.sections import Section
    from bot.testgen.report import TestgenResult
    from bot.testgen.workspace import Workspace

__all__ = [
    "BuildStatus",
    "Check",
    "GrepHit",
    "Host",
    "HostSession",
    "IncrementalSource",
    "LocalTree",
    "PrefetchingTree",
    "Proposer",
    "Publisher",
    "RerunGuard",
    "ReviewHistory",
    "Source",
    "TreeReader",
]

GrepHit = tuple[str, int, str]  # path, line number, text


class TreeReader(Protocol):
    """Files of the change's head revision (read-only)."""

    def read_text(self, path: str) -> str | None:
        """The file's text, or None when it does not exist at the head."""

    def list_files(self) -> list[str]:
        """Every file path at the head."""

    def grep(self, pattern: str, *, regex: bool = False, limit: int = 50) -> list[GrepHit]:
        """Lines matching ``pattern`` (fixed string unless ``regex``)."""


@runtime_checkable
class LocalTree(TreeReader, Protocol):
    """A tree that is a checkout on disk: analyzers run in ``root``."""

    @property
    def root(self) -> Path: ...


@runtime_checkable
class PrefetchingTree(TreeReader, Protocol):
    """A tree that can read many files at once (one ``git cat-file --batch``): the filter,
    the analyzers and the model then read them from memory."""

    def prefetch(self, paths: list[str]) -> None: ...


class Source(Protocol):
    name: str

    def fetch(self, ref: str) -> Change:
        """The change named by ``ref``; raises ``RevisionNotFound`` / ``SourceError``."""

    def tree(self, change: Change) -> TreeReader | None:
        """A reader of the change's head revision, or None when the files are not at hand."""

    def read_base(self, change: Change, path: str) -> bytes | None:
        """A file's bytes at the change's BASE revision (the target branch), None when it is
        not there or the base is not at hand. The repository's own review settings come from
        here: a change must not configure its own review. Bytes, undecoded: a file git
        takes for binary is the reader's to report, not to drop."""


class Publisher(Protocol):
    def publish(self, result: ReviewResult) -> PublishReport:
        """Post the review; return what was posted. Never mutates ``result``."""


@runtime_checkable
class RerunGuard(Protocol):
    def prior_review(self, change: Change) -> PriorReview | None:
        """Nova's own earlier review of this exact head (read from its summary), if any,
        complete or not (``PriorReview.complete``: the pipeline does an incomplete one
        again). Asked also with --force, so a host can settle who Nova is before the model
        runs; its publisher then answers None."""


@runtime_checkable
class ReviewHistory(Protocol):
    def last_reviewed_head(self, change: Change) -> str | None:
        """The head of Nova's own last finished review of this change (any push), if any."""


@runtime_checkable
class IncrementalSource(Protocol):
    def changes_since(self, change: Change, since: str) -> Change | None:
        """What the pushes after ``since`` changed (``since..head``), or None when ``since``
        is no longer an ancestor of the head (a rebase or force-push) or cannot be read."""


@runtime_checkable
class BuildStatus(Protocol):
    def begin(self, change: Change) -> None:
        """The build is working on ``change``."""

    def finish(self, passed: bool, detail: str) -> None:
        """Report the build's outcome without publishing anything else (a skipped re-run)."""

    def abort(self, reason: str) -> None:
        """The run died: the build is broken."""


class HostSession(Protocol):
    """One change on one host: the client and fetched objects its parts share."""

    settings: Settings  # replaced once the base revision's .nova.toml is known

    @property
    def source(self) -> Source: ...

    def publisher(self, *, force: bool) -> Publisher | None:
        """The host's publisher, or None for a host that publishes nowhere (git)."""


@dataclass(frozen=True)
class Check:
    """One line of ``nova doctor``; ``ok`` is None when the service is not configured."""

    name: str
    target: str
    ok: bool | None
    detail: str


class Host(Protocol):
    name: str
    title: str  # "GitHub"
    noun: str  # what a change is called there: "pull request"
    references: str  # what a reference looks like, for --help and errors
    section: type[Section] | None  # its settings (bot.sections), if it has any
    publishes: bool  # may be a --publish target

    def matches(self, spec: str) -> bool:
        """True when ``spec`` is a reference of this host."""

    def ref_from_ci(self, settings: Settings) -> str | None:
        """The change of the CI job this runs in, when it runs in this host's CI."""

    def open(
        self, settings: Settings, repo: Path | None, *, stdin: IO[str] | None = None
    ) -> HostSession:
        """A session for one change (nothing is fetched yet)."""

    def checks(self, settings: Settings) -> Sequence[Check]:
        """``nova doctor``'s checks of this host (none for git)."""


@runtime_checkable
class Proposer(Protocol):
    def propose(self, settings: Settings, result: TestgenResult, ws: Workspace, branch: str) -> str:
        """Push ``branch`` (already committed in ``ws``) and open a pull / merge request or
        revision with the kept tests; return its URL."""
