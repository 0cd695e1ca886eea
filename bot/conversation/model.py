"""What a host's conversation looks like to the core, and the host ability that reads it.

A host module (``bot/hosts/<host>/conversation.py``) reads and writes its host only; the
core (``bot.conversation``) decides. Every ``Note`` is a comment as the host stores it —
untrusted text with an author the host vouches for; ``mine`` is the host's word that Nova's
own identity wrote it (only then do Nova's markers in it count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bot.change import Change
from bot.errors import ServiceError

__all__ = [
    "Authority",
    "CannotDelete",
    "Conversation",
    "ConversationHost",
    "FindingAuthority",
    "Note",
    "Record",
    "Thread",
    "fingerprint_of",
    "line_key_of",
    "reply_marker",
    "replied_to",
]

# Nova's hidden marks: HTML comments on GitHub and GitLab, ``//nova:…//`` in Phorge's Remarkup
_FP = re.compile(r"(?:<!-- |//)nova:fp:([0-9a-f]{16})(?: -->|//)")
_LINE = re.compile(r"<!-- nova:line:([0-9a-f]{12}) -->")
_RE = re.compile(r"(?:<!-- |//)nova:re:([A-Za-z0-9_=-]{1,80})(?: -->|//)")


def reply_marker(note_id: str) -> str:
    """The hidden mark in Nova's answer naming the comment it answers."""
    return f"<!-- nova:re:{note_id} -->"


def replied_to(body: str) -> str | None:
    m = _RE.search(body)
    return m.group(1) if m else None


def fingerprint_of(body: str) -> str | None:
    m = _FP.search(body)
    return m.group(1) if m else None


def line_key_of(body: str) -> str | None:
    m = _LINE.search(body)
    return m.group(1) if m else None


class CannotDelete(ServiceError):
    """The host keeps every comment (Phorge): a duplicate answer cannot be taken back."""


@dataclass(frozen=True, slots=True)
class Note:
    """One comment. ``seq`` orders a host's comments (GitHub and GitLab ids, Phorge times)."""

    id: str
    author: str
    body: str
    seq: int
    at: str = ""  # ISO 8601, when the host gives one
    edited: bool = False
    bot: bool = False  # written by a bot account (Nova's own included)
    mine: bool = False  # written by Nova's own identity (the host checked)
    # (name, count) of the emoji people put on it, where the host has them: "+1", "-1",
    # else the host's own name ("heart", "rocket", …); read for Nova's own comments
    reactions: tuple[tuple[str, int], ...] = ()

    @property
    def thumbs(self) -> dict[str, int]:
        """👍 / 👎 on this comment: how people rate a finding without a command."""
        counts = dict(self.reactions)
        return {"up": counts.get("+1", 0), "down": counts.get("-1", 0)}


@dataclass(frozen=True, slots=True)
class Thread:
    """An inline thread and its replies: one of Nova's findings (``notes[0]`` is Nova's and
    carries the fingerprint), or a person's line comment that may ask Nova something."""

    id: str  # the host's thread id (GitHub node id, GitLab discussion id, Phorge inline PHID)
    notes: tuple[Note, ...]
    path: str = ""
    line: int | None = None
    resolved: bool = False
    outdated: bool = False

    @property
    def root(self) -> Note:
        return self.notes[0]

    @property
    def fingerprint(self) -> str | None:
        return fingerprint_of(self.root.body) if self.root.mine else None

    @property
    def line_key(self) -> str | None:
        return line_key_of(self.root.body) if self.root.mine else None


@dataclass(frozen=True, slots=True)
class Record:
    """The conversation on one change: Nova's threads and the top-level comments."""

    threads: tuple[Thread, ...] = ()
    top: tuple[Note, ...] = ()
    login: str = ""  # Nova's own login on the host

    def all_notes(self) -> list[tuple[Thread | None, Note]]:
        out: list[tuple[Thread | None, Note]] = [(t, n) for t in self.threads for n in t.notes]
        return out + [(None, n) for n in self.top]


@dataclass(frozen=True, slots=True)
class Authority:
    """The host's answer to "may this person change the gate?"."""

    allowed: bool
    role: str  # what the host says the person is ("write", "Developer", "reviewer", …)
    who_may: str = ""  # who may, in words, for the polite refusal


@runtime_checkable
class Conversation(Protocol):
    """A host that listens: reads Nova's threads, replies, resolves, and knows who may
    change the gate. Writes that timed out may have landed: callers re-read, never re-post."""

    def read(self, change: Change) -> Record:
        """Nova's own threads (with every reply) and the change's top-level comments."""

    def reply(self, thread: Thread | None, body: str) -> Note:
        """Post ``body`` in ``thread`` (None: a top-level comment on the change)."""

    def delete(self, note: Note) -> None:
        """Remove one of Nova's own comments (a duplicate answer another run posted first)."""

    def resolve(self, thread: Thread) -> None:
        """Mark the thread resolved (done)."""

    def authority(self, login: str) -> Authority:
        """Whether ``login`` may change the gate (dismiss a finding) on this change."""


@runtime_checkable
class FindingAuthority(Protocol):
    """A conversation whose authority depends on the finding (Phorge: who was a reviewer
    before it was posted); ``authority`` then answers for everything else."""

    def authority_on(self, login: str, thread: Thread) -> Authority:
        """Whether ``login`` may dismiss the finding of ``thread``."""


@runtime_checkable
class ConversationHost(Protocol):
    """A host session that can open its conversation."""

    def conversation(self) -> Conversation: ...
