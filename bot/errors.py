"""Every error Nova raises on purpose, and the exit code the CLI gives it.

    NovaError                      exit 2 unless a subclass says otherwise
    ├── UsageError                 bad flags, bad change reference            (2)
    ├── ConfigError                missing/invalid setting, unknown provider  (2)
    ├── DiffParseError             the text given as a diff is not one        (2)
    ├── SourceError                the change cannot be fetched               (2)
    │   └── RevisionNotFound       a revision the local repository lacks      (2)
    └── ServiceError               an external service failed                 (3)
        ├── HostChangeNotFound     the host has no such PR / MR / revision    (3)
        ├── ModelError             the LLM endpoint failed or timed out       (3)
        ├── ModelOutputError       the model's answer could not be used       (3)
        └── AnalyzerError          a static analyzer could not run            (3)

Errors of the libraries below are wrapped once, at the edge, with ``raise … from exc``.
Messages never contain secrets: :func:`redact` is applied to text that came from outside.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.text import without_surrogates

__all__ = [
    "AnalyzerError",
    "ConfigError",
    "DiffParseError",
    "HostChangeNotFound",
    "ModelError",
    "ModelOutputError",
    "NovaError",
    "RevisionNotFound",
    "ServiceError",
    "SourceError",
    "UsageError",
    "one_line",
    "redact",
    "redact_known",
    "register_secret",
    "register_url_secrets",
]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_SERVICE = 3


class NovaError(Exception):
    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return one_line(redact(self.message))


class UsageError(NovaError):
    pass


class ConfigError(NovaError):
    pass


class DiffParseError(NovaError):
    pass


class SourceError(NovaError):
    pass


class RevisionNotFound(SourceError):
    """The local repository has no such revision (a typo in HEAD~3, a SHA never fetched)."""


class ServiceError(NovaError):
    exit_code = EXIT_SERVICE


class HostChangeNotFound(ServiceError):
    """The service answered that the change does not exist (or the token cannot see it)."""


class ModelError(ServiceError):
    pass


class ModelOutputError(ServiceError):
    pass


class AnalyzerError(ServiceError):
    pass


_SECRET_PATTERNS = [
    re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{16,})"),
    re.compile(r"\b(github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,})"),
    re.compile(r"\b(api-[a-z0-9]{28})\b"),
]
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}")
# ``Authorization: Basic <base64>`` (git's http.extraheader as actions/checkout writes it)
_BASIC = re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+)[A-Za-z0-9+/=_\-]+")
# ``scheme://user:password@host``: the password part of URL userinfo
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]*:)[^\s/@]+@")
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")


@dataclass(frozen=True)
class _Forms:
    literal: tuple[str, ...]  # the secret and its percent-encodings (upper and lower hex)
    cores: tuple[str, ...]  # base64 characters made of the secret's bits alone


_known_secrets: dict[str, _Forms] = {}


def register_secret(value: str | None) -> None:
    """Remember a configured token so that :func:`redact` hides it verbatim, URL-encoded and
    inside base64 (``x-access-token:TOKEN`` in ``Authorization: basic …``)."""
    if value and len(value) >= 6 and value not in _known_secrets:
        _known_secrets[value] = _encoded_forms(value)


def register_url_secrets(*urls: str | None) -> None:
    """The password of a service URL (or its user part alone: a token) is a secret."""
    from urllib.parse import unquote, urlsplit

    for url in urls:
        try:
            parts = urlsplit(url or "")
            value = parts.password or parts.username
        except ValueError:  # a malformed port or IPv6 literal: nothing to take from it
            continue
        if value:
            register_secret(value)
            register_secret(unquote(value))


def _encoded_forms(secret: str) -> _Forms:
    """A secret at byte offset k (mod 3) of a base64 input always yields the same characters
    once those shared with its neighbours are left out: that core, found anywhere, marks a
    base64 run that carries the secret."""
    import base64
    from urllib.parse import quote, quote_plus

    literal = {secret}
    for encoded in (quote(secret, safe=""), quote(secret), quote_plus(secret)):
        literal |= {encoded, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)}
    raw = secret.encode("utf-8")
    cores: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        core = encoded[(4 * shift + 2) // 3 : (4 * (shift + len(raw))) // 3]
        if len(core) >= 6:
            cores |= {core, core.replace("+", "-").replace("/", "_")}  # and base64url
    # the longest first: a shorter form may be a part of a longer one
    return _Forms(tuple(sorted(literal, key=len, reverse=True)), tuple(sorted(cores)))


def _hide_base64_runs(text: str, core: str) -> str:
    """Replace every run of base64 characters that contains ``core`` (no regex: a long run
    must not cost quadratic time)."""
    out: list[str] = []
    pos = 0
    while (found := text.find(core, pos)) >= 0:
        start, end = found, found + len(core)
        while start > pos and text[start - 1] in _BASE64_CHARS:
            start -= 1
        while end < len(text) and text[end] in _BASE64_CHARS:
            end += 1
        while end < len(text) and text[end] == "=":
            end += 1
        out += [text[pos:start], "***"]
        pos = end
    return "".join(out) + text[pos:] if out else text


def redact_known(text: str) -> str:
    """Hide only the configured tokens (verbatim, URL-encoded, in base64): for prompts, where
    token-shaped test fixtures in a diff must stay as they are (the model quotes them back to
    anchor its comments). Lone surrogates become U+FFFD: what is hidden here is sent or
    written next, and a UTF-8 encoder refuses them."""
    text = without_surrogates(text)
    for forms in _known_secrets.values():
        for literal in forms.literal:
            if literal in text:
                text = text.replace(literal, "***")
        for core in forms.cores:
            if core in text:
                text = _hide_base64_runs(text, core)
    return text


def one_line(text: str) -> str:
    """``text`` on one line: a message is printed where a line that starts with ``::`` (or
    holds ``##[``) is a command to the CI runner (GitHub Actions workflow commands)."""
    if "\n" in text or "\r" in text:
        text = " ⏎ ".join(part for part in re.split(r"\r\n|\r|\n", text))
    return text.replace("##[", "## [")


def redact(text: str) -> str:
    """Hide configured tokens (also encoded), anything shaped like a well-known token, the
    credentials of an HTTP Authorization header and the password of a URL."""
    text = redact_known(text)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub("***", text)
    text = _BASIC.sub(r"\1***", _BEARER.sub(r"\1***", text))
    return _USERINFO.sub(r"\1***@", text)
