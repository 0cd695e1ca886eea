"""Phorge / Phabricator webhooks.

- A **Herald webhook** (``/webhooks/phabricator``): ``X-Phabricator-Webhook-Signature`` is
  the hex HMAC-SHA256 of the body, checked before it is parsed. The body names the object
  and its transactions only, so the revision's number and current diff are looked up over
  Conduit (``resolve``); the delivery id is a digest of the object and the action's epoch.
- A **Harbormaster "Make HTTP Request" step** (``/harbormaster``): HTTP Basic
  (``NOVA_HARBORMASTER_AUTH``), no body; the target PHID, revision and diff are in the URL
  (``?target=${target.phid}&revision=${revision.id}&diff=${buildable.diff}``). The target
  PHID is the delivery id: Harbormaster's retries of one target are one job.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bot.serve.classify import body_digest, dig, number, text
from bot.serve.jobs import Ignored, JobRequest, same_secret

if TYPE_CHECKING:
    from bot.hosts.phabricator.conduit import ConduitClient

__all__ = ["classify_build", "classify_herald", "resolve", "signed", "verify", "verify_basic"]

_TARGET = re.compile(r"^PHID-HMBT-[A-Za-z0-9]+$")


def signed(headers: Mapping[str, str], secret: str) -> bool:
    """The signature header is there and well formed (checked before the body is read)."""
    given = headers.get("x-phabricator-webhook-signature", "")
    return re.fullmatch(r"[0-9a-fA-F]{64}", given) is not None


def verify(headers: Mapping[str, str], body: bytes, secret: str) -> bool:
    given = headers.get("x-phabricator-webhook-signature", "")
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(given.lower().encode(), expected.encode())


def verify_basic(headers: Mapping[str, str], auth: str) -> bool:
    """``Authorization: Basic base64(user:password)`` equal to ``auth``, in constant time."""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        given = base64.b64decode(value.strip(), validate=True)
    except ValueError:
        return False
    return same_secret(given, auth)


def classify_herald(payload: Mapping[str, Any]) -> JobRequest | Ignored:
    """A revision's webhook, still to be ``resolve``d (its ref is the revision's PHID)."""
    if dig(payload, "action", "test") is True:
        return Ignored("a test delivery")
    kind, phid = dig(payload, "object", "type"), text(dig(payload, "object", "phid"))
    if kind != "DREV" or not phid.startswith("PHID-DREV-"):
        return Ignored(f"object {text(kind) or '(none)'} starts no job")
    epoch = text(dig(payload, "action", "epoch"))
    delivery = "phabricator:" + body_digest(phid, epoch)
    return JobRequest(
        host="phabricator", kind="review", change="", ref=phid, head="", delivery=delivery
    )


def resolve(request: JobRequest, conduit: ConduitClient) -> JobRequest | Ignored:
    """The revision's number and its current diff, over Conduit."""
    from dataclasses import replace

    page = conduit.call("differential.revision.search", constraints={"phids": [request.ref]})
    data = dig(page, "data")
    rev = data[0] if isinstance(data, list) and data else None
    rev_id = number(dig(rev, "id"))
    if rev_id is None:
        return Ignored("the revision is not visible to Nova")
    status = dig(rev, "fields", "status", "value")
    if status in ("closed", "abandoned", "published", "draft"):
        return Ignored(f"a {status} revision")
    ref = f"D{rev_id}"
    head = text(dig(rev, "fields", "diffPHID"))
    return replace(request, change=f"phabricator:{ref}", ref=ref, head=head)


def classify_build(query: Mapping[str, str]) -> JobRequest | Ignored:
    target = query.get("target", "")
    if not _TARGET.match(target):
        return Ignored("no build target PHID (target=${target.phid}) in the URL")
    revision = query.get("revision", "").removeprefix("D")
    diff = query.get("diff", "")
    if not revision.isdigit() or (diff and not diff.isdigit()):
        return Ignored("no revision (revision=${revision.id}) in the URL")
    ref = f"D{revision}:{diff}" if diff else f"D{revision}"
    return JobRequest(
        host="phabricator",
        kind="review",
        change=f"phabricator:D{revision}",
        ref=ref,
        head=diff,
        delivery="harbormaster:" + target,
        target=target,
    )
