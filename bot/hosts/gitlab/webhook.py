"""GitLab webhooks: check ``X-Gitlab-Token`` (a shared secret, compared in constant time)
before the body is parsed, then turn a delivery into a job request (or ``Ignored``).

Reviewed: a merge request opened, reopened, or updated with a new head (``oldrev``), not a
draft; closed: its jobs stop. Answered: a note on a merge request that addresses Nova
(never Nova's own, never a bot's). Test generation: a merge or push to the default branch,
when enabled. A payload of any shape is classified without raising."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bot.serve.classify import Context, addresses, body_digest, dig, number, text
from bot.serve.jobs import Cancel, Ignored, JobRequest, same_secret

__all__ = ["classify", "delivery_id", "signed", "verify"]

# project and group access tokens' users (project_12_bot_3f…), and bots named *-bot
_BOT = re.compile(r"^(?:(?:project|group)_\d+_bot\w*|.+[-_]bot)$")


def signed(headers: Mapping[str, str], secret: str) -> bool:
    """The whole check: the token is a header, so a wrong one is refused before the body
    is read."""
    return same_secret(headers.get("x-gitlab-token"), secret)


def verify(headers: Mapping[str, str], body: bytes, secret: str) -> bool:
    return signed(headers, secret)


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
) -> JobRequest | Cancel | Ignored:
    kind = text(payload.get("object_kind")) or headers.get("x-gitlab-event", "")
    path = text(dig(payload, "project", "path_with_namespace"))
    if not path:
        return Ignored(f"{kind or 'an event'} without a project")
    common: dict[str, Any] = {
        "host": "gitlab",
        "delivery": delivery,
        "clone_url": text(dig(payload, "project", "git_http_url")) or None,
    }
    default = text(dig(payload, "project", "default_branch"))
    if kind == "merge_request":
        return _merge_request(payload, path, default, ctx, common)
    if kind == "note":
        return _note(payload, path, ctx, common)
    if kind == "push":
        if not default or payload.get("ref") != f"refs/heads/{default}":
            return Ignored("a push to a branch other than the default")
        return _testgen(path, default, text(payload.get("after")), ctx, common)
    return Ignored(f"event {kind or '(none)'} starts no job")


def _merge_request(
    payload: Mapping[str, Any], path: str, default: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Cancel | Ignored:
    attrs = payload.get("object_attributes")
    action = text(dig(attrs, "action"))
    if ctx.is_self(text(dig(payload, "user", "username"))):
        return Ignored("Nova's own merge request event")
    head = text(dig(attrs, "last_commit", "id"))
    if action == "merge":
        if not default or dig(attrs, "target_branch") != default:
            return Ignored("a merge into a branch other than the default")
        sha = text(dig(attrs, "merge_commit_sha")) or head
        return _testgen(path, default, sha, ctx, common)
    iid = number(dig(attrs, "iid"))
    if action == "close" and iid:
        return Cancel(f"gitlab:{path}!{iid}", "the merge request was closed")
    if action == "update" and not dig(attrs, "oldrev"):
        return Ignored("a merge request update without a new head")
    if action not in ("open", "reopen", "update"):
        return Ignored(f"merge request {action} starts no job")
    if dig(attrs, "draft") is True or dig(attrs, "work_in_progress") is True:
        return Ignored("a draft merge request")
    if not iid or not head:
        return Ignored("a merge request without an iid or head")
    ref = f"{path}!{iid}"
    return JobRequest(kind="review", change=f"gitlab:{ref}", ref=ref, head=head, **common)


def _note(
    payload: Mapping[str, Any], path: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Cancel | Ignored:
    attrs = payload.get("object_attributes")
    if dig(attrs, "noteable_type") != "MergeRequest":
        return Ignored("a note on something other than a merge request")
    if dig(attrs, "system") is True:
        return Ignored("a system note")
    username = text(dig(payload, "user", "username"))
    if ctx.is_self(username):
        return Ignored("Nova's own note")
    if _BOT.match(username) or dig(payload, "user", "bot") is True:
        return Ignored("a bot's note")
    iid = number(dig(payload, "merge_request", "iid"))
    note_id = number(dig(attrs, "id"))
    if not addresses(text(dig(attrs, "note")), ctx) or not iid or not note_id:
        return Ignored("a note that does not address Nova")
    ref = f"{path}!{iid}"
    return JobRequest(
        kind="respond",
        change=f"gitlab:{ref}",
        ref=ref,
        head="",
        comment=str(note_id),
        **common,
    )


def _testgen(
    path: str, branch: str, sha: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Cancel | Ignored:
    if not ctx.testgen_on_merge:
        return Ignored("test generation on merge is not enabled (NOVA_SERVE_TESTGEN)")
    if not sha or set(sha) == {"0"}:
        return Ignored("no new head on the default branch")
    return JobRequest(
        kind="testgen", change=f"gitlab:{path}@{branch}", ref=path, head=sha, **common
    )
