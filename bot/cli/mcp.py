"""``nova mcp serve``: Nova's tools over MCP (stdio or streamable HTTP)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import click

from bot.cli.common import load_from_flags, repo_option


@click.group()
def mcp() -> None:
    """Serve Nova's tools to other agents over MCP."""


@mcp.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a local agent; http for streamable HTTP (path /mcp).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option(
    "--port",
    type=int,
    default=8765,
    show_default=True,
    help="HTTP port (0 picks a free one; the URL is printed on stderr).",
)
@click.option(
    "--allow-writes",
    is_flag=True,
    help="Let agents write to code hosts: review_change with publish, propose_tests. "
    "Off by default: those calls answer WRITES_DISABLED.",
)
@repo_option
def serve(transport: str, host: str, port: int, allow_writes: bool, repo: Path) -> None:
    """Serve the Task Manager tools (update_execution_session, create_step, update_step,
    health_check), Nova's change tools (fetch_change, list_change_files, read_file,
    anchor_comments), its review (review_change, analyze_change) and its test tools
    (detect_test_framework, analyze_test_matrix, run_tests, generate_tests, propose_tests).

    \b
    Tokens (GITHUB_TOKEN, NOVA_LLM_API_KEY, ...) come from this server's environment, never
    from a tool's arguments, and never appear in a result. Tests an agent gives run_tests
    run in Nova's sandbox with its limits (NOVA_TEST_TIMEOUT, NOVA_TEST_MEMORY_MB).
    Task Manager: NOVA_TASK_MANAGER_URL (+ NOVA_TASK_MANAGER_TOKEN), or USE_MOCK_CLIENT=true
    for the in-memory client. Agents take execution_id from NOVA_EXECUTION_ID.
    """
    from bot.extras import require_extra

    require_extra("mcp", "nova mcp serve", "mcp")
    import anyio

    from bot.mcp.nova import ServeOptions
    from bot.mcp.server import bind_socket, build_server, serve_http
    from bot.testgen.api import Interpreter

    settings = load_from_flags({}, None)
    # the project's Python for run_tests, chosen as `nova testgen` chooses it
    interpreter = Interpreter(os.environ.get("VIRTUAL_ENV"), shutil.which("python"))
    options = ServeOptions(allow_writes=allow_writes, interpreter=interpreter)
    if transport == "stdio":
        build_server(settings, repo, options=options).run("stdio")
        return
    sock = bind_socket(host, port)
    actual = sock.getsockname()[1]
    server = build_server(settings, repo, host=host, port=actual, options=options)
    click.echo(f"nova mcp: serving streamable HTTP at http://{host}:{actual}/mcp", err=True)
    anyio.run(serve_http, server, sock)
