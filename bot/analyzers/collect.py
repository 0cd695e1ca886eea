"""Every analyzer's findings for a change: the built-in ones (``bot.analyzers.registry``:
ruff, oxlint or the project's ESLint, shellcheck, actionlint, hadolint), results files given
with ``--analyzer-results``, and the analyzers the repository declares (``[[analyzer]]``).

Findings are filtered the way reviewdog's ``--filter-mode`` does:

- ``added`` (default): only findings on added lines;
- ``diff_context``: on any line of a hunk (added or context);
- ``file``: anywhere in a changed file — lines outside the diff go to the summary;
- ``nofilter``: also other files of the repository (to the summary).

What is left out is counted in one note per analyzer, never placed elsewhere. A file
counts as covered when a built-in analyzer checked it, or when a results file or declared
analyzer covers its extension: those of every file it names (eslint and SARIF list clean
files too) plus the ``extensions`` it declares.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from bot.analyzers.formats import parse_results, read_results, split_spec
from bot.analyzers.paths import Roots, repo_relative
from bot.analyzers.report import Finding, Report, ResultsError, apply_fix
from bot.change import Change, Comment, FileDiff
from bot.errors import one_line, redact

if TYPE_CHECKING:
    from bot.analyzers.declared import DeclaredAnalyzer
    from bot.analyzers.registry import Ran
    from bot.hosts.base import TreeReader
    from bot.review.settings import ReviewSettings

__all__ = ["FILTER_MODES", "Analysis", "analyze", "coverage_note", "extension"]

FILTER_MODES = ("added", "diff_context", "file", "nofilter")


@dataclass
class Analysis:
    comments: list[Comment] = field(default_factory=list)
    status: list[str] = field(default_factory=list)  # one short line per analyzer
    covered: set[str] = field(default_factory=set)  # extensions or paths an analyzer covered


@dataclass(frozen=True)
class _Source:
    name: str  # the origin of its comments ("" → the tool the file names)
    reports: list[Report]
    base: str = ""  # the repository-relative directory relative paths start from
    extensions: tuple[str, ...] = ()


def extension(path: str) -> str:
    """``.ts`` for ``web/a.ts``; '' for a file without one (``Dockerfile``)."""
    return PurePosixPath(path).suffix.lower()


def analyze(
    settings: ReviewSettings,
    change: Change,
    tree: TreeReader | None,
    root: Path | None,
    notes: list[str],
    base: TreeReader | None = None,
) -> Analysis:
    out = Analysis()
    running = settings.analyzers != "none"
    with ThreadPoolExecutor(max_workers=1) as pool:  # declared analyzers run beside ours
        declared = pool.submit(
            _declared, settings.declared_analyzers if running else (), tree, root
        )
        roots = Roots(root)
        sources = _result_files(settings.analyzer_results, notes, out)
        own = _project_owned(sources, settings.declared_analyzers if running else (), roots)
        sources = _builtin(settings, change, tree, base, root, own, notes, out) + sources
        found, declared_notes, status = declared.result()
    sources += found
    notes += declared_notes
    out.status += status
    for source in sources:
        _take(source, change, roots, settings.filter_mode, notes, out)
    out.comments = _severities(out.comments, settings.analyzer_severity)
    note = coverage_note(change.files, out.covered)
    if note and (running or sources):
        notes.append(note)
    return out


def _builtin(
    settings: ReviewSettings,
    change: Change,
    tree: TreeReader | None,
    base: TreeReader | None,
    root: Path | None,
    own: Callable[[str], bool],
    notes: list[str],
    out: Analysis,
) -> list[_Source]:
    """The built-in analyzers (``bot.analyzers.registry``) on the change's files: the
    linters' reports to be filtered like any results file, the checks' findings kept to
    the added lines (and, for a check that says so, in files the change did not touch)."""
    from bot.analyzers.registry import run_builtin, selected

    chosen = selected(settings.analyzers, settings.analyzers_off)
    if not chosen:
        return []
    ran = run_builtin(chosen, change, tree, base, root, settings.analyzer_timeout, own)
    notes += ran.notes
    out.status += ran.status
    out.covered |= ran.covered
    out.comments += _builtin_comments(ran, change)
    return [_Source(name, reports) for name, reports in ran.sources]


def _builtin_comments(ran: Ran, change: Change) -> list[Comment]:
    """The checks' findings on added lines, and (a check with ``outside``) in files the
    change did not touch: the anchor sends those to the summary."""
    allowed = _allowed("added", {f.path: f for f in change.files}) or {}
    kept = []
    for c in ran.comments:
        lines = allowed.get(c.path)
        if (lines is not None and c.line in lines) or (lines is None and c.origin in ran.outside):
            kept.append(c)
    return kept


def _project_owned(
    sources: list[_Source], declared: tuple[DeclaredAnalyzer, ...], roots: Roots
) -> Callable[[str], bool]:
    """Whether the project's own linters check a path: a results file names it, or a
    declared analyzer covers its extension. The default linters leave those to them."""
    named = {
        rel
        for source in sources
        for report in source.reports
        for path in report.paths | {f.path for f in report.findings}
        if (rel := repo_relative(path, roots, source.base)) is not None
    }
    extensions = {e for a in declared for e in a.extensions}
    return lambda path: path in named or extension(path) in extensions


def _severities(comments: list[Comment], wanted: tuple[tuple[str, str], ...]) -> list[Comment]:
    """Each analyzer's findings at the severity the settings give it (NOVA_ANALYZER_SEVERITY)."""
    if not wanted:
        return comments
    by = dict(wanted)
    return [
        replace(c, severity=by[c.origin]) if c.origin in by else c  # type: ignore[arg-type]
        for c in comments
    ]


def _result_files(specs: tuple[str, ...], notes: list[str], out: Analysis) -> list[_Source]:
    sources = []
    for spec in specs:
        name, fmt = split_spec(spec)
        try:
            fmt, reports = read_results(Path(name), fmt)
        except ResultsError as exc:
            notes.append(f"analyzer results {name}: {one_line(redact(str(exc)))}; not used")
            out.status.append(f"{name}: not read")
            continue
        sources.append(_Source("", reports))
    return sources


def _declared(
    analyzers: tuple[DeclaredAnalyzer, ...], tree: TreeReader | None, root: Path | None
) -> tuple[list[_Source], list[str], list[str]]:
    """(sources, notes, status lines) of the repository's [[analyzer]]s."""
    from bot.analyzers.declared import run_declared
    from bot.hosts.base import LocalTree

    sources: list[_Source] = []
    notes: list[str] = []
    status: list[str] = []
    if not analyzers:
        return sources, notes, status
    names = ", ".join(a.name for a in analyzers)
    if not isinstance(tree, LocalTree) or root is None:
        notes.append(
            f"the analyzers declared in .nova.toml ({names}) did not run: they run "
            "only in a local checkout of the change"
        )
        return sources, notes, status
    for run in run_declared(analyzers, root):
        analyzer = run.analyzer
        if run.failure is not None:
            notes.append(f"analyzer {analyzer.name} failed: {one_line(run.failure)}")
            status.append(f"{analyzer.name}: failed")
            continue
        try:
            _, reports = parse_results(run.output, analyzer.format, analyzer.name)
        except ResultsError as exc:
            notes.append(
                f"analyzer {analyzer.name}: its output could not be read: "
                f"{one_line(redact(str(exc)))}"
            )
            status.append(f"{analyzer.name}: unreadable output")
            continue
        sources.append(_Source(analyzer.name, reports, analyzer.workdir, analyzer.extensions))
    return sources, notes, status


def _lines(f: FileDiff, kinds: tuple[str, ...]) -> set[int]:
    return {
        ln.new_no for h in f.hunks for ln in h.lines if ln.kind in kinds and ln.new_no is not None
    }


def _allowed(mode: str, files: dict[str, FileDiff]) -> dict[str, set[int]] | None:
    """The lines each changed file may keep findings on; None: any line (modes file and
    nofilter)."""
    if mode in ("file", "nofilter"):
        return None
    kinds = ("added",) if mode == "added" else ("added", "context")
    return {path: _lines(f, kinds) for path, f in files.items()}


def _take(
    source: _Source, change: Change, roots: Roots, mode: str, notes: list[str], out: Analysis
) -> None:
    files = {f.path: f for f in change.files if f.status != "deleted" and not f.is_binary}
    allowed = _allowed(mode, files)
    # what another analyzer already said (ruff's F401 and the project's flake8's) is kept once
    said = {(c.path, c.line, c.rule) for c in out.comments if c.rule and c.line}
    for report in source.reports:
        name = (source.name or report.tool or "analyzer").strip().lower()
        dropped: Counter[str] = Counter()
        outside: str | None = None
        kept = 0
        for path in report.paths:
            rel = repo_relative(path, roots, source.base)
            if rel is not None:
                out.covered.add(extension(rel))
        out.covered.update(source.extensions)
        known: dict[str, str | None] = {}  # a tool names the same file many times
        for finding in report.findings:
            if finding.path not in known:
                known[finding.path] = repo_relative(finding.path, roots, source.base)
            rel = known[finding.path]
            if rel is None:
                dropped["outside"] += 1
                outside = outside or finding.path
                continue
            target = files.get(rel)
            if target is None and mode != "nofilter":
                dropped["other"] += 1
                continue
            if target is not None and allowed is not None and finding.line not in allowed[rel]:
                dropped["lines"] += 1
                continue
            if (rel, finding.line, finding.rule) in said:
                dropped["same"] += 1
                continue
            kept += 1
            out.comments.append(_comment(finding, rel, name, target))
        out.status.append(f"{name}: {kept} findings kept")
        if dropped:
            notes.append(_dropped_note(name, kept, dropped, mode, outside))


def _comment(finding: Finding, path: str, origin: str, target: FileDiff | None) -> Comment:
    message = redact(finding.message)  # a secret scanner may quote the secret
    suggestion = None
    if finding.fix is not None and target is not None and finding.end_line is None:
        text = next(
            (ln.text for h in target.hunks for ln in h.lines if ln.new_no == finding.line), None
        )
        suggestion = apply_fix(text, finding.fix) if text is not None else None
    return Comment(
        path=path,
        line=finding.line,
        end_line=finding.end_line,
        body=f"{finding.rule}: {message}" if finding.rule else message,
        severity=finding.severity,
        origin=origin,
        rule=finding.rule,
        url=finding.url,
        suggestion=suggestion,
    )


def _dropped_note(
    name: str, kept: int, dropped: Counter[str], mode: str, outside: str | None
) -> str:
    parts = []
    if dropped["lines"]:
        where = {"added": "not on added lines", "diff_context": "outside the diff's hunks"}.get(
            mode, "outside the diff"
        )
        parts.append(f"{dropped['lines']} {where} (filter mode {mode})")
    if dropped["other"]:
        parts.append(f"{dropped['other']} in files this review does not cover")
    if dropped["outside"]:
        parts.append(
            f"{dropped['outside']} on paths outside the repository "
            f"(e.g. {one_line(redact(outside or ''))[:120]}) — paths must be "
            "relative to the repository or under its root"
        )
    if dropped["same"]:
        parts.append(f"{dropped['same']} another analyzer reported too (same line and code)")
    return f"{name}: {kept} finding(s) used; left out: {'; '.join(parts)}"


def coverage_note(files: tuple[FileDiff, ...], covered: set[str]) -> str | None:
    """``3 .ts files, 1 .go file: no analyzer configured`` for the changed files no
    analyzer covered (added or modified text files)."""
    counts: Counter[str] = Counter(
        extension(f.path)
        for f in files
        if f.status != "deleted"
        and not f.is_binary
        and f.added_count
        and extension(f.path) not in covered
        and f.path not in covered
    )
    if not counts:
        return None
    groups = []
    for ext, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        plural = "s" if n > 1 else ""
        groups.append(
            f"{n} {ext} file{plural}" if ext else f"{n} file{plural} without an extension"
        )
    return (
        f"{', '.join(groups)}: no analyzer configured (give --analyzer-results or "
        "declare an [[analyzer]] in .nova.toml)"
    )
