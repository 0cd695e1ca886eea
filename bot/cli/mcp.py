"""``nova mcp serve``: Nova's tools over MCP (stdio or streamable HTTP)."""

from __future__ import annotations

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
@repo_option
def serve(transport: str, host: str, port: int, repo: Path) -> None:
    """Serve the Task Manager tools (update_execution_session, create_step, update_step,
    health_check) and Nova's change tools (fetch_change, list_change_files, read_file,
    anchor_comments).

    \b
    Task Manager: NOVA_TASK_MANAGER_URL (+ NOVA_TASK_MANAGER_TOKEN), or USE_MOCK_CLIENT=true
    for the in-memory client. Agents take execution_id from NOVA_EXECUTION_ID.
    """
    from bot.extras import require_extra

    require_extra("mcp", "nova mcp serve", "mcp")
    import anyio

    from bot.mcp.server import bind_socket, build_server, serve_http

    settings = load_from_flags({}, None)
    if transport == "stdio":
        build_server(settings, repo).run("stdio")
        return
    sock = bind_socket(host, port)
    actual = sock.getsockname()[1]
    server = build_server(settings, repo, host=host, port=actual)
    click.echo(f"nova mcp: serving streamable HTTP at http://{host}:{actual}/mcp", err=True)
    anyio.run(serve_http, server, sock)
