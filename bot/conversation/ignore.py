"""``[[ignore]]`` entries of the base revision's ``.nova.toml``: findings the team decided
to ignore, on the record in the repository (``@nova dismiss always`` answers one)::

    [[ignore]]
    path = "legacy/**"              # a glob (fnmatch: * also crosses /); optional
    rule = "E501"                   # the analyzer's rule; optional
    fingerprint = "0123456789abcdef"  # one finding (as in Nova's comment); optional
    reason = "generated code"       # optional, shown in the summary

An entry names at least one of ``path``, ``rule`` and ``fingerprint``; a finding is ignored
when it matches every key its entry names. Ignored findings leave the gate, are never posted,
and are counted and listed in the summary (``ReviewResult.dismissed``, kind ``ignored``).
Read from the base revision only: a change cannot ignore its own findings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from bot.errors import ConfigError
from bot.report.fingerprint import fingerprint, line_ids
from bot.review.result import Dismissal, ReviewResult

__all__ = ["IgnoreRule", "apply_ignores", "parse_ignores"]

MAX_RULES = 500
_KEYS = ("path", "rule", "fingerprint", "reason")


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    path: str = ""
    rule: str = ""
    fingerprint: str = ""
    reason: str = ""


def parse_ignores(data: Any, where: str) -> tuple[IgnoreRule, ...]:
    """The ``[[ignore]]`` tables of a ``.nova.toml`` (untrusted input), validated."""
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise ConfigError(f"{where}: [[ignore]] must be tables (a list of them)")
    if len(data) > MAX_RULES:
        raise ConfigError(f"{where}: at most {MAX_RULES} [[ignore]] entries")
    rules = []
    for n, entry in enumerate(data, 1):
        unknown = sorted(set(entry) - set(_KEYS))
        if unknown:
            raise ConfigError(
                f"{where}: [[ignore]] #{n}: unknown keys {', '.join(unknown)}; "
                f"known: {', '.join(_KEYS)}"
            )
        if not all(isinstance(v, str) for v in entry.values()):
            raise ConfigError(f"{where}: [[ignore]] #{n}: every value must be a string")
        rule = IgnoreRule(**{k: v.strip() for k, v in entry.items()})
        if not (rule.path or rule.rule or rule.fingerprint):
            raise ConfigError(
                f"{where}: [[ignore]] #{n} names no path, rule or fingerprint: it would "
                "ignore every finding"
            )
        rules.append(rule)
    return tuple(rules)


def _matches(rule: IgnoreRule, path: str, code: str | None, fp: str) -> bool:
    return (
        (not rule.path or fnmatchcase(path, rule.path))
        and (not rule.rule or rule.rule == (code or ""))
        and (not rule.fingerprint or rule.fingerprint == fp)
    )


def apply_ignores(result: ReviewResult, rules: Sequence[IgnoreRule]) -> list[Dismissal]:
    """Move the findings an entry matches to ``result.dismissed`` (kind ``ignored``)."""
    if not rules:
        return []
    ids = line_ids(result.change)
    keep, added = [], []
    for p in result.placements:
        fp = fingerprint(p, *ids.get((p.path, p.line), ("", 0))) if p.placed else ""
        path = p.path or p.comment.path or ""
        hit = next((r for r in rules if _matches(r, path, p.comment.rule, fp)), None)
        if hit is None:
            keep.append(p)
            continue
        added.append(Dismissal(p, "ignored", ".nova.toml", hit.reason, fingerprint=fp))
    result.placements = keep
    result.dismissed += added
    if added:
        result.notes.append(
            f"{len(added)} finding(s) ignored by [[ignore]] in the base revision's .nova.toml "
            "(listed, not counted)"
        )
    return added
