"""Which changed files reach the model and the analyzers, and why the others do not.

The one owner of exclusion. A file is skipped, with its reason listed in the summary, when

1. it cannot be reviewed: binary, deleted, or no content change (a pure rename, a mode);
2. a built-in pattern of a kind no reviewer reads matches it (``DEFAULT_EXCLUDE``: lockfiles,
   minified or bundled files, generated code, package metadata, vendored trees, snapshots,
   certificates and keys);
3. a pattern of the ``exclude`` setting (environment or ``.nova.toml``) matches it. These
   ADD to the built-in ones; ``!pattern`` re-includes, whatever excluded the file;
4. its content says so: a generated-code marker (``@generated``, ``DO NOT EDIT``) in its
   first lines, or binary-ish text among the added lines (very long lines, base64 blobs).

Patterns are gitignore-style (``pathspec``): ``vendor/`` matches a directory at any depth,
``/build/`` only at the root, ``*.key`` any file of that name anywhere, the last matching
pattern decides. The secret analyzer is the exception: it reads every text file's added lines,
excluded or not, since keys are excluded exactly because they are not code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.change import FileDiff

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["DEFAULT_EXCLUDE", "Selection", "head_lines", "select_files", "skip_notes"]

# kind -> gitignore-style patterns; the kind is the reason shown in the summary
DEFAULT_EXCLUDE: dict[str, tuple[str, ...]] = {
    "lockfile": (
        "*.lock",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "pnpm-lock.yaml",
        "go.sum",
        "gradle.lockfile",
        "packages.lock.json",
        "bun.lockb",
        "*.lockfile",
    ),
    "minified or bundled": (
        "*.min.js",
        "*.min.mjs",
        "*.min.css",
        "*.map",
        "*.bundle.js",
        "*.chunk.js",
        "*-bundle.js",
    ),
    "generated code": (
        "*_pb2.py",
        "*_pb2.pyi",
        "*_pb2_grpc.py",
        "*.pb.go",
        "*.pb.cc",
        "*.pb.h",
        "*.pb.swift",
        "*.g.dart",
        "*.freezed.dart",
    ),
    "package metadata": ("*.egg-info/", "*.dist-info/", "PKG-INFO"),
    "vendored": (
        "vendor/",
        "vendored/",
        "third_party/",
        "third-party/",
        "node_modules/",
        "bower_components/",
        "dist/",
    ),
    "snapshot": ("*.snap", "__snapshots__/"),
    "certificate or key": (
        "*.pem",
        "*.key",
        "*.crt",
        "*.cer",
        "*.der",
        "*.csr",
        "*.srl",
        "*.p7b",
        "*.p12",
        "*.pfx",
        "*.jks",
        "*.keystore",
        "*.gpg",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
    ),
}

GENERATED_MARKERS = ("@generated", "DO NOT EDIT")
MARKER_LINES = 5  # a generated-code marker counts in the file's first lines only
LONG_LINE = 1_000  # an added line this long is data, not code (minified, inlined blobs)
_BASE64_LINE = re.compile(r"^[A-Za-z0-9+/]{40,}={0,2}$")
MIN_BASE64_LINES = 8  # ... a base64 blob: at least this many lines, half the added ones


@dataclass
class Selection:
    kept: list[FileDiff] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def _compile(patterns: Sequence[str]) -> GitIgnoreSpec:
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(list(patterns))


class _Rules:
    """The built-in patterns, then the user's: the last pattern that matches decides."""

    def __init__(self, user: Sequence[str]) -> None:
        self.labels: list[str] = []
        patterns: list[str] = []
        for kind, kind_patterns in DEFAULT_EXCLUDE.items():
            for p in kind_patterns:
                patterns.append(p)
                self.labels.append(f"{kind} ({p})")
        for p in user:
            patterns.append(p)
            self.labels.append(f"exclude setting ({p})")
        self.first_user = len(patterns) - len(user)
        self.spec = _compile(patterns)

    def check(self, path: str) -> tuple[str | None, bool]:
        """(reason when excluded, True when a user's ``!pattern`` re-included it)."""
        result = self.spec.check_file(path)
        if result.index is None:
            return None, False
        if result.include:  # GitIgnoreSpec: "include" means the pattern matched to exclude
            return self.labels[result.index], False
        return None, result.index >= self.first_user


def head_lines(f: FileDiff, read: Callable[[str], str | None] | None, count: int) -> list[str]:
    """The first ``count`` lines of the file at the head: from the diff when its first hunk
    starts at line 1, else read from the tree (when there is one)."""
    if f.hunks and f.hunks[0].new_start <= 1:
        return [ln.text for ln in f.hunks[0].lines if ln.new_no is not None][:count]
    if read is None:
        return []
    text = read(f.path)
    return text.split("\n", count)[:count] if text else []


def _content_reason(f: FileDiff, first: Iterable[str]) -> str | None:
    for no, line in enumerate(first, 1):
        marker = next((m for m in GENERATED_MARKERS if m in line), None)
        if marker:
            return f"generated code (marker {marker!r} in line {no})"
    added = [ln.text for h in f.hunks for ln in h.lines if ln.kind == "added"]
    longest = max((len(t) for t in added), default=0)
    if longest > LONG_LINE:
        return f"binary-ish text (a line of {longest:,} characters)"
    blob = sum(1 for t in added if _BASE64_LINE.match(t.strip()))
    if blob >= MIN_BASE64_LINES and blob * 2 >= len(added):
        return f"binary-ish text ({blob} base64 lines)"
    return None


def _structural_reason(f: FileDiff) -> str | None:
    if f.is_binary:
        return "binary"
    if f.status == "deleted":
        return "deleted"
    if not f.hunks:
        return f"{f.status}, no content change"
    return None


def select_files(
    files: Sequence[FileDiff],
    exclude: Sequence[str] = (),
    read: Callable[[str], str | None] | None = None,
) -> Selection:
    """Split ``files`` into those to review and those skipped (with the reason). ``read``
    gives a head file's text, for the generated-code marker of a file whose first lines are
    not in the diff; without it only the diff is looked at."""
    rules = _Rules(exclude)
    out = Selection()
    for f in files:
        reason = _structural_reason(f)
        if reason is None:
            matched, reincluded = rules.check(f.path)
            reason = f"excluded: {matched}" if matched else None
            if reason is None and not reincluded:
                content = _content_reason(f, head_lines(f, read, MARKER_LINES))
                reason = f"excluded: {content}" if content else None
        if reason is None:
            out.kept.append(f)
        else:
            out.skipped.append((f.path, reason))
    return out


def skip_notes(skipped: Sequence[tuple[str, str]]) -> list[str]:
    """One summary note per reason: ``skipped a.key, b.key: excluded: certificate or key``."""
    by_reason: dict[str, list[str]] = {}
    for path, reason in skipped:
        by_reason.setdefault(reason, []).append(path)
    return [f"skipped {', '.join(paths)}: {reason}" for reason, paths in by_reason.items()]
