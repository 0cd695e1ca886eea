"""A testgen job's checkout: ``nova testgen`` writes and runs tests in a repository, so a
local job clones the repository into its work directory first, at the merged head. The
clone URL is the one ``origins`` derived from the host's settings (never the payload's).
The job's own token authenticates the clone as an HTTP header in git's environment
(``GIT_CONFIG_*``) — never in the URL, the argv or ``.git/config`` — and git follows no
redirect, so the header never reaches another host."""

from __future__ import annotations

import asyncio
import base64
import functools
import os
import signal
from contextlib import suppress
from pathlib import Path

from bot.errors import ServiceError, redact
from bot.serve.jobs import JobRequest
from bot.serve.origins import Origins
from bot.serve.process import die_with_server

__all__ = ["CHECKOUT", "checkout"]

CHECKOUT = "checkout"  # the directory in the job's work directory
_USER = {"github": "x-access-token", "gitlab": "oauth2"}
_TOKEN = {"github": "GITHUB_TOKEN", "gitlab": "GITLAB_TOKEN"}


def git_env(request: JobRequest, env: dict[str, str]) -> dict[str, str]:
    out = {**env, "GIT_TERMINAL_PROMPT": "0"}
    token = env.get(_TOKEN.get(request.host, ""), "")
    if token:
        basic = base64.b64encode(f"{_USER[request.host]}:{token}".encode()).decode()
        out |= {
            "GIT_CONFIG_COUNT": "2",
            "GIT_CONFIG_KEY_0": "http.extraHeader",
            "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
            "GIT_CONFIG_KEY_1": "http.followRedirects",
            "GIT_CONFIG_VALUE_1": "false",
        }
    return out


async def _git(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    proc = await asyncio.create_subprocess_exec(
        "git",
        *args,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # git's helpers (remote-http) are stopped with it
        preexec_fn=functools.partial(die_with_server, os.getpid()),
    )
    try:
        _, err = await proc.communicate()
    except asyncio.CancelledError:  # superseded mid-clone, or a timeout
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await asyncio.shield(proc.wait())
        raise
    if proc.returncode != 0:
        text = redact(err.decode(errors="replace").strip().splitlines()[-1:][0] if err else "")
        raise ServiceError(f"git {args[0]} failed ({proc.returncode}): {text}")


async def checkout(
    request: JobRequest, workdir: Path, env: dict[str, str], origins: Origins
) -> Path:
    """Clone ``request.clone_url`` into ``workdir/checkout`` at ``request.head``."""
    if not request.clone_url or not origins.allows(request):
        raise ServiceError(f"{request.change}: no clone URL on the configured host")
    target = workdir / CHECKOUT
    genv = git_env(request, env)
    if not (target / ".git").is_dir():
        await _git(["clone", "--quiet", "--no-tags", request.clone_url, CHECKOUT], workdir, genv)
    await _git(["checkout", "--quiet", "--detach", request.head], target, genv)
    return target
