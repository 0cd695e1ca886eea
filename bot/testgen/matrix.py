"""The test matrix: changed functions × existing tests × changed lines already covered."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field

from bot.change import Change, FileDiff, Line
from bot.testgen.frameworks import Framework
from bot.testgen.moddata import DataChange, class_data_change, covered_lines, data_change
from bot.testgen.runners import Lines, Runner
from bot.testgen.workspace import Workspace

__all__ = [
    "Target",
    "build_matrix",
    "comment_lines",
    "covered_count",
    "measure_baseline",
    "stamps_masked",
    "version_stamps",
    "versions_masked",
]

_KEYWORDS = {
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "function",
    "else",
    "do",
    "with",
    "typeof",
    "new",
}
_SYMBOL = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\(\w+\))?\s+)?(?:async\s+)?"
    r"(?:function\*?|def|func|fn|class)\s+(?P<decl>[\w$]+)"
    # const name = (...) => / function (...)
    r"|^\s*(?:export\s+)?(?:const|let|var)\s+(?P<bound>[\w$]+)\s*=\s*(?:async\s*)?"
    r"(?:function\b|\([^)]*\)\s*=>|[\w$]+\s*=>)"
    # a method in a class body: name(...) {
    r"|^\s+(?:static\s+)?(?:async\s+)?(?:get\s+|set\s+)?(?P<method>[\w$]+)\s*\([^;]*\)\s*\{"
)


def _symbol(row: str) -> str | None:
    m = _SYMBOL.match(row)
    if m is None:
        return None
    name = m.group("decl") or m.group("bound") or m.group("method")
    return None if name in _KEYWORDS else name


@dataclass
class Target:
    path: str
    qualname: str
    kind: str  # added | modified
    lines: list[int]  # changed (added) lines inside the target
    existing_tests: list[str] = field(default_factory=list)
    uncovered: list[int] | None = None  # None: coverage not measured
    data: DataChange | None = None  # a changed top-level ("<module>") piece: what reads it

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    def planned(self) -> str:
        """The test cases this target calls for."""
        what = "the new code" if self.kind == "added" else "the changed behaviour"
        if self.uncovered:
            return f"run lines {_ranges(self.uncovered)} (no test runs them) and pin {what}"
        if not self.existing_tests:
            return f"pin {what} (no existing test mentions it)"
        return f"pin {what}: existing tests run it but may not check it"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "target": f"{self.path}::{self.qualname}",
            "change_kind": self.kind,
            "changed_lines": self.lines,
            "existing_tests": self.existing_tests,
            "uncovered_changed_lines": self.uncovered,
            "planned": self.planned(),
        }
        if self.data and self.data.readers:
            out["read_by"] = self.data.read_by()
        return out

    def ran(self, executed: Lines) -> list[int]:
        """The changed lines a run executed: for a top-level piece, by the rule of
        ``moddata`` (a changed table counts when a function reading it ran; import alone
        never counts)."""
        if self.data is not None:
            return covered_lines(self.data, executed)
        mine = executed.get(self.path, set())
        return [n for n in self.lines if n in mine]


def _ranges(lines: list[int]) -> str:
    out, start = [], None
    for i, n in enumerate(lines):
        if start is None:
            start = n
        if i + 1 == len(lines) or lines[i + 1] != n + 1:
            out.append(f"{start}" if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)


def _python_symbols(text: str) -> list[tuple[str, int, int, bool]]:
    """(qualname, first line, last line, is a class) of every function and class,
    outermost first."""
    out: list[tuple[str, int, int, bool]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qual = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                out.append(
                    (qual, first, child.end_lineno or child.lineno, isinstance(child, ast.ClassDef))
                )
                walk(child, qual + ".")

    walk(ast.parse(text), "")
    return out


def _python_targets(f: FileDiff, added: list[int], text: str, parent: str | None) -> list[Target]:
    try:
        symbols = _python_symbols(text)
    except SyntaxError:
        return [Target(f.path, "<module>", "modified", added)]
    try:
        before = {sym[0] for sym in _python_symbols(parent)} if parent else set()
    except SyntaxError:
        before = set()
    by_target: dict[str, list[int]] = {}
    for n in added:
        holding = [(q, is_class) for q, a, b, is_class in symbols if a <= n <= b]
        holders = [q for q, is_class in holding if not is_class] or [q for q, _ in holding]
        by_target.setdefault(holders[-1] if holders else "<module>", []).append(n)
    return [
        Target(f.path, q, "modified" if q in before else "added", lines)
        for q, lines in by_target.items()
    ]


def _scanned_targets(f: FileDiff, added: list[int], text: str, parent: str | None) -> list[Target]:
    """Other languages: the nearest symbol declared above each changed line (a light scan,
    not a parser); "added" when the parent declared no symbol of that name."""
    rows = text.split("\n")
    before = {s for s in map(_symbol, (parent or "").split("\n")) if s}
    by_target: dict[str, list[int]] = {}
    for n in added:
        name = "<file>"
        for k in range(min(n, len(rows)) - 1, -1, -1):
            found = _symbol(rows[k])
            if found:
                name = found
                break
        by_target.setdefault(name, []).append(n)
    return [
        Target(f.path, q, "modified" if q in before or q == "<file>" else "added", lines)
        for q, lines in by_target.items()
    ]


# a release stamps its number (and its commit, its date) into the source: a changed line
# that differs from the line it replaces only in such tokens, next to the word "version",
# is no behaviour a test should pin
_VERSION_NUMBER = re.compile(
    r"\bv?\d+(?:\.\d+)+(?:[-.+]?(?:a|b|c|rc|dev|post|alpha|beta|final)?\d*)*\b"
)
_STAMP_TOKENS = (
    re.compile(
        r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    ),
    re.compile(r"\b[0-9a-f]{7,40}\b"),
    _VERSION_NUMBER,
)
# version = (2, 7, 1): a tuple of two to four numbers, only beside the word itself
_STAMP_TUPLE = re.compile(r"\(\s*\d+(?:\s*,\s*\d+){1,3}\s*,?\s*\)")
# "version", "revision", or a number written as one (v2.7.1)
_STAMP_WORD = re.compile(r"version|revision|\bv\d+(?:\.\d+)+", re.IGNORECASE)


def stamps_masked(text: str) -> str:
    """``text`` with version numbers, commit hashes and dates masked: two lines (or two
    values) equal so differ only in what a release stamps."""
    for pattern in _STAMP_TOKENS:
        text = pattern.sub("#", text)
    return _STAMP_TUPLE.sub("#", text) if _STAMP_WORD.search(text) else text


def versions_masked(text: str) -> str:
    """``text`` with only its version numbers masked (``'lib/1.2'`` -> ``'lib/#'``): a
    value is compared so, since a date or a tuple in a value is behaviour."""
    return _VERSION_NUMBER.sub("#", text)


_CODING = re.compile(r"coding[:=]")


def comment_lines(source: str) -> set[int]:
    """The lines of a Python module that hold only a comment (a coding declaration is
    not one: it changes how the file reads). Empty when the module does not tokenize."""
    code: set[int] = set()
    comments: set[int] = set()
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                if not (tok.start[0] <= 2 and _CODING.search(tok.string)):
                    comments.add(tok.start[0])
            elif tok.type not in skip and tok.type != tokenize.ENDMARKER:
                code.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return set()
    return comments - code


def version_stamps(f: FileDiff) -> set[int]:
    """The added lines of ``f`` that only stamp a release. In a run of removed lines
    followed by as many added ones, an added line is a stamp when it equals the line it
    replaces once version numbers, commit hashes and dates are masked, and "version" or
    "revision" is on that line (``__version__ = "1.2"``) -- or every line of the run is
    alike so and the word is in the run or the file's name (versioneer's JSON block)."""
    named = bool(_STAMP_WORD.search(f.path.rsplit("/", 1)[-1]))
    stamps: set[int] = set()
    for h in f.hunks:
        runs: list[tuple[list[str], list[Line]]] = []
        for ln in h.lines:
            if ln.kind == "removed":
                if not runs or runs[-1][1]:
                    runs.append(([], []))
                runs[-1][0].append(ln.text)
            elif ln.kind == "added":
                if not runs:
                    runs.append(([], []))
                runs[-1][1].append(ln)
            else:
                runs.append(([], []))
        for removed, added in runs:
            if not removed or len(removed) != len(added):
                continue
            pairs = zip(removed, added, strict=True)
            same = [stamps_masked(t) == stamps_masked(a.text) for t, a in pairs]
            whole = all(same) and (named or any(_STAMP_WORD.search(t) for t in removed))
            stamps.update(
                a.new_no
                for t, a, alike in zip(removed, added, same, strict=True)
                if alike and a.new_no is not None and (whole or _STAMP_WORD.search(t))
            )
    return stamps


def build_matrix(change: Change, ws: Workspace, fw: Framework | None) -> list[Target]:
    targets: list[Target] = []
    for f in change.files:
        if f.is_binary or f.status == "deleted" or (fw and fw.is_test_name(f.path)):
            continue
        stamps = version_stamps(f)
        added = [
            ln.new_no
            for h in f.hunks
            for ln in h.lines
            if ln.kind == "added"
            and ln.new_no is not None
            and ln.text.strip()
            and ln.new_no not in stamps
        ]
        text = ws.read(f.path)
        if text is not None and f.path.endswith(".py"):
            remarks = comment_lines(text)  # a comment is no behaviour a test can pin
            added = [n for n in added if n not in remarks]
        if not added or text is None:
            continue
        parent = (
            ws.parent_text(f.old_path or f.path, change.base_ref)
            if change.base_ref and f.status != "added"
            else None
        )
        if f.path.endswith(".py"):
            targets += _python_targets(f, added, text, parent)
        else:
            targets += _scanned_targets(f, added, text, parent)
    _data_changes(change, targets, ws, fw)
    _existing_tests(targets, ws, fw)
    return targets


def _data_changes(
    change: Change, targets: list[Target], ws: Workspace, fw: Framework | None
) -> None:
    """For each changed top-level piece of a Python module, what it binds and which
    functions (of the module, and of the package's modules importing it) read it."""
    files: dict[str, str] = {}

    def package_files() -> dict[str, str]:
        if not files:
            for p in ws.files():
                if p.endswith(".py") and not (fw and fw.is_test_name(p)):
                    files[p] = ws.read(p) or ""
        return files

    diffs = {f.path: f for f in change.files}
    for t in targets:
        source = ws.read(t.path) if t.path.endswith(".py") else None
        if source is None:
            continue
        if t.qualname == "<module>":
            t.data = data_change(t.path, source, t.lines, package_files, _replaced(diffs[t.path]))
        else:  # a class body's table, outside its methods
            t.data = class_data_change(
                t.path, source, t.qualname, t.lines, _replaced(diffs[t.path])
            )


def _replaced(f: FileDiff) -> list[tuple[set[int], list[str]]]:
    """Per hunk: its added lines and the text of the lines it removed (what a changed
    entry was)."""
    return [
        (
            {ln.new_no for ln in h.lines if ln.kind == "added" and ln.new_no is not None},
            [ln.text for ln in h.lines if ln.kind == "removed"],
        )
        for h in f.hunks
    ]


def _existing_tests(targets: list[Target], ws: Workspace, fw: Framework | None) -> None:
    if fw is None:
        return
    tests = [p for p in ws.files() if fw.is_test_name(p)]
    texts = {p: ws.read(p) or "" for p in tests}
    for t in targets:
        names = [t.name] if not t.name.startswith("<") else []
        if t.data:  # the tests of what reads a changed table
            names += sorted(
                {*t.data.bindings, *(e.qualname.split(".")[-1] for _p, e in t.data.entries)}
            )
        if not names:
            continue
        word = re.compile(rf"\b(?:{'|'.join(map(re.escape, names))})\b")
        t.existing_tests = [p for p, text in texts.items() if word.search(text)]


def covered_count(targets: list[Target], executed: Lines) -> int:
    """Changed lines that ran."""
    return sum(len(t.ran(executed)) for t in targets)


BASELINE_SECONDS = 30.0  # the existing tests under coverage: the job has two minutes


def measure_baseline(
    targets: list[Target], ws: Workspace, runner: Runner, seconds: float = BASELINE_SECONDS
) -> tuple[str | None, int | None]:
    """Fill ``uncovered`` from one coverage run of the existing tests that mention a
    changed name (the whole suite when none does: a big suite is not run under coverage
    for changes its other files never name). Returns (a note when it could not, the
    number of changed lines those tests run). No test starts after ``seconds``."""
    mentioning = sorted({p for t in targets for p in t.existing_tests})
    # a test file that no longer imports (an old test of a removed name) must not stop
    # the others from running
    keep_going = ["--continue-on-collection-errors"] if runner.language == "python" else []
    measured = runner.line_coverage(ws, [*keep_going, *mentioning], run_seconds=seconds)
    if measured is None:
        why = f": {runner.coverage_failure}" if runner.coverage_failure else ""
        return f"the existing suite could not be run under coverage{why}", None
    stopped = (
        f"the existing tests were stopped after {seconds:g} s under coverage: "
        "the changed lines they run may be more than those counted"
        if runner.stopped
        else None
    )
    executed, missing = measured
    if not executed:
        # nothing recorded is a failed measurement, not a suite that runs no changed line
        why = f" ({runner.coverage_failure})" if runner.coverage_failure else ""
        return (
            f"coverage of the existing tests came back empty{why}: which changed lines "
            "they run is unknown, and generated tests are judged without it"
        ), None
    for t in targets:
        never_ran = missing.get(t.path)
        if t.data is not None:  # a changed table: the lines no reader of it ran
            done = set(t.ran(executed))
            t.uncovered = [n for n in t.data.countable() if n not in done]
        elif never_ran is None:  # the file was never imported: every changed statement
            t.uncovered = list(t.lines)
        else:
            t.uncovered = [n for n in t.lines if n in never_ran]
    return stopped, covered_count(targets, executed)
