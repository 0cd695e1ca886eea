"""Context tools of the review agent: read the head revision, nothing else.

Tool output is capped and framed as repository data. The tools never raise into the graph:
a bad argument comes back as an error text the model can act on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.hosts.base import TreeReader

__all__ = ["ContextTool", "context_tools"]

MAX_LINES = 400
MAX_CHARS = 20_000


@dataclass(frozen=True)
class ContextTool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema
    run: Callable[..., str] | None  # blocking tools run in a worker thread
    arun: Callable[..., Awaitable[str]] | None = None  # async tools (MCP) run on the loop

    def schema(self) -> dict[str, Any]:
        """OpenAI-style function schema, accepted by every LangChain chat model's bind_tools."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


def _cap(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS] + f"\n[... cut at {MAX_CHARS} characters]"


def context_tools(tree: TreeReader) -> list[ContextTool]:
    def read_file(path: str, start_line: int = 1, end_line: int | None = None) -> str:
        text = tree.read_text(str(path))
        if text is None:
            return f"error: {path!r} does not exist at the head revision (or is binary)"
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        start = max(1, int(start_line))
        end = min(len(lines), int(end_line) if end_line else start + MAX_LINES - 1,
                  start + MAX_LINES - 1)
        if start > len(lines):
            return f"error: {path} has only {len(lines)} lines"
        body = "\n".join(f"{n}: {lines[n - 1]}" for n in range(start, end + 1))
        return _cap(f"{path} lines {start}-{end} of {len(lines)} (NEW numbers):\n{body}")

    def search_code(pattern: str, regex: bool = False) -> str:
        if not str(pattern).strip():
            return "error: empty pattern"
        hits = tree.grep(str(pattern), regex=bool(regex), limit=50)
        if not hits:
            return f"no matches for {pattern!r}"
        return _cap("\n".join(f"{p}:{n}: {t}" for p, n, t in hits))

    return [
        ContextTool(
            "read_file",
            f"Read lines of a file at the change's head revision (at most {MAX_LINES} lines "
            "per call). Lines come back as '<NEW line number>: <text>'.",
            {"type": "object", "properties": {
                "path": {"type": "string", "description": "Repository-relative path"},
                "start_line": {"type": "integer", "default": 1},
                "end_line": {"type": "integer"}},
             "required": ["path"]},
            read_file),
        ContextTool(
            "search_code",
            "Search the head revision's files for a fixed string (or an extended regex with "
            "regex=true). Returns up to 50 'path:line: text' hits.",
            {"type": "object", "properties": {
                "pattern": {"type": "string"},
                "regex": {"type": "boolean", "default": False}},
             "required": ["pattern"]},
            search_code),
    ]
