"""Every error Nova raises on purpose, and the exit code the CLI gives it.

    NovaError                      exit 2 unless a subclass says otherwise
    ├── UsageError                 bad flags, bad change reference            (2)
    ├── ConfigError                missing/invalid setting, unknown provider  (2)
    ├── DiffParseError             the text given as a diff is not one        (2)
    ├── SourceError                the change cannot be fetched               (2)
    │   └── ChangeNotFound         unknown revision / ref / PR                (2)
    └── ServiceError               an external service failed                 (3)
        ├── RemoteChangeNotFound   GitHub / Conduit: no such PR or revision   (3)
        ├── ModelError             the LLM endpoint failed or timed out       (3)
        ├── ModelOutputError       the model's answer could not be used       (3)
        └── AnalyzerError          a static analyzer could not run            (3)

Errors of the libraries below are wrapped once, at the edge, with ``raise … from exc``.
Messages never contain secrets: :func:`redact` is applied to text that came from outside.
"""

from __future__ import annotations

import re

__all__ = [
    "AnalyzerError",
    "ChangeNotFound",
    "ConfigError",
    "DiffParseError",
    "ModelError",
    "ModelOutputError",
    "NovaError",
    "RemoteChangeNotFound",
    "ServiceError",
    "SourceError",
    "UsageError",
    "redact",
    "redact_known",
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
        return redact(self.message)


class UsageError(NovaError):
    pass


class ConfigError(NovaError):
    pass


class DiffParseError(NovaError):
    pass


class SourceError(NovaError):
    pass


class ChangeNotFound(SourceError):
    pass


class ServiceError(NovaError):
    exit_code = EXIT_SERVICE


class RemoteChangeNotFound(ServiceError):
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
_known_secrets: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a configured token so that :func:`redact` hides it verbatim."""
    if value and len(value) >= 6:
        _known_secrets.add(value)


def redact_known(text: str) -> str:
    """Hide only the configured tokens: for prompts, where token-shaped test fixtures in a
    diff must stay as they are (the model quotes them back to anchor its comments)."""
    for secret in _known_secrets:
        if secret in text:
            text = text.replace(secret, "***")
    return text


def redact(text: str) -> str:
    """Hide configured tokens and anything shaped like a well-known token."""
    text = redact_known(text)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub("***", text)
    return _BEARER.sub(r"\1***", text)
