"""Line matching for code search (the review agent's ``search_code``).

A fixed string by default; a regular expression only when asked, and then run by RE2, whose
time is linear in the text searched. Backtracking engines (Python's ``re``, ``git grep -E``)
take exponential time on patterns such as ``(x*)*\\1\\1y$``, and the pattern comes from the
model, which reads untrusted diffs. RE2 refuses what it cannot run in linear time
(backreferences, lookaround): the caller gets a ``PatternError`` that says so.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["MAX_PATTERN_CHARS", "PatternError", "line_matcher"]

MAX_PATTERN_CHARS = 1000


class PatternError(ValueError):
    """A search pattern that cannot be run (too long, or not RE2 syntax)."""


def line_matcher(pattern: str, *, regex: bool) -> Callable[[str], bool]:
    """A predicate telling whether one line matches ``pattern``."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"the pattern is longer than {MAX_PATTERN_CHARS} characters")
    if not regex:
        return lambda line: pattern in line
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print the (untrusted) pattern on stderr
    options.never_capture = True
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", errors="replace")
        raise PatternError(
            f"the regex cannot be run ({detail}): the search engine (RE2) runs in linear time "
            "and has no backreferences or lookaround; search a fixed string instead"
        ) from exc
    return lambda line: compiled.search(line) is not None
