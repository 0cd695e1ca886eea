"""Extra tools for Nova's agents from MCP servers listed in an ``mcp.json``.

    {"servers": [
        {"name": "docs", "command": "docs-mcp", "args": ["--stdio"], "env": {"K": "v"},
         "timeout": 10},
        {"name": "search", "url": "http://127.0.0.1:9000/mcp"},
        {"name": "old", "command": "x", "disabled": true}]}

A server that fails to start, to initialize or to list its tools within its ``timeout``
(default 10 s) is reported and skipped; the review goes on without it.
"""

from __future__ import annotations

import json
import re
import tempfile
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

from bot.agent.tools import MAX_CHARS, ContextTool
from bot.errors import ConfigError, redact
from bot.extras import require_extra

if TYPE_CHECKING:  # the mcp extra, imported when a server is configured
    from collections.abc import Awaitable, Callable

    from mcp import ClientSession
    from mcp.types import Tool

__all__ = ["McpServerConfig", "load_mcp_config", "open_extra_tools"]

_NAME = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class McpServerConfig:
    name: str
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    disabled: bool = False
    timeout: float = 10.0


def load_mcp_config(path: str | Path) -> list[McpServerConfig]:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"NOVA_MCP_CONFIG {p}: cannot read it as JSON: {exc}") from exc
    servers = data.get("servers") if isinstance(data, dict) else None
    if not isinstance(servers, list):
        raise ConfigError(f'NOVA_MCP_CONFIG {p}: expected {{"servers": [...]}}')
    out = []
    for i, raw in enumerate(servers):
        if (
            not isinstance(raw, dict)
            or not raw.get("name")
            or not (raw.get("command") or raw.get("url"))
        ):
            raise ConfigError(
                f"NOVA_MCP_CONFIG {p}: server {i + 1} needs a name and a command or url"
            )
        known = {f for f in McpServerConfig.__dataclass_fields__}
        out.append(McpServerConfig(**{k: v for k, v in raw.items() if k in known}))
    return out


def _text_of(result: Any) -> str:
    parts = []
    for block in result.content:
        parts.append(getattr(block, "text", None) or f"[{getattr(block, 'type', 'content')}]")
    text = "\n".join(parts) or json.dumps(result.structuredContent or {})
    if result.isError:
        text = f"error: {text}"
    return text[:MAX_CHARS]


async def _connect(
    cfg: McpServerConfig, stack: AsyncExitStack, errlog: TextIO
) -> tuple[ClientSession, list[Tool]]:
    """Open the session; only the handshake runs under the deadline. (A cancel scope around
    entering stdio_client's task group cannot be exited while that group stays open.)"""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if cfg.url:
        read, write, _ = await stack.enter_async_context(streamable_http_client(cfg.url))
    else:
        params = StdioServerParameters(
            command=cfg.command or "", args=list(cfg.args), env=dict(cfg.env) or None
        )
        read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    with anyio.fail_after(cfg.timeout):
        await session.initialize()
        return session, (await session.list_tools()).tools


async def open_extra_tools(
    configs: list[McpServerConfig], stack: AsyncExitStack, reserved: set[str]
) -> tuple[list[ContextTool], list[str]]:
    """Connect to each enabled server; return its tools and notes on what was skipped.
    Connections stay open until ``stack`` closes."""
    if any(not cfg.disabled for cfg in configs):
        require_extra("mcp", "NOVA_MCP_CONFIG", "mcp")
    tools: list[ContextTool] = []
    notes: list[str] = []
    for cfg in configs:
        if cfg.disabled:
            continue
        server_stack = AsyncExitStack()
        errlog = cast(
            TextIO, server_stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
        )
        try:
            session, listed = await _connect(cfg, server_stack, errlog)
        # The boundary to another program: whatever it does (not found, crash, garbage,
        # hang), the review goes on without it.
        except Exception as exc:  # noqa: BLE001
            reason = "timed out" if isinstance(exc, TimeoutError) else _describe(exc)
            tail = _last_line(errlog)
            await _close_quietly(server_stack)
            notes.append(
                f"MCP server {cfg.name!r} skipped: {reason}"
                + (f" (its stderr: {tail})" if tail else "")
            )
            continue
        stack.push_async_callback(_close_quietly, server_stack)
        for t in listed:
            name = _NAME.sub("_", f"{cfg.name}_{t.name}")[:64]
            if name in reserved:
                notes.append(f"MCP tool {name!r} skipped: the name is taken")
                continue
            reserved.add(name)
            tools.append(
                ContextTool(
                    name=name,
                    description=(t.description or t.name)[:1000],
                    parameters=t.inputSchema or {"type": "object", "properties": {}},
                    run=None,
                    arun=_caller(session, t.name),
                )
            )
    return tools, notes


def _caller(session: ClientSession, tool_name: str) -> Callable[..., Awaitable[str]]:
    async def call(**args: Any) -> str:
        return _text_of(await session.call_tool(tool_name, args))

    return call


def _last_line(errlog: IO[str]) -> str:
    errlog.flush()
    errlog.seek(0)
    lines = [ln.strip() for ln in errlog.read().splitlines() if ln.strip()]
    return redact(lines[-1])[:200] if lines else ""


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return redact(f"{type(exc).__name__}: {exc}")[:200]


async def _close_quietly(stack: AsyncExitStack) -> None:
    try:
        await stack.aclose()
    except Exception:  # noqa: BLE001 - a dying server's cleanup must not fail the run
        pass
