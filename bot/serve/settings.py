"""``nova serve``'s settings. The webhook secrets and the GitHub App key come only from the
environment (never a flag, never ``.nova.toml``) and never reach a job."""

from __future__ import annotations

from dataclasses import dataclass

from bot.sections import Section, boolean, setting

__all__ = ["EXECUTORS", "ServeSettings"]

EXECUTORS = ("local", "kubernetes")


@dataclass(frozen=True)
class ServeSettings(Section):
    prefix = "serve_"

    host: str = setting("NOVA_SERVE_HOST", "nova serve: the address to listen on.", "127.0.0.1")
    port: int = setting(
        "NOVA_SERVE_PORT", "nova serve: the HTTP port (0 picks a free one).", 8080, parse=int, min=0
    )
    data_dir: str = setting(
        "NOVA_SERVE_DATA_DIR",
        "nova serve: the directory of the durable job queue (SQLite) and the jobs' "
        "work directories.",
        ".nova-serve",
    )
    executor: str = setting(
        "NOVA_SERVE_EXECUTOR",
        "nova serve: where jobs run: local (Nova subprocesses on this machine) or "
        "kubernetes (one Job per change).",
        "local",
        choices=EXECUTORS,
    )
    max_jobs: int = setting(
        "NOVA_SERVE_MAX_JOBS", "nova serve: jobs running at once, in total.", 2, parse=int, min=1
    )
    job_timeout: float = setting(
        "NOVA_SERVE_JOB_TIMEOUT",
        "nova serve: seconds a job may run before it is killed (and fails).",
        1800.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    max_attempts: int = setting(
        "NOVA_SERVE_MAX_ATTEMPTS",
        "nova serve: times a job is started at most (a restart re-queues a running job).",
        3,
        parse=int,
        min=1,
    )
    max_body: int = setting(
        "NOVA_SERVE_MAX_BODY",
        "nova serve: the largest webhook body accepted, in bytes (larger: 413).",
        26_214_400,
        parse=int,
        min=1,
    )
    body_memory: int = setting(
        "NOVA_SERVE_BODY_MEMORY",
        "nova serve: bytes of webhook bodies read into memory at once, across all requests "
        "(a body waits for room; at least NOVA_SERVE_MAX_BODY).",
        67_108_864,
        parse=int,
        min=1,
    )
    body_timeout: float = setting(
        "NOVA_SERVE_BODY_TIMEOUT",
        "nova serve: seconds a webhook body may wait for room and take to arrive (else 408).",
        10.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    max_connections: int = setting(
        "NOVA_SERVE_MAX_CONNECTIONS",
        "nova serve: connections served at once; more are answered 503 (uvicorn's "
        "limit_concurrency).",
        256,
        parse=int,
        min=1,
    )
    testgen_on_merge: bool = setting(
        "NOVA_SERVE_TESTGEN",
        "nova serve: a merge to the default branch starts a testgen job.",
        False,
        parse=boolean,
    )
    job_command: str | None = setting(
        "NOVA_SERVE_JOB_COMMAND",
        "nova serve: the command a local job runs, before its arguments (default: this "
        "Python's nova).",
    )
    namespace: str = setting(
        "NOVA_SERVE_NAMESPACE", "nova serve (kubernetes): the namespace of the Jobs.", "nova"
    )
    image: str = setting(
        "NOVA_SERVE_IMAGE", "nova serve (kubernetes): the image the Jobs run.", "nova:latest"
    )
    job_secret: str = setting(
        "NOVA_SERVE_JOB_SECRET",
        "nova serve (kubernetes): the Secret whose keys become every Job's environment "
        "(model key, settings); a Job also gets its own host's Secret, this name + "
        "-github / -gitlab / -phabricator (that host's token only).",
        "nova-job",
    )
    github_webhook_secret: str | None = setting(
        "NOVA_GITHUB_WEBHOOK_SECRET",
        "nova serve: the GitHub webhook secret (X-Hub-Signature-256); unset: "
        "/webhooks/github refuses every delivery.",
        secret=True,
    )
    gitlab_webhook_token: str | None = setting(
        "NOVA_GITLAB_WEBHOOK_TOKEN",
        "nova serve: the GitLab webhook secret token (X-Gitlab-Token); unset: "
        "/webhooks/gitlab refuses every delivery.",
        secret=True,
    )
    phabricator_webhook_secret: str | None = setting(
        "NOVA_PHABRICATOR_WEBHOOK_SECRET",
        "nova serve: the Herald webhook's HMAC key (X-Phabricator-Webhook-Signature); "
        "unset: /webhooks/phabricator refuses every delivery.",
        secret=True,
    )
    harbormaster_auth: str | None = setting(
        "NOVA_HARBORMASTER_AUTH",
        "nova serve: user:password the Harbormaster HTTP step sends (Basic); unset: "
        "/harbormaster refuses every request.",
        secret=True,
    )
    github_app_id: str | None = setting(
        "NOVA_GITHUB_APP_ID",
        "nova serve: GitHub App id; with the key, each job gets an installation token "
        "for its one repository.",
    )
    github_app_private_key: str | None = setting(
        "NOVA_GITHUB_APP_PRIVATE_KEY",
        "nova serve: the GitHub App's private key (PEM text, or a file path).",
        secret=True,
    )
