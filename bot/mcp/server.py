"""``nova mcp serve``: Task Manager tools and Nova's building blocks for other agents.

Every tool answers with the envelope ``{"success": true, "message", "data"}`` or
``{"success": false, "error", "error_code"?, "status_code"?}``; no exception escapes a tool.
The change tools work on the repository given to ``nova mcp serve --repo`` only.

Arguments are bounded (``LIMITS``): a call with a longer one is answered ``ARGUMENT_TOO_LONG``
at once, before any work (a 4 MB path kept the server busy for minutes, and every other
call waited behind it).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from bot import __version__
from bot.config import Settings
from bot.errors import NovaError, UsageError, redact
from bot.taskmanager.client import (
    Envelope,
    TaskManagerClientBase,
    create_task_manager_client,
    fail,
    ok,
)

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP

    from bot.change import Change
    from bot.hosts.base import Source
    from bot.mcp.nova import ServeOptions

__all__ = ["ProposedComment", "build_server", "serve_http"]

INSTRUCTIONS = (
    "Nova's tools. Task Manager: call update_execution_session once at the start, then "
    "create_step / update_step for each stage; the execution_id is in the NOVA_EXECUTION_ID "
    "environment variable. Code review: fetch_change gives a change as a diff numbered with "
    "NEW-file line numbers; anchor_comments checks proposed comments against it; "
    "review_change and analyze_change review it as `nova review` does. Tests: "
    "detect_test_framework and analyze_test_matrix say what to test; run_tests checks your "
    "test files in a sandbox and says whether each catches the change; generate_tests writes "
    "Nova's own; propose_tests opens a pull request with yours (needs --allow-writes)."
)


class ProposedComment(BaseModel):
    path: str = Field(description="File path as shown in the numbered diff")
    line: int | None = Field(None, description="NEW line number")
    code: str | None = Field(None, description="Exact text of the line meant")
    body: str
    end_line: int | None = None
    severity: str = "warning"
    suggestion: str | None = None


# characters an argument may have: paths as the OS allows them, references and names short,
# free text (a step message, a comment body) as long as a host takes a comment
LIMITS = {
    "path": 4096,
    "change": 1024,
    "style": 16,
    "execution_id": 256,
    "session_id": 256,
    "step_id": 256,
    "step_name": 1024,
    "status": 64,
    "worktree_path": 4096,
    "message": 65_536,
    "body": 65_536,
    "code": 65_536,
    "suggestion": 65_536,
    "severity": 64,
    "publish": 64,
    "content": 100_000,  # a test file: the testgen write guard's limit (MAX_TEST_BYTES)
}
MAX_ITEMS = {"comments": 1000, "files": 20}  # list arguments; any other list: 1000
MAX_COMMENTS = MAX_ITEMS["comments"]


def _too_long(arguments: dict[str, Any]) -> Envelope | None:
    """The error envelope for the first argument over its limit, else None."""
    for name, value in arguments.items():
        if isinstance(value, list):
            most = MAX_ITEMS.get(name, MAX_COMMENTS)
            if len(value) > most:
                return fail(
                    f"{name}: {len(value):,} items; at most {most:,}",
                    error_code="ARGUMENT_TOO_LONG",
                )
            for item in value:
                found = _too_long(item.model_dump() if isinstance(item, BaseModel) else {})
                if found is not None:
                    return found
        elif isinstance(value, str) and len(value) > LIMITS.get(name, 65_536):
            return fail(
                f"{name}: {len(value):,} characters; at most {LIMITS.get(name, 65_536):,}",
                error_code="ARGUMENT_TOO_LONG",
            )
    return None


def _guard(call: Callable[[], Envelope], **arguments: Any) -> Envelope:
    """The MCP edge: arguments over their limits are refused at once; a NovaError or any
    other exception becomes the error envelope."""
    refused = _too_long(arguments)
    if refused is not None:
        return refused
    try:
        return call()
    except NovaError as exc:
        return fail(str(exc), error_code=type(exc).__name__)
    except Exception as exc:  # noqa: BLE001 - an MCP tool must answer, never raise
        return fail(redact(f"{type(exc).__name__}: {exc}"), error_code="INTERNAL_ERROR")


def build_server(
    settings: Settings,
    repo: Path,
    client: TaskManagerClientBase | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    options: ServeOptions | None = None,
) -> FastMCP:
    from mcp.server.fastmcp import FastMCP

    from bot.mcp.nova import ServeOptions, register_nova_tools

    mcp = FastMCP("nova", instructions=INSTRUCTIONS, log_level="WARNING", host=host, port=port)
    # FastMCP 1.x takes no version, and its low-level server then reports the mcp package's
    # own in serverInfo; mcp's own in-memory test helper reaches the same attribute.
    mcp._mcp_server.version = __version__
    tm = client or create_task_manager_client(settings.task_manager)

    @mcp.tool()
    def update_execution_session(
        execution_id: str, session_id: str, worktree_path: str | None = None
    ) -> dict[str, Any]:
        """Register the agent's session on an execution. Call this once at the start.

        Args:
            execution_id: Execution ID (can be taken from the NOVA_EXECUTION_ID environment
                variable).
            session_id: The agent's session ID.
            worktree_path: Optional path of the work tree the agent works in.
        """
        return _guard(
            lambda: tm.patch_execution(
                execution_id, session_id=session_id, worktree_path=worktree_path
            ),
            execution_id=execution_id,
            session_id=session_id,
            worktree_path=worktree_path,
        )

    @mcp.tool()
    def create_step(
        execution_id: str, step_name: str, message: str | None = None, status: str | None = None
    ) -> dict[str, Any]:
        """Create a new step and return its step_id. The initial status defaults to running.

        Args:
            execution_id: Execution ID (can be taken from the NOVA_EXECUTION_ID environment
                variable).
            step_name: Name of the step.
            message: Optional description of the step.
            status: Optional initial status - running/completed/failed/skipped (default:
                running).
        """
        return _guard(
            lambda: tm.create_step(execution_id, step_name, message, status),
            execution_id=execution_id,
            step_name=step_name,
            message=message,
            status=status,
        )

    @mcp.tool()
    def update_step(
        execution_id: str, step_id: str, status: str | None = None, message: str | None = None
    ) -> dict[str, Any]:
        """Update a step's status and message.

        Args:
            execution_id: Execution ID (can be taken from the NOVA_EXECUTION_ID environment
                variable).
            step_id: Step ID (returned by create_step).
            status: New status - running/completed/failed/skipped.
            message: Updated message.
        """
        return _guard(
            lambda: tm.patch_step(execution_id, step_id, status=status, message=message),
            execution_id=execution_id,
            step_id=step_id,
            status=status,
            message=message,
        )

    @mcp.tool()
    def health_check() -> dict[str, Any]:
        """Check that the Task Manager service is reachable and healthy."""
        return _guard(tm.health_check)

    _register_change_tools(mcp, repo, settings)
    register_nova_tools(mcp, repo, settings, options or ServeOptions())
    _keep_string_arguments(mcp)
    return mcp


def _keep_string_arguments(mcp: FastMCP) -> None:
    """Pass optional string arguments exactly as sent.

    FastMCP (mcp 1.30, ``FuncMetadata.pre_parse_json``) JSON-decodes string arguments of
    every parameter not annotated plain ``str``: a step message ``"null"`` would reach the
    Task Manager as None and ``"[1]"`` would fail validation (found by the parameter
    property in tests/mcp/test_mcp_server.py). For Nova's ``str | None`` parameters the decoded
    value is replaced by the string that was sent.
    """
    for tool in mcp._tool_manager.list_tools():
        meta = tool.fn_metadata
        strings = {
            name for name, f in meta.arg_model.model_fields.items() if f.annotation == (str | None)
        }
        if not strings:
            continue
        decode = meta.pre_parse_json

        def pre_parse(
            data: dict[str, Any],
            decode: Callable[[dict[str, Any]], dict[str, Any]] = decode,
            strings: set[str] = strings,
        ) -> dict[str, Any]:
            parsed = decode(data)
            return {
                k: (data[k] if k in strings and isinstance(data[k], str) else v)
                for k, v in parsed.items()
            }

        object.__setattr__(meta, "pre_parse_json", pre_parse)


def _register_change_tools(mcp: FastMCP, repo: Path, settings: Settings) -> None:
    from bot.change import Comment, normalize_severity
    from bot.diff.anchor import anchor
    from bot.diff.render import render_files

    def fetch(change: str) -> tuple[Source, Change]:
        if change.strip() == "-":
            raise UsageError("'-' (a diff on stdin) is not available over MCP")
        from bot.hosts import resolve

        source = resolve(change, repo=repo)
        return source, source.fetch(change)

    @mcp.tool()
    def fetch_change(change: str = "HEAD", style: str = "compact") -> dict[str, Any]:
        """Fetch a change (HEAD, a SHA, A..B, :staged) as the diff numbered with NEW-file line
        numbers that Nova's reviewer sees. Deleted lines carry no number.

        Args:
            change: Change reference.
            style: compact (number, marker, text) or labeled (NEW_LINE_n: ...).
        """

        def run() -> Envelope:
            if style not in ("compact", "labeled"):
                raise UsageError("style must be compact or labeled")
            from bot.analyzers.secrets import Scrubber

            _, c = fetch(change)
            numbered = Scrubber().scrub(render_files(c.files, style))  # type: ignore[arg-type]
            return ok(
                {"change": c.summary_dict(), "numbered_diff": numbered}, f"{len(c.files)} files"
            )

        return _guard(run, change=change, style=style)

    @mcp.tool()
    def list_change_files(change: str = "HEAD") -> dict[str, Any]:
        """List the files of a change with their status and added/removed line counts."""

        def run() -> Envelope:
            _, c = fetch(change)
            files = [
                {
                    "path": f.path,
                    "old_path": f.old_path,
                    "status": f.status,
                    "binary": f.is_binary,
                    "added": f.added_count,
                    "removed": f.removed_count,
                }
                for f in c.files
            ]
            return ok(files, f"{len(files)} files")

        return _guard(run, change=change)

    @mcp.tool()
    def read_file(
        path: str, change: str = "HEAD", start_line: int = 1, end_line: int | None = None
    ) -> dict[str, Any]:
        """Read lines of a file as it is at the change's head revision (at most 400 lines)."""

        def run() -> Envelope:
            from bot.agent.tools import context_tools

            source, c = fetch(change)
            tree = source.tree(c)
            if tree is None:
                raise UsageError("the repository files are not available")
            reader = next(t.run for t in context_tools(tree) if t.name == "read_file")
            assert reader is not None  # a built-in, blocking tool
            text = reader(path=path, start_line=start_line, end_line=end_line)
            if text.startswith("error:"):
                return fail(text[7:], error_code="NOT_FOUND")
            from bot.analyzers.secrets import Scrubber

            return ok(Scrubber().scrub(text), path)

        return _guard(run, path=path, change=change)

    @mcp.tool()
    def anchor_comments(comments: list[ProposedComment], change: str = "HEAD") -> dict[str, Any]:
        """Place proposed review comments on commentable NEW lines of a change. Each result
        says where the comment goes, or why it cannot be placed (then it belongs in a
        summary). Quote the exact line text in `code` for reliable placement."""

        def run() -> Envelope:
            _, c = fetch(change)
            proposed = [
                Comment(
                    path=p.path,
                    line=p.line,
                    body=p.body,
                    end_line=p.end_line,
                    severity=normalize_severity(p.severity),
                    suggestion=p.suggestion,
                    code=p.code,
                    origin="mcp",
                )
                for p in comments
            ]
            placements = [
                {
                    "path": pl.path,
                    "line": pl.line,
                    "end_line": pl.end_line,
                    "placed": pl.placed,
                    "how": pl.how or None,
                    "reason": pl.reason,
                    "body": pl.comment.body,
                }
                for pl in anchor(proposed, c.files)
            ]
            placed = sum(1 for p in placements if p["placed"])
            return ok(placements, f"{placed} of {len(placements)} placed")

        return _guard(run, comments=comments, change=change)


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


async def serve_http(mcp: FastMCP, sock: socket.socket) -> None:
    """Serve streamable HTTP on an already bound socket (so ``--port 0`` works)."""
    import uvicorn

    config = uvicorn.Config(mcp.streamable_http_app(), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])
