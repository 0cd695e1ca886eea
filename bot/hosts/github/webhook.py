"""GitHub webhooks: verify ``X-Hub-Signature-256`` on the raw body, then turn a delivery
into a job request (or ``Ignored``).

Reviewed: ``pull_request`` opened / reopened / ready_for_review / synchronize (not drafts,
not from bots); ``closed`` stops its jobs. Answered: an ``issue_comment`` on a pull request or a
``pull_request_review_comment`` that addresses Nova (never Nova's own, never a bot's).
Test generation: a ``push`` to the default branch, when enabled. A payload of any shape is
classified without raising (``dig``, ``text``, ``number``)."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import Any

from bot.serve.classify import Context, addresses, body_digest, dig, number, text
from bot.serve.jobs import Cancel, Ignored, JobRequest

__all__ = ["classify", "delivery_id", "signed", "verify"]

_REVIEWED = ("opened", "reopened", "ready_for_review", "synchronize")


def signed(headers: Mapping[str, str], secret: str) -> bool:
    """The signature header is there and well formed (checked before the body is read)."""
    return re.fullmatch(r"sha256=[0-9a-f]{64}", headers.get("x-hub-signature-256", "")) is not None


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
) -> JobRequest | Cancel | Ignored:
    event = headers.get("x-github-event", "")
    repo = text(dig(payload, "repository", "full_name"))
    if not repo:
        return Ignored(f"{event or 'an event'} without a repository")
    common: dict[str, Any] = {
        "host": "github",
        "delivery": delivery,
        "repository": repo,
        "installation": number(dig(payload, "installation", "id")),
    }
    if event == "pull_request":
        return _pull_request(payload, repo, ctx, common)
    if event in ("issue_comment", "pull_request_review_comment"):
        return _comment(event, payload, repo, ctx, common)
    if event == "push":
        return _push(payload, repo, ctx, common)
    return Ignored(f"event {event or '(none)'} starts no job")


def _is_bot(user: Any, ctx: Context) -> str | None:
    login = text(dig(user, "login"))
    if ctx.is_self(login):
        return "Nova's own"
    if dig(user, "type") == "Bot" or login.endswith("[bot]"):
        return "a bot's"
    return None


def _pull_request(
    payload: Mapping[str, Any], repo: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Cancel | Ignored:
    action = text(payload.get("action"))
    pr = number(payload.get("number")) or number(dig(payload, "pull_request", "number"))
    if action == "closed" and pr:
        return Cancel(f"github:{repo}#{pr}", "the pull request was closed")
    if action not in _REVIEWED:
        return Ignored(f"pull_request {action} starts no job")
    if dig(payload, "pull_request", "draft") is True:
        return Ignored("a draft pull request")
    who = _is_bot(payload.get("sender"), ctx)
    if who:
        return Ignored(f"{who} pull request event")
    head = text(dig(payload, "pull_request", "head", "sha"))
    if not pr or not head:
        return Ignored("pull_request without a number or head")
    ref = f"{repo}#{pr}"
    return JobRequest(kind="review", change=f"github:{ref}", ref=ref, head=head, **common)


def _comment(
    event: str, payload: Mapping[str, Any], repo: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Cancel | Ignored:
    if payload.get("action") != "created":
        return Ignored(f"{event} {text(payload.get('action'))} starts no job")
    comment = payload.get("comment")
    if event == "issue_comment":
        issue = payload.get("issue")
        if not isinstance(issue, Mapping) or "pull_request" not in issue:
            return Ignored("a comment on an issue, not a pull request")
        pr = number(issue.get("number"))
    else:
        pr = number(dig(payload, "pull_request", "number"))
    who = _is_bot(dig(comment, "user"), ctx)
    if who:
        return Ignored(f"{who} comment")
    comment_id = number(dig(comment, "id"))
    if not addresses(text(dig(comment, "body")), ctx) or not pr or not comment_id:
        return Ignored("a comment that does not address Nova")
    ref = f"{repo}#{pr}"
    return JobRequest(
        kind="respond",
        change=f"github:{ref}",
        ref=ref,
        head="",
        comment=str(comment_id),
        **common,
    )


def _push(
    payload: Mapping[str, Any], repo: str, ctx: Context, common: dict[str, Any]
) -> JobRequest | Cancel | Ignored:
    default = text(dig(payload, "repository", "default_branch"))
    if not default or payload.get("ref") != f"refs/heads/{default}":
        return Ignored("a push to a branch other than the default")
    if not ctx.testgen_on_merge:
        return Ignored("test generation on merge is not enabled (NOVA_SERVE_TESTGEN)")
    after = text(payload.get("after"))
    if not after or set(after) == {"0"}:
        return Ignored("a push without a new head")
    clone_url = text(dig(payload, "repository", "clone_url"))
    return JobRequest(
        kind="testgen",
        change=f"github:{repo}@{default}",
        ref=repo,
        head=after,
        clone_url=clone_url or None,
        **common,
    )
