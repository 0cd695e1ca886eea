"""What every host's webhook classifier shares: who Nova is, whether a comment addresses
it, a delivery id when the host sends none. Plain data and the standard library only."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["Context", "addresses", "body_digest"]


@dataclass(frozen=True)
class Context:
    """What a classifier knows besides the delivery."""

    handle: str = "nova"  # NOVA_HANDLE: `@nova` in a comment addresses Nova
    own_logins: tuple[str, ...] = ()  # Nova's own accounts on the host (never answered)
    testgen_on_merge: bool = False

    def is_self(self, login: str | None) -> bool:
        if not login:
            return False
        names = {n.lower() for n in self.own_logins}
        return login.lower() in names or login.lower().removesuffix("[bot]") in {
            n.removesuffix("[bot]") for n in names
        }

    def mentions(self) -> tuple[str, ...]:
        return tuple(
            dict.fromkeys(
                n.lower().removesuffix("[bot]") for n in (self.handle, *self.own_logins) if n
            )
        )


def addresses(body: str | None, ctx: Context) -> bool:
    """``@nova`` (or ``@`` + one of Nova's logins) as a word anywhere in the comment —
    never in a comment that carries Nova's own markers (its help text names ``@nova``:
    answering it would loop, whoever the host says wrote it)."""
    if not body or "<!-- nova:" in body:
        return False
    for name in ctx.mentions():
        if re.search(rf"(?<![\w@/.-])@{re.escape(name)}(?![\w-])", body, re.IGNORECASE):
            return True
    return False


def body_digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()
