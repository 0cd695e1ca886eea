"""GitLab webhooks: check ``X-Gitlab-Token`` (a shared secret, compared in constant time)
before the body is parsed, then turn a delivery into a job request (or ``Ignored``).

Reviewed: a merge request opened, reopened, or updated with a new head (``oldrev``), not a
draft. Answered: a note on a merge request that addresses Nova (never Nova's own).
Test generation: a merge or push to the default branch, when enabled."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bot.serve.classify import Context, addresses, body_digest
from bot.serve.jobs import Ignored, JobRequest, same_secret

__all__ = ["classify", "delivery_id", "verify"]

# project and group access tokens' users (project_12_bot_3f…), and bots named *-bot
_BOT = re.compile(r"^(?:(?:project|group)_\d+_bot\w*|.+[-_]bot)$")


def verify(headers: Mapping[str, str], body: bytes, secret: str) -> bool:
    return same_secret(headers.get("x-gitlab-token"), secret)


def delivery_id(headers: Mapping[str, str], body: bytes) -> str:
    """``Idempotency-Key`` (stable across GitLab's retries, 17.4+), else the event's UUID."""
    key = (
        headers.get("idempotency-key")
        or headers.get("x-gitlab-event-uuid")
        or headers.get("x-gitlab-webhook-uuid")
        or body_digest(body)
    )
    return "gitlab:" + key


def classify(
    headers: Mapping[str, str], payload: Mapping[str, Any], delivery: str, ctx: Context
) -> JobRequest | Ignored:
    kind = payload.get("object_kind") or headers.get("x-gitlab-event", "")
    project = payload.get("project") or {}
    path = str(project.get("path_with_namespace") or "")
    if not path:
        return Ignored(f"{kind or 'an event'} without a project")
    clone_url = project.get("git_http_url")
    common: dict[str, Any] = {
        "host": "gitlab",
        "delivery": delivery,
        "clone_url": str(clone_url) if clone_url else None,
    }
    if kind == "merge_request":
        return _merge_request(payload, path, project, ctx, common)
    if kind == "note":
        return _note(payload, path, ctx, common)
    if kind == "push":
        default = project.get("default_branch")
        if payload.get("ref") != f"refs/heads/{default}":
            return Ignored("a push to a branch other than the default")
        return _testgen(path, str(default), str(payload.get("after") or ""), ctx, common)
    return Ignored(f"event {kind or '(none)'} starts no job")


def _merge_request(
    payload: Mapping[str, Any],
    path: str,
    project: Mapping[str, Any],
    ctx: Context,
    common: dict[str, Any],
) -> JobRequest | Ignored:
    attrs = payload.get("object_attributes") or {}
    action = attrs.get("action")
    user = payload.get("user") or {}
    if ctx.is_self(user.get("username")):
        return Ignored("Nova's own merge request event")
    if action == "merge":
        if attrs.get("target_branch") != project.get("default_branch"):
            return Ignored("a merge into a branch other than the default")
        sha = str(attrs.get("merge_commit_sha") or (attrs.get("last_commit") or {}).get("id"))
        return _testgen(path, str(project.get("default_branch")), sha, ctx, common)
    if action == "update" and not attrs.get("oldrev"):
        return Ignored("a merge request update without a new head")
    if action not in ("open", "reopen", "update"):
        return Ignored(f"merge request {action} starts no job")
    if attrs.get("draft") or attrs.get("work_in_progress"):
        return Ignored("a draft merge request")
    iid = attrs.get("iid")
    head = str((attrs.get("last_commit") or {}).get("id") or "")
    if not iid or not head:
        return Ignored("a merge request without an iid or head")
    ref = f"{path}!{iid}"
    return JobRequest(kind="review", change=f"gitlab:{ref}", ref=ref, head=head, **common)


def _note(
    payload: Mapping[str, Any], path: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Ignored:
    attrs = payload.get("object_attributes") or {}
    if attrs.get("noteable_type") != "MergeRequest":
        return Ignored("a note on something other than a merge request")
    if attrs.get("system"):
        return Ignored("a system note")
    user = payload.get("user") or {}
    if ctx.is_self(user.get("username")):
        return Ignored("Nova's own note")
    if _BOT.match(str(user.get("username") or "")) or user.get("bot"):
        return Ignored("a bot's note")
    iid = (payload.get("merge_request") or {}).get("iid")
    if not addresses(attrs.get("note"), ctx) or not iid or not attrs.get("id"):
        return Ignored("a note that does not address Nova")
    ref = f"{path}!{iid}"
    return JobRequest(
        kind="respond",
        change=f"gitlab:{ref}",
        ref=ref,
        head="",
        comment=str(attrs["id"]),
        **common,
    )


def _testgen(
    path: str, branch: str, sha: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Ignored:
    if not ctx.testgen_on_merge:
        return Ignored("test generation on merge is not enabled (NOVA_SERVE_TESTGEN)")
    if not sha or set(sha) == {"0"} or sha == "None":
        return Ignored("no new head on the default branch")
    return JobRequest(
        kind="testgen", change=f"gitlab:{path}@{branch}", ref=path, head=sha, **common
    )
