"""GitHub webhooks: verify ``X-Hub-Signature-256`` on the raw body, then turn a delivery
into a job request (or ``Ignored``).

Reviewed: ``pull_request`` opened / reopened / ready_for_review / synchronize (not drafts,
not from bots). Answered: an ``issue_comment`` on a pull request or a
``pull_request_review_comment`` that addresses Nova (never Nova's own, never a bot's).
Test generation: a ``push`` to the default branch, when enabled."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from bot.serve.classify import Context, addresses, body_digest
from bot.serve.jobs import Ignored, JobRequest

__all__ = ["classify", "delivery_id", "verify"]

_REVIEWED = ("opened", "reopened", "ready_for_review", "synchronize")


def verify(headers: Mapping[str, str], body: bytes, secret: str) -> bool:
    """``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>``, compared in constant
    time."""
    given = headers.get("x-hub-signature-256", "")
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(given.encode(), expected.encode())


def delivery_id(headers: Mapping[str, str], body: bytes) -> str:
    return "github:" + (headers.get("x-github-delivery") or body_digest(body))


def classify(
    headers: Mapping[str, str], payload: Mapping[str, Any], delivery: str, ctx: Context
) -> JobRequest | Ignored:
    event = headers.get("x-github-event", "")
    repo = str((payload.get("repository") or {}).get("full_name") or "")
    if not repo:
        return Ignored(f"{event or 'an event'} without a repository")
    installation = (payload.get("installation") or {}).get("id")
    sender = payload.get("sender") or {}
    common: dict[str, Any] = {
        "host": "github",
        "delivery": delivery,
        "repository": repo,
        "installation": int(installation) if installation else None,
    }
    if event == "pull_request":
        return _pull_request(payload, repo, sender, ctx, common)
    if event in ("issue_comment", "pull_request_review_comment"):
        return _comment(event, payload, repo, ctx, common)
    if event == "push":
        return _push(payload, repo, ctx, common)
    return Ignored(f"event {event or '(none)'} starts no job")


def _is_bot(user: Mapping[str, Any], ctx: Context) -> str | None:
    login = str(user.get("login") or "")
    if ctx.is_self(login):
        return "Nova's own"
    if user.get("type") == "Bot" or login.endswith("[bot]"):
        return "a bot's"
    return None


def _pull_request(
    payload: Mapping[str, Any],
    repo: str,
    sender: Mapping[str, Any],
    ctx: Context,
    common: dict[str, Any],
) -> JobRequest | Ignored:
    action = payload.get("action")
    pull = payload.get("pull_request") or {}
    if action not in _REVIEWED:
        return Ignored(f"pull_request {action} starts no job")
    if pull.get("draft"):
        return Ignored("a draft pull request")
    who = _is_bot(sender, ctx)
    if who:
        return Ignored(f"{who} pull request event")
    number = int(payload.get("number") or pull.get("number") or 0)
    head = str((pull.get("head") or {}).get("sha") or "")
    if not number or not head:
        return Ignored("pull_request without a number or head")
    ref = f"{repo}#{number}"
    return JobRequest(kind="review", change=f"github:{ref}", ref=ref, head=head, **common)


def _comment(
    event: str, payload: Mapping[str, Any], repo: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Ignored:
    if payload.get("action") != "created":
        return Ignored(f"{event} {payload.get('action')} starts no job")
    comment = payload.get("comment") or {}
    if event == "issue_comment":
        issue = payload.get("issue") or {}
        if "pull_request" not in issue:
            return Ignored("a comment on an issue, not a pull request")
        number = int(issue.get("number") or 0)
    else:
        number = int((payload.get("pull_request") or {}).get("number") or 0)
    who = _is_bot(comment.get("user") or {}, ctx)
    if who:
        return Ignored(f"{who} comment")
    if not addresses(comment.get("body"), ctx) or not number or not comment.get("id"):
        return Ignored("a comment that does not address Nova")
    ref = f"{repo}#{number}"
    return JobRequest(
        kind="respond",
        change=f"github:{ref}",
        ref=ref,
        head="",
        comment=str(comment["id"]),
        **common,
    )


def _push(
    payload: Mapping[str, Any], repo: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Ignored:
    default = (payload.get("repository") or {}).get("default_branch")
    if payload.get("ref") != f"refs/heads/{default}":
        return Ignored("a push to a branch other than the default")
    if not ctx.testgen_on_merge:
        return Ignored("test generation on merge is not enabled (NOVA_SERVE_TESTGEN)")
    after = str(payload.get("after") or "")
    if not after or set(after) == {"0"}:
        return Ignored("a push without a new head")
    clone_url = (payload.get("repository") or {}).get("clone_url")
    return JobRequest(
        kind="testgen",
        change=f"github:{repo}@{default}",
        ref=repo,
        head=after,
        clone_url=str(clone_url) if clone_url else None,
        **common,
    )
