"""Builds the server from ``Settings``: each part gets only what it reads. The request
handlers get the serve section (webhook secrets) and the queue; the jobs' environment is
made from the server's environment by ``environment.job_environment``; the Phabricator
section goes to the Herald lookup and the Harbormaster reporter."""

from __future__ import annotations

import importlib
import os
import shlex
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bot.config import Settings, all_settings
from bot.errors import ConfigError
from bot.hosts.github.settings import GitHubSettings
from bot.hosts.phabricator.settings import PhabricatorSettings
from bot.serve.app import Server
from bot.serve.classify import Context
from bot.serve.dispatch import Dispatcher
from bot.serve.environment import job_environment
from bot.serve.executors import EXECUTORS, Executor
from bot.serve.jobs import Ignored, JobRequest
from bot.serve.origins import Origins, github_web_url
from bot.serve.queue import Busy, Job, Queue, hold
from bot.serve.settings import ServeSettings

__all__ = ["make_server", "shared_setting"]


def shared_setting(settings: Settings, env: str, default: str) -> str:
    """A setting another section declares (NOVA_HANDLE, NOVA_GITHUB_LOGIN), by its
    variable; ``default`` while no section declares it."""
    for spec in all_settings():
        if spec.env == env:
            value = settings.value(spec.name)
            return str(value) if value else default
    return default


def make_executor(serve: ServeSettings, data_dir: Path, origins: Origins) -> Executor:
    module, name = EXECUTORS[serve.executor]
    cls: Any = getattr(importlib.import_module(module), name)
    if serve.executor == "local":
        command = shlex.split(serve.job_command) if serve.job_command else None
        executor: Executor = cls(data_dir, serve.job_timeout, command, origins)
    else:
        executor = cls.from_settings(serve, origins)
    return executor


def make_origins(settings: Settings) -> Origins:
    """Each host's web and git base URL, from its settings: where a job's token may go."""
    from bot.hosts.gitlab.client import server_url
    from bot.hosts.gitlab.settings import GitLabSettings

    github = settings.section(GitHubSettings).api_url
    gitlab = server_url(settings.section(GitLabSettings))
    return Origins({"github": github_web_url(github), "gitlab": gitlab})


def make_server(settings: Settings, server_env: Mapping[str, str]) -> Server:
    """The server; ``server_env`` is the process's environment, the source of the local
    jobs' variables (``environment.job_environment`` picks what each job needs)."""
    serve = settings.serve
    data_dir = Path(serve.data_dir).resolve()
    try:
        for sub in ("", "jobs", "logs"):  # the jobs' output: for the server's user only
            (data_dir / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot use NOVA_SERVE_DATA_DIR {data_dir}: {exc.strerror}") from exc
    env = dict(server_env)
    github = settings.section(GitHubSettings)
    app = _github_app(serve, github)
    login = shared_setting(settings, "NOVA_GITHUB_LOGIN", "")
    logins = tuple(n for n in (login, app.login() if app else "") if n)
    context = Context(
        handle=shared_setting(settings, "NOVA_HANDLE", "nova"),
        own_logins=logins,
        testgen_on_merge=serve.testgen_on_merge,
    )
    phab = settings.section(PhabricatorSettings)
    configured = bool(phab.url and phab.token)
    hooks = None
    herald: Callable[[JobRequest], JobRequest | Ignored] | None = None
    if configured:
        from bot.serve.harbormaster import BuildTargets

        hooks = BuildTargets(phab)
        herald = _herald(phab)
    origins = make_origins(settings)
    executor = make_executor(serve, data_dir, origins)

    # a Kubernetes Job takes its environment from its Secret: only the job's own values
    # travel in its spec
    passed = env if serve.executor == "local" else {}

    # what untrusted code under a job must never see (bot/sandbox honours it): the data
    # directory (other jobs' checkouts and logs, the queue) and the server's own home
    hidden = os.pathsep.join(p for p in (str(data_dir), server_env.get("HOME", "")) if p)

    def environment(job: Job) -> dict[str, str]:
        own = app.job_env(job.request) if app and job.request.host == "github" else {}
        return job_environment(job.request, passed, {**own, "NOVA_SANDBOX_HIDE": hidden})

    def dispatcher(queue: Queue) -> Dispatcher:
        return Dispatcher(queue, executor, serve.max_jobs, environment, hooks)

    try:
        lock = hold(data_dir)  # held while the process lives
    except (OSError, Busy) as exc:
        raise ConfigError(str(exc)) from exc
    try:
        queue = Queue(data_dir)
    except sqlite3.Error as exc:
        lock.close()
        raise ConfigError(f"cannot open the queue in {data_dir}: {exc}") from exc
    return Server(serve, context, queue, dispatcher, herald=herald, lock=lock, origins=origins)


def _herald(phab: PhabricatorSettings) -> Callable[[JobRequest], JobRequest | Ignored]:
    def resolve(request: JobRequest) -> JobRequest | Ignored:
        from bot.hosts.phabricator.conduit import ConduitClient
        from bot.hosts.phabricator.webhook import resolve as lookup

        return lookup(request, ConduitClient(phab))

    return resolve


def _github_app(serve: ServeSettings, github: GitHubSettings) -> Any:
    if not (serve.github_app_id and serve.github_app_private_key):
        if serve.github_app_id or serve.github_app_private_key:
            raise ConfigError(
                "GitHub App mode needs both NOVA_GITHUB_APP_ID and NOVA_GITHUB_APP_PRIVATE_KEY"
            )
        return None
    from bot.serve.github_app import GitHubApp

    return GitHubApp(serve.github_app_id, serve.github_app_private_key, github.api_url)
