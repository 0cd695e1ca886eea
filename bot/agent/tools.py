"""Context tools of the review agent: read the head revision, nothing else.

Tool output is capped and framed as repository data. The tools never raise into the graph:
a bad argument, a regex RE2 refuses or a call past its time limit comes back as an error text
the model can act on. ``.git/`` and credential stores are never read or searched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from bot.hosts.base import LocalTree, TreeReader
from bot.search import PatternError

__all__ = ["CREDENTIAL_FILES", "ContextTool", "context_tools", "refused_path"]

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
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    async def invoke(self, args: dict[str, Any], timeout: float | None = None) -> str:
        """Run the tool; past ``timeout`` seconds the model is told it timed out (a blocking
        tool's thread is left to finish: the tools bound their own work, e.g. grep)."""
        if self.arun is not None:
            call: Awaitable[str] = self.arun(**args)
        else:
            assert self.run is not None
            call = asyncio.to_thread(self.run, **args)
        try:
            return await asyncio.wait_for(call, timeout)
        except TimeoutError:
            return (
                f"error: {self.name} did not finish within {timeout:g}s "
                "(NOVA_TOOL_TIMEOUT); try a narrower request"
            )


def _cap(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS] + f"\n[... cut at {MAX_CHARS} characters]"


# Credential stores a repository (or its checkout) may hold: never shown to the model.
CREDENTIAL_FILES = frozenset(
    {
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".env",
        ".dockercfg",
        ".arcrc",
        ".pgpass",
        ".htpasswd",
    }
)


def refused_path(path: str, root: Path | None = None) -> str | None:
    """Why the tools will not show ``path`` (None: they may). ``.git/`` holds the checkout's
    credentials (actions/checkout writes the token into ``.git/config``); credential stores
    are refused by name. With ``root`` (a checkout), a symlink is judged by its target."""
    names = [part.lower() for part in PurePosixPath(str(path).replace("\\", "/")).parts]
    if root is not None:
        try:
            real = (root / str(path).lstrip("/")).resolve()
            names += [part.lower() for part in real.relative_to(root.resolve()).parts]
        except (OSError, ValueError):
            pass  # outside the checkout: the tree itself refuses it
    if ".git" in names:
        return ".git/ is never shown (it holds the checkout's credentials)"
    if any(n in CREDENTIAL_FILES or n.startswith(".env.") for n in names):
        return "credential stores (.env, .netrc, .npmrc, .pypirc, …) are never shown"
    return None


def context_tools(tree: TreeReader) -> list[ContextTool]:
    root = tree.root if isinstance(tree, LocalTree) else None

    def read_file(path: str, start_line: int = 1, end_line: int | None = None) -> str:
        refused = refused_path(str(path), root)
        if refused is not None:
            return f"error: {path!r} cannot be read: {refused}"
        text = tree.read_text(str(path))
        if text is None:
            return f"error: {path!r} does not exist at the head revision (or is binary)"
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        start = max(1, int(start_line))
        end = min(
            len(lines), int(end_line) if end_line else start + MAX_LINES - 1, start + MAX_LINES - 1
        )
        if start > len(lines):
            return f"error: {path} has only {len(lines)} lines"
        body = "\n".join(f"{n}: {lines[n - 1]}" for n in range(start, end + 1))
        return _cap(f"{path} lines {start}-{end} of {len(lines)} (NEW numbers):\n{body}")

    def search_code(pattern: str, regex: bool = False) -> str:
        if not str(pattern).strip():
            return "error: empty pattern"
        try:
            found = tree.grep(str(pattern), regex=bool(regex), limit=100)
        except PatternError as exc:
            return f"error: {exc}"
        except TimeoutError as exc:
            return f"error: {exc}; search a more specific fixed string"
        hits = [h for h in found if refused_path(h[0], root) is None][:50]
        if not hits:
            return f"no matches for {pattern!r}"
        return _cap("\n".join(f"{p}:{n}: {t}" for p, n, t in hits))

    return [
        ContextTool(
            "read_file",
            f"Read lines of a file at the change's head revision (at most {MAX_LINES} lines "
            "per call). Lines come back as '<NEW line number>: <text>'.",
            {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Repository-relative path"},
                    "start_line": {"type": "integer", "default": 1},
                    "end_line": {"type": "integer"},
                },
                "required": ["path"],
            },
            read_file,
        ),
        ContextTool(
            "search_code",
            "Search the head revision's files for a fixed string (or, with regex=true, an RE2 "
            "regular expression: no backreferences or lookaround). Returns up to 50 "
            "'path:line: text' hits.",
            {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "regex": {"type": "boolean", "default": False},
                },
                "required": ["pattern"],
            },
            search_code,
        ),
    ]
