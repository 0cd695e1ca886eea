"""What every host's webhook classifier shares: who Nova is, whether a comment addresses
it, a delivery id when the host sends none. Plain data and the standard library only."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Context", "addresses", "body_digest", "dig", "number", "text"]


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


# A verified payload is still data of any shape: these read it without ever raising.
def dig(data: Any, *keys: str) -> Any:
    """``data[k1][k2]…``, or None where a step is missing or not an object."""
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def text(value: Any) -> str:
    """A string or a number as text; anything else (None, objects, booleans) as ''."""
    if isinstance(value, bool):
        return ""
    return value if isinstance(value, str) else str(value) if isinstance(value, int) else ""


def number(value: Any) -> int | None:
    """A positive integer (or its digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None
