"""A tree read through a code host's API at one commit, when no checkout is at hand.

Hosts say how to fetch one file's bytes and how to list the paths; reading (binary files
refused, text decoded with replacement, a small cache) and searching (the changed files only:
APIs have no grep at a commit; model-given regexes in RE2, linear time) are shared.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import lru_cache

from bot.hosts.base import GrepHit
from bot.search import line_matcher

__all__ = ["ApiTree"]


class ApiTree(ABC):
    def __init__(self, sha: str, changed: list[str]) -> None:
        self.sha = sha
        self.changed = changed
        self.read_text = lru_cache(maxsize=64)(self._read)

    @abstractmethod
    def fetch(self, path: str) -> bytes | None:
        """The file's bytes at ``sha``, None when it is not there (or not a file)."""

    @abstractmethod
    def paths(self) -> list[str] | None:
        """Every file path at ``sha``, None when the host cannot list them."""

    def _read(self, path: str) -> str | None:
        data = self.fetch(path.strip("/"))
        if data is None or b"\x00" in data[:8192]:
            return None
        return data.decode("utf-8", errors="replace")

    def list_files(self) -> list[str]:
        found = self.paths()
        return found if found is not None else list(self.changed)

    def grep(self, pattern: str, *, regex: bool = False, limit: int = 50) -> list[GrepHit]:
        """Searches the changed files only: the API has no grep at a commit."""
        matches = line_matcher(pattern, regex=regex)  # RE2: linear time, PatternError
        hits: list[GrepHit] = []
        for path in self.changed:
            text = self.read_text(path)
            for n, line in enumerate((text or "").split("\n"), 1):
                if matches(line):
                    hits.append((path, n, line[:300]))
                    if len(hits) >= limit:
                        return hits
        return hits
