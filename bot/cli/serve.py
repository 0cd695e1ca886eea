"""``nova serve``: webhooks in, one job per change out (``bot.serve``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bot.cli.common import load_from_flags

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.serve.app import Server


@click.command()
@click.option(
    "--host",
    "serve_host",
    default=None,
    help="Address to listen on. [env: NOVA_SERVE_HOST] [default: 127.0.0.1]",
)
@click.option(
    "--port",
    "serve_port",
    type=int,
    default=None,
    help="HTTP port (0 picks a free one; the URL is printed on stderr). "
    "[env: NOVA_SERVE_PORT] [default: 8080]",
)
@click.option(
    "--data-dir",
    "serve_data_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The durable queue (SQLite) and the jobs' work directories. "
    "[env: NOVA_SERVE_DATA_DIR] [default: .nova-serve]",
)
@click.option(
    "--executor",
    "serve_executor",
    type=click.Choice(["local", "kubernetes"]),
    default=None,
    help="local: Nova subprocesses on this machine; kubernetes: one Job per change. "
    "[env: NOVA_SERVE_EXECUTOR] [default: local]",
)
@click.option(
    "--max-jobs",
    "serve_max_jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Jobs running at once, in total. [env: NOVA_SERVE_MAX_JOBS] [default: 2]",
)
def serve(**flags: Any) -> None:
    """Receive GitHub, GitLab and Phorge webhooks and Harbormaster builds; run one review
    (or respond / testgen) job per change.

    \b
    Endpoints: POST /webhooks/github, /webhooks/gitlab, /webhooks/phabricator (Herald),
    GET|POST /harbormaster?target=…&revision=…&diff=…, GET /healthz, /readyz, /metrics.
    Secrets only from the environment: NOVA_GITHUB_WEBHOOK_SECRET, NOVA_GITLAB_WEBHOOK_TOKEN,
    NOVA_PHABRICATOR_WEBHOOK_SECRET, NOVA_HARBORMASTER_AUTH (user:password); an endpoint
    whose secret is unset refuses every request. Jobs read the host variables a CI job
    reads (GITHUB_TOKEN, GITHUB_API_URL, GITLAB_TOKEN, PHABRICATOR_URL, ...).
    See docs/serve.md.
    """
    from bot.extras import require_extra

    require_extra("serve", "nova serve", "starlette", "uvicorn")
    if flags.get("serve_data_dir") is not None:
        flags["serve_data_dir"] = str(flags["serve_data_dir"])
    settings = load_from_flags(flags, None)
    _run(settings)


def _run(settings: Settings) -> None:
    import asyncio
    import logging
    import socket

    import uvicorn

    from bot.errors import ConfigError
    from bot.serve.app import build_app

    # the server's own lines only (libraries' request logs stay out), on stderr
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("nova serve: %(message)s"))
    log = logging.getLogger("nova.serve")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    server = _server(settings)
    family = socket.AF_INET6 if ":" in settings.serve.host else socket.AF_INET
    # proto named: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say TCP;
    # without it every answer waits ~40 ms for the client's delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.serve.host, settings.serve.port))
    except OSError as exc:
        sock.close()
        server.close()
        where = f"{settings.serve.host}:{settings.serve.port}"
        raise ConfigError(f"cannot listen on {where}: {exc.strerror}") from exc
    sock.listen(2048)  # connections wait in the backlog while the app starts
    host, port = sock.getsockname()[:2]
    click.echo(f"nova serve: listening on http://{host}:{port}", err=True)
    config = uvicorn.Config(
        build_app(server),
        log_level="warning",
        access_log=False,
        limit_concurrency=settings.serve.max_connections,  # more: 503, nothing read
        timeout_keep_alive=5,  # an idle connection goes
        h11_max_incomplete_event_size=16_384,  # request line and headers: 16 KiB at most
    )
    try:
        asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
    finally:
        server.close()


def _server(settings: Settings) -> Server:
    import os

    from bot.serve.wiring import make_server

    return make_server(settings, os.environ)
