"""Committed secrets: findings on the added lines, and a scrubber for everything the model reads.

The rules are detect-secrets' plugins (Yelp's maintained rule set) with its default false-
positive filters (templated values, indirect references, ...): private key blocks, AWS access
key ids and secret keys, GitHub / GitLab / Slack / Stripe / OpenAI / npm / PyPI / SendGrid /
Twilio / Discord / Telegram / Artifactory / Mailchimp / Square tokens, JWTs, credentials in
URLs, and ``password = "…"`` style assignments. The two generic rules (keyword assignments,
credentials in URLs) count only for values of high entropy, so ``password = "changeme"`` in
a README is not a finding. A GCP service-account JSON is found by its ``private_key`` line.

Each secret on an added line is an ``error`` finding on that line (a ``warning`` under a test
or fixture path), whatever the exclusions: keys are excluded from review exactly because they
are not code. ``Scrubber.scrub`` replaces secrets by placeholders in prompts and tool results;
``Scrubber.restore`` puts them back in a comment's quoted ``code`` only, so that anchoring,
which compares the quote with the real line, still works.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bot.change import Comment, FileDiff

__all__ = ["PLUGINS", "Scrubber", "find_secrets", "scan_secrets"]

PLUGINS = (
    "PrivateKeyDetector",
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "SlackDetector",
    "StripeDetector",
    "OpenAIDetector",
    "NpmDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "TwilioKeyDetector",
    "DiscordBotTokenDetector",
    "TelegramBotTokenDetector",
    "ArtifactoryDetector",
    "MailchimpDetector",
    "SquareOAuthDetector",
    "JwtTokenDetector",
    "BasicAuthDetector",
    "KeywordDetector",
)
GENERIC = {"Secret Keyword", "Basic Auth Credentials"}  # must also look random
MIN_ENTROPY = 3.3  # bits per character of a generic secret's value
MIN_GENERIC_LENGTH = 8
PRIVATE_KEY = "Private Key"
_TEST_PATH = re.compile(r"(^|/)(tests?|testing|testdata|fixtures?|__tests__|spec)/|(^|/)test_")
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-+/=.~]")
_KEY_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
# base64 that ends a line (or a JSON string's "\n"): not a path that happens to follow
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}(?=[ \t]*$|\\n|\")", re.MULTILINE)
KEY_PLACEHOLDER = "[private key material redacted]"


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


@contextmanager
def _detector() -> Iterator[Any]:
    """detect-secrets' ``scan_line`` with our plugins (its settings are process-global).
    ``scan_line`` costs ~1 ms a line (it re-inspects every plugin); a line none of the
    plugins' own patterns can match is passed over first, which is 30x faster on real diffs."""
    from detect_secrets.core.scan import scan_line
    from detect_secrets.plugins.keyword import DENYLIST_REGEX
    from detect_secrets.settings import get_plugins, transient_settings

    with transient_settings({"plugins_used": [{"name": p} for p in PLUGINS]}):
        quick = [re.compile(DENYLIST_REGEX, re.IGNORECASE), _KEY_BEGIN]
        for plugin in get_plugins():
            quick += list(getattr(plugin, "denylist", ()))

        def scan(line: str) -> Iterator[Any]:
            if any(r.search(line) for r in quick):
                yield from scan_line(line)

        yield scan


def _span(line: str, value: str) -> tuple[int, int] | None:
    """Where ``value`` stands in ``line`` as a whole token; a value that is a token's prefix
    (a GitHub token's ``ghp``) grows to the whole token."""
    fallback = None
    for m in re.finditer(re.escape(value), line):
        start, end = m.span()
        before = start > 0 and _TOKEN_CHAR.match(line[start - 1])
        after = end < len(line) and _TOKEN_CHAR.match(line[end])
        if not before and not after:
            return start, end
        if fallback is None:
            while start > 0 and _TOKEN_CHAR.match(line[start - 1]):
                start -= 1
            while end < len(line) and _TOKEN_CHAR.match(line[end]):
                end += 1
            fallback = (start, end)
    return fallback


def find_secrets(line: str, scan: Any) -> list[tuple[str, int, int]]:
    """``(type, start, end)`` of each secret in ``line``; a private key's span is its header."""
    found: list[tuple[str, int, int]] = []
    for secret in scan(line):
        value = secret.secret_value or ""
        if secret.type == PRIVATE_KEY:
            m = _KEY_BEGIN.search(line)
            found.append((PRIVATE_KEY, *(m.span() if m else (0, 0))))
            continue
        if secret.type in GENERIC and (
            len(value) < MIN_GENERIC_LENGTH or _entropy(value) < MIN_ENTROPY
        ):
            continue
        span = _span(line, value) if value else None
        if span and span[1] - span[0] >= 4:
            found.append((secret.type, *span))
    return sorted(set(found), key=lambda t: t[1])


def _message(kind: str, path: str) -> str:
    what = "a private key" if kind == PRIVATE_KEY else f"a secret ({kind})"
    if kind == PRIVATE_KEY and re.search(r"\.json$", path):
        what = "a private key (a service-account key file?)"
    text = f"{what} is committed; rotate it and remove it from history"
    if _TEST_PATH.search(path):
        text += " (it is under a test path: fine only if it never protected anything real)"
    return text


def scan_secrets(files: Sequence[FileDiff]) -> list[Comment]:
    """One finding per added line that holds a secret. The finding quotes no code: it is
    anchored by its number, and the secret stays out of the output."""
    comments: list[Comment] = []
    with _detector() as scan:
        for f in files:
            if f.is_binary or f.status == "deleted":
                continue
            for h in f.hunks:
                for ln in h.lines:
                    if ln.kind != "added" or ln.new_no is None:
                        continue
                    hits = find_secrets(ln.text, scan)
                    if hits:
                        kind = hits[0][0]
                        comments.append(
                            Comment(
                                path=f.path,
                                line=ln.new_no,
                                body=_message(kind, f.path),
                                severity="warning" if _TEST_PATH.search(f.path) else "error",
                                origin="secrets",
                                rule=kind,
                            )
                        )
    return comments


class Scrubber:
    """Replaces secrets by placeholders; the same secret always gets the same placeholder."""

    def __init__(self) -> None:
        self._placeholders: dict[str, str] = {}

    def _placeholder(self, value: str, kind: str) -> str:
        if value not in self._placeholders:
            self._placeholders[value] = f"[secret {len(self._placeholders) + 1} redacted: {kind}]"
        return self._placeholders[value]

    def scrub(self, text: str) -> str:
        if not text:
            return text
        text = _scrub_key_blocks(text)
        with _detector() as scan:
            lines = text.split("\n")
            for i, line in enumerate(lines):
                for kind, start, end in reversed(find_secrets(line, scan)):
                    if kind != PRIVATE_KEY:
                        line = line[:start] + self._placeholder(line[start:end], kind) + line[end:]
                lines[i] = line
        text = "\n".join(lines)
        for value, placeholder in self._placeholders.items():  # the same value, bare
            text = text.replace(value, placeholder)
        return text

    def restore(self, text: str) -> str:
        """The placeholders in ``text`` back to what they stand for (a quoted line only)."""
        for value, placeholder in self._placeholders.items():
            text = text.replace(placeholder, value)
        return text


def _scrub_key_blocks(text: str) -> str:
    """Key material between a private key's BEGIN and END lines (or to the end of the text,
    when the END is cut off) becomes a placeholder; line breaks and numbering stay."""
    out: list[str] = []
    pos = 0
    for begin in _KEY_BEGIN.finditer(text):
        if begin.start() < pos:
            continue
        end = _KEY_END.search(text, begin.end())
        stop = end.start() if end else len(text)
        out.append(text[pos : begin.end()])
        out.append(_KEY_MATERIAL.sub(KEY_PLACEHOLDER, text[begin.end() : stop]))
        pos = stop
    out.append(text[pos:])
    return "".join(out)
