"""A differential type check of Python: what the change newly breaks, found by ty.

The base and the head revision are written out of git (``typecheck_trees``) and ty checks
both with the same settings: every rule off but those that say the change broke something
(``RULES``: a call that no longer matches a signature, an attribute or module member that no
longer exists, an import that no longer resolves, a name that is gone). Only the errors new
at the head are kept, matched by file, rule, message and line text, so the untyped noise a
project already had never shows. An error on an added line is an inline finding; one
elsewhere — a caller in a file the change did not touch — goes to the summary with its path
and line as "the change breaks this caller".

Why ty and not pyright — measured with ``bench/typecheck.py`` (ty 0.0.107, pyright 1.1.414
in ``standard`` mode with the same kinds of rules, wall seconds for both revisions on this
loaded 2-core machine):

- real merged changes (click ×4, httpx ×3, and pip's two module-moving refactors "Split
  exceptions into a package" and "Rename exceptions.build_env"; pyright on the first of
  those two): both report 0 new errors; ty takes 3–7 s on click and httpx and 17–30 s on
  pip (661 files), pyright 40–92 s and 191 s;
- broken signatures (a required keyword-only parameter added to a function other files
  call; every such call is then broken): both find every call — click 76/76, httpx 18/18
  each; on pip ty 511/511 over four functions, pyright 266/266 on the one it ran (179 s,
  ty 23 s) — and the same further callers (through re-exports);
- ty is one 39 MB binary from PyPI that never runs an interpreter; pyright needs Node (the
  ``pyright[nodejs]`` wheels weigh 244 MB) and executes the ``python`` it finds on PATH to
  learn ``sys.path`` (a checked-out repository could put one there);
- ty's messages name the function a call fails ("… of function `f`"), which keeps the
  matching between revisions exact.

ty is pre-1.0 and renames rules between releases: it is pinned, and a rule it does not know
stops the check with a clear message rather than silently checking less.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.analyzers.base import Check, Found, Workspace, find_program
from bot.analyzers.typecheck_trees import (
    CONFIG_FILES,
    PYTHON_SUFFIXES,
    Diagnostic,
    first_party,
    has_revision,
    line_text,
    materialize,
    new_in_head,
    python_paths,
    renames,
)
from bot.change import Change, Comment, Severity
from bot.errors import AnalyzerError

__all__ = ["ANALYZER", "BUDGET", "RULES", "TypeCheck", "applies", "run_typecheck", "ty_binary"]

# ty 0.0.107's names; each means the code would fail at run time, none is about style
RULES: dict[str, Severity] = {
    "missing-argument": "error",
    "unknown-argument": "error",
    "too-many-positional-arguments": "error",
    "parameter-already-assigned": "error",
    "positional-only-parameter-as-kwarg": "error",
    "invalid-argument-type": "warning",
    "no-matching-overload": "warning",
    "not-callable": "error",
    "missing-attribute": "error",
    "missing-module-member": "error",
    "import-not-found": "error",
    "unresolved-reference": "error",
}
BUDGET = 45.0  # seconds for writing both trees and checking them (pip's 661 files: 17-30 s)
MAX_FINDINGS = 50  # new errors listed; a change that breaks more is said in a note
RULE_URL = "https://docs.astral.sh/ty/reference/rules/#{}"
BREAKS = "the change breaks this caller"
_MODULE = re.compile(r"module `([^`]+)`")


@dataclass
class TypeCheck:
    comments: list[Comment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    status: str = ""  # one short line for the analyze step


def ty_binary() -> str:
    """ty beside Nova's Python or on PATH (the ``lint`` image carries the binary alone)."""
    found = find_program("ty")
    if found is None:
        raise AnalyzerError('ty is not installed (pip install "nova-bot[lint]")')
    return found


def applies(change: Change) -> bool:
    """A Python file is added, modified, renamed or deleted (a deletion breaks importers).
    The raw diff is read too: the review leaves deleted and excluded files out of
    ``change.files``, and deleting a module is how an import stops resolving."""
    paths = [p for f in change.files for p in (f.old_path, f.new_path) if p]
    paths += [
        line[4:].rstrip().strip('"')
        for line in change.raw_diff.splitlines()
        if line.startswith(("--- ", "+++ "))
    ]
    return any(p.endswith(PYTHON_SUFFIXES) for p in paths)


def _revisions(change: Change, root: Path | None) -> tuple[Path, str, str]:
    if root is None:
        raise AnalyzerError("the repository is not checked out")
    if change.source == "stdin" or change.base_ref is None or change.head_ref is None:
        raise AnalyzerError("a diff without its revisions has no base to compare with")
    for name, rev in (("base", change.base_ref), ("head", change.head_ref)):
        if not has_revision(root, rev):
            raise AnalyzerError(
                f"the {name} revision {rev[:12]} is not in the checkout (a shallow clone? "
                "fetch it, e.g. fetch-depth: 0)"
            )
    return root, change.base_ref, change.head_ref


def run_typecheck(
    change: Change, root: Path | None, *, budget: float = BUDGET, binary: str | None = None
) -> TypeCheck:
    """ty's errors new at the head of ``change`` in the git repository ``root``, as
    comments. Raises ``AnalyzerError`` saying why it could not run (ty missing, no base
    revision at hand, over ``budget`` seconds)."""
    if not applies(change):
        return TypeCheck(status="ty: no Python file changed")
    repo, base_rev, head_rev = _revisions(change, root)
    ty = binary or ty_binary()
    deadline = time.monotonic() + budget
    with tempfile.TemporaryDirectory(prefix="nova-types-") as tmp:
        scratch = Path(tmp)
        base, head = scratch / "base", scratch / "head"
        base_paths = python_paths(repo, base_rev)
        head_paths = [p for p in python_paths(repo, head_rev) if p not in CONFIG_FILES]
        materialize(repo, base_rev, base, base_paths, scratch)
        materialize(repo, head_rev, head, head_paths, scratch)
        config = [p for p in base_paths if p in CONFIG_FILES]  # the base's, for both
        materialize(repo, base_rev, head, config, scratch)
        python = repo / ".venv" if (repo / ".venv" / "pyvenv.cfg").is_file() else None
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = [
                pool.submit(_check, ty, tree, python, deadline, scratch) for tree in (base, head)
            ]
            before, after = (run.result() for run in runs)
        new = new_in_head(before, after, renames(repo, base_rev, head_rev))
    ours = first_party([*base_paths, *head_paths])
    kept, unknown = _split_imports(new, ours)
    return _result(change, kept, unknown)


def _split_imports(new: list[Diagnostic], ours: set[str]) -> tuple[list[Diagnostic], list[str]]:
    """(the diagnostics kept, the modules of new unresolved imports that are not the
    project's own: whether they are installed is the CI's business, not the change's)."""
    kept, unknown = [], []
    for d in new:
        match = _MODULE.search(d.message) if d.rule == "import-not-found" else None
        name = match.group(1) if match else ""
        if name and not name.startswith(".") and name.split(".")[0] not in ours:
            unknown.append(name)
        else:
            kept.append(d)
    return kept, unknown


def _env(scratch: Path) -> dict[str, str]:
    """No tokens, no user configuration of ty (it would change the rules)."""
    from bot.sandbox.run import clean_env

    return clean_env({"HOME": str(scratch), "XDG_CONFIG_HOME": str(scratch / "config")})


def _check(
    ty: str, tree: Path, python: Path | None, deadline: float, scratch: Path
) -> list[Diagnostic]:
    """ty on ``tree`` with only ``RULES`` on, as errors; its own project settings (Python
    version, source roots, excluded files) apply. ty reads the environment's packages from
    disk and never runs its interpreter."""
    args = [ty, "check", "--output-format=gitlab", "--no-progress", "--exit-zero"]
    args += ["--color=never", "--ignore=all", *(f"--error={rule}" for rule in RULES)]
    args += ["--python", str(python or sys.prefix)]
    timeout = deadline - time.monotonic()
    if timeout <= 0:
        raise AnalyzerError("writing out both revisions used up the type check's budget")
    try:
        proc = subprocess.run(
            args,
            cwd=tree,
            env=_env(scratch),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise AnalyzerError(
            f"ty took longer than the type check's budget ({timeout:.0f}s)"
        ) from exc
    except OSError as exc:
        raise AnalyzerError(f"ty could not start: {exc}") from exc
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise AnalyzerError(f"ty failed: {detail[:200]}")
    try:
        items = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise AnalyzerError(f"ty's output is not JSON: {exc}") from exc
    return _diagnostics(items, tree)


def _diagnostics(items: list[dict[str, Any]], tree: Path) -> list[Diagnostic]:
    unknown = [i["description"] for i in items if i.get("check_name") == "unknown-rule"]
    if unknown:
        raise AnalyzerError(
            f"this ty does not know {'; '.join(unknown)[:200]} (Nova needs the ty that "
            "nova-bot[lint] pins)"
        )
    root = str(tree.resolve())
    lines: dict[str, list[str]] = {}
    out = []
    for item in items:
        rule = item.get("check_name") or ""
        location = item.get("location") or {}
        path = str(location.get("path") or "")
        line = ((location.get("positions") or {}).get("begin") or {}).get("line")
        if rule not in RULES or not path or not isinstance(line, int):
            continue
        if path.startswith(root + "/"):
            path = path[len(root) + 1 :]
        message = str(item.get("description") or "").removeprefix(f"{rule}: ")
        out.append(Diagnostic(path, line, rule, message, line_text(tree, path, line, lines)))
    return out


def _result(change: Change, new: list[Diagnostic], unknown: list[str]) -> TypeCheck:
    added = {
        f.path: {ln.new_no for h in f.hunks for ln in h.lines if ln.kind == "added"}
        for f in change.files
    }
    new.sort(key=lambda d: (d.path not in added, d.path, d.line))
    comments = [_comment(d, d.line in added.get(d.path, ())) for d in new[:MAX_FINDINGS]]
    elsewhere = sum(1 for d in new if d.line not in added.get(d.path, ()))
    notes = []
    if len(new) > MAX_FINDINGS:
        notes.append(
            f"ty: the change breaks {len(new)} places; the first {MAX_FINDINGS} are listed"
        )
    if unknown:
        names = ", ".join(sorted(set(unknown))[:5])
        notes.append(
            f"ty: {len(unknown)} new import(s) of modules that are not the project's own and "
            f"not installed where Nova runs were not checked ({names})"
        )
    status = f"ty: {len(new)} new type errors ({elsewhere} outside the added lines)"
    return TypeCheck(comments, notes, status)


def _comment(d: Diagnostic, on_added_line: bool) -> Comment:
    body = f"{d.rule}: {d.message}"
    if not on_added_line:  # the summary names its path and line
        quoted = d.text.strip()[:120].replace("`", "'")
        body = f"{BREAKS}: {d.message} — `{quoted}`"
    return Comment(
        path=d.path,
        line=d.line,
        body=body,
        severity=RULES.get(d.rule, "error"),
        code=d.text if on_added_line else None,  # off the diff: never anchored by its text
        origin="ty",
        rule=d.rule,
        url=RULE_URL.format(d.rule),
    )


def _run(ws: Workspace) -> Found:
    result = run_typecheck(ws.change, ws.root, budget=min(BUDGET, max(ws.timeout, 1.0)))
    return Found(result.comments, result.notes)


def _available() -> str | None:
    try:
        return ty_binary()
    except AnalyzerError:
        return None


ANALYZER = Check(
    name="typecheck",
    wants=lambda path, tags: path.endswith(PYTHON_SUFFIXES),
    run=_run,
    available=_available,
    outside=True,  # a broken caller in an untouched file goes to the summary
    applies=applies,
)
