"""The CodeChangeSource contract and the reader the agent's context tools use."""

from __future__ import annotations

from typing import Protocol

from bot.models import Change

__all__ = ["GrepHit", "Source", "TreeReader"]

GrepHit = tuple[str, int, str]  # path, line number, text


class TreeReader(Protocol):
    """Files of the change's head revision (read-only)."""

    def read_text(self, path: str) -> str | None:
        """The file's text, or None when it does not exist at the head."""

    def list_files(self) -> list[str]:
        """Every file path at the head."""

    def grep(self, pattern: str, *, regex: bool = False, limit: int = 50) -> list[GrepHit]:
        """Lines matching ``pattern`` (fixed string unless ``regex``)."""


class Source(Protocol):
    name: str

    def fetch(self, ref: str) -> Change:
        """The change named by ``ref``; raises ``ChangeNotFound`` / ``SourceError``."""

    def tree(self, change: Change) -> TreeReader | None:
        """A reader of the change's head revision, or None when the files are not at hand."""
