"""No model: what a changed module does when an optional library is not installed.

Packages import some libraries only optionally (``try: import x`` / ``except ImportError``,
libraries declared only as extras), and releases change what works without one: a module
that now imports without it, a fallback, a clearer error. The side-runner's environment has
every dependency installed, so the differential generator never sees it. Here:

- **Candidates**: the third-party top-level modules the changed modules import, on head or
  on the parent (the standard library and the project's own packages left out), optional
  first: guarded by an ``except`` that catches ImportError, imported in a changed line, or
  declared as an extra (pyproject, setup.cfg, setup.py); at most ``MAX_BLOCKED``.
- **Observed on both sides** (``probe_optdeps``, copied beside the side-runner): each
  changed module imported afresh with nothing blocked, then with each candidate blocked
  (``sys.modules[name] = None``), twice on head and twice in a worktree of the parent.
  A module that does not import with nothing blocked on either side is not compared.
- **The test**: where both runs of a side agree and the sides differ, a test imports the
  module the same way with ``monkeypatch`` (the project's modules removed, the library set
  to None; everything restored after the test) and asserts head's outcome
  (``'imported'``, ``'needs progressbar'``, or the error), the parent's as a comment.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import shutil
import sys
import time
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.testgen.ghostwriter import _module_name
from bot.testgen.matrix import versions_masked
from bot.testgen.render import MARKER

if TYPE_CHECKING:
    from bot.testgen.frameworks import Framework
    from bot.testgen.matrix import Target
    from bot.testgen.workspace import Workspace

__all__ = ["candidates", "differences", "generate_optdeps", "import_hits", "plan_for", "written"]

SIDE_RUNNER = Path(__file__).with_name("probe_optdeps.py")
MAX_BLOCKED = 3  # libraries blocked
MAX_MODULES = 8  # changed modules imported under each
MAX_TESTS = 4
RUN_SECONDS = 30.0
LEAST_SECONDS = 30.0  # of the job left, or nothing is blocked
_SKIPPED_FILES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "__main__.py"}
_CATCHES = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _catches_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        kinds = handler.type
        if kinds is None:
            return True
        names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
        if any(isinstance(n, ast.Name | ast.Attribute) and ast.unparse(n).split(".")[-1]
               in _CATCHES for n in names):  # fmt: skip
            return True
    return False


def _imports(source: str | None) -> list[tuple[str, bool, range]]:
    """(top-level module, guarded by an ImportError handler, its lines) of each absolute
    import in ``source``; a relative one as ``.``."""
    try:
        tree = ast.parse(source or "")
    except SyntaxError:
        return []
    out: list[tuple[str, bool, range]] = []

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if node.module and not node.level
                else ["."]
            )
            lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            out.extend((n if n == "." else n.split(".")[0], guarded, lines) for n in names)
        if isinstance(node, ast.Try):
            inner = guarded or _catches_import_error(node)
            for child in node.body:
                visit(child, inner)
            for rest in (*node.handlers, *node.orelse, *node.finalbody):
                visit(rest, guarded)
            return
        for sub in ast.iter_child_nodes(node):
            visit(sub, guarded)

    visit(tree, False)
    return out


def _extras(read: Any) -> set[str]:
    """The distributions declared only as extras, as module-like names (``-`` as ``_``)."""
    found: list[str] = []
    text = read("pyproject.toml")
    if text:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            data = {}
        project = data.get("project") if isinstance(data.get("project"), dict) else {}
        optional = project.get("optional-dependencies") if project else None
        for reqs in optional.values() if isinstance(optional, dict) else []:
            found += [str(r) for r in reqs if isinstance(reqs, list)]
    text = read("setup.cfg")
    if text:
        cfg = configparser.ConfigParser()
        try:
            cfg.read_string(text)
            if cfg.has_section("options.extras_require"):
                for _key, value in cfg.items("options.extras_require"):
                    found += value.replace(";", "\n").split()
        except configparser.Error:
            pass
    text = read("setup.py")
    match = re.search(r"extras_require\s*=\s*(\{.*?\})", text or "", re.S)
    if match:
        found += re.findall(r"""["']([A-Za-z0-9][^"']*)["']""", match.group(1))
    names = (_NAME.match(r.strip()) for r in found)
    return {m.group(0).split("[")[0].lower().replace("-", "_") for m in names if m}


def candidates(
    files: list[tuple[str | None, str, list[int]]], packages: set[str], extras: set[str]
) -> list[str]:
    """The libraries to block, likeliest optional first: each changed file as (its parent
    text, its head text, the changed lines of head). Standard library and the project's
    own ``packages`` are left out."""
    score: dict[str, int] = {}
    for before, after, changed in files:
        kept = set((after or "").splitlines())
        seen = [(m, g, any(n in changed for n in lines)) for m, g, lines in _imports(after)]
        old = (before or "").splitlines()
        for m, g, lines in _imports(before):  # an import the change removed is a changed line
            gone = any(old[n - 1] not in kept for n in lines if n <= len(old))
            seen.append((m, g, gone))
        for module, guarded, in_change in seen:
            if module in sys.stdlib_module_names or module in {*packages, "__future__", "."}:
                continue
            rank = 4 * guarded + 2 * in_change + (module.lower() in extras)
            score[module] = max(score.get(module, 0), rank)
    ranked = sorted((s, m) for m, s in score.items() if s)
    return [m for s, m in sorted(ranked, key=lambda r: (-r[0], r[1]))][:MAX_BLOCKED]


def _observe(ws: Workspace, fw: Framework, plan: str, tag: str, seed: int) -> dict[str, Any]:
    scratch = ws.scratch()
    script = scratch / "nova_probe_optdeps.py"
    if not script.is_file():
        shutil.copyfile(SIDE_RUNNER, script)
    return ws.side_run(fw.run_files[:1], script, plan, tag, seed, RUN_SECONDS)


def _steady(runs: list[dict[str, Any]], module: str, blocked: str) -> str | None:
    seen = {str((r.get(module) or {}).get(blocked)) for r in runs}
    imported = all((r.get(module) or {}).get("") == "imported" for r in runs)
    return seen.pop() if imported and len(seen) == 1 and "None" not in seen else None


def differences(
    modules: list[str], blocked: list[str], head: list[dict[str, Any]], parent: list[dict[str, Any]]
) -> list[tuple[str, str, str, str]]:
    """(module, library, head's outcome, the parent's) where both runs of each side agree,
    the module imports with nothing blocked on both, and the sides differ in more than a
    version number; what now imports first. A module head imports only with the library
    that the parent did without is left out: the release requires it now (pysnmpcrypto
    dropping its other backend, a new ``typing_extensions`` import), which tells nothing
    of what the code does."""
    out: list[tuple[str, str, str, str]] = []
    for module in modules:
        for name in blocked:
            ours, theirs = _steady(head, module, name), _steady(parent, module, name)
            if ours is None or theirs is None:
                continue
            if ours == f"needs {name}" and theirs == "imported":
                continue  # the release made it a dependency: no behaviour without it
            if versions_masked(ours) != versions_masked(theirs):  # not a version stamped
                out.append((module, name, ours, theirs))
    return sorted(out, key=lambda t: t[2] != "imported")


def plan_for(
    ws: Workspace, fw: Framework, targets: list[Target], parent: str | None
) -> dict[str, Any] | None:
    """The side-runner's plan (modules, the project's packages, the libraries to block),
    or None when no changed module imports a candidate."""
    paths = sorted(
        {
            t.path
            for t in targets
            if t.path.endswith(".py")
            and not fw.is_test_name(t.path)
            and Path(t.path).name not in _SKIPPED_FILES
        }
    )[:MAX_MODULES]
    if not paths or parent is None:
        return None
    packages = sorted({_module_name(p).split(".")[0] for p in paths})
    changed: dict[str, list[int]] = {}
    for t in targets:
        changed.setdefault(t.path, []).extend(t.lines)
    files = [(_parent_version(ws, p, parent), ws.read(p) or "", changed.get(p, [])) for p in paths]
    blocked = candidates(files, set(packages), _extras(ws.read))
    # the modules that import one (either side), or a module of their own package under an
    # ImportError handler (``try: from .progress import Bar``): each import costs
    modules = sorted(
        _module_name(p)
        for p, (before, after, _lines) in zip(paths, files, strict=True)
        if any(
            m in blocked or (m == "." and guarded)
            for m, guarded, _n in [*_imports(before), *_imports(after)]
        )
    )
    if not blocked or not modules:
        return None
    return {"modules": modules, "packages": packages, "blocked": blocked}


def written(
    ws: Workspace,
    fw: Framework,
    plan: dict[str, Any] | None,
    runs: dict[str, Any],
    facts: dict[str, dict[str, list[dict[str, object]]]] | None = None,
) -> list[str]:
    """Write the test file for the outcomes of ``runs`` (tag -> a run's ``optdeps``
    answer; ``head-*`` and ``parent-*``) where head and parent differ; return notes."""
    from bot.testgen.workspace import WriteRefused

    if plan is None:
        return []
    head = [r for t, r in runs.items() if t.startswith("head")]
    before = [r for t, r in runs.items() if t.startswith("parent")]
    said = f"optdeps: blocked {', '.join(plan['blocked'])} in {', '.join(plan['modules'])}"
    if len(head) < 2 or len(before) < 2 or not all(isinstance(r, dict) for r in runs.values()):
        return [f"{said}: not every run answered"]
    tests = differences(plan["modules"], plan["blocked"], head, before)
    if not tests:
        return [f"{said}: head and parent import alike"]
    target, text, found = _render(fw, tests[:MAX_TESTS], plan["packages"])
    try:
        ws.write_test(target, text)
    except WriteRefused as exc:
        return [said, f"optdeps: {exc}"]
    if facts is not None:
        facts[target] = found
    return [f"{said}: {len(found)} differ; optdeps wrote {target}"]


def generate_optdeps(
    ws: Workspace,
    fw: Framework,
    targets: list[Target],
    parent: str | None,
    facts: dict[str, dict[str, list[dict[str, object]]]] | None = None,
    until: float | None = None,
) -> list[str]:
    """On its own (the differential has no function to probe, so no runs to ride on):
    the side-runner twice on head and twice in a worktree of the parent, then
    ``written``. Nothing when less than ``LEAST_SECONDS`` are left until ``until``."""
    plan = plan_for(ws, fw, targets, parent)
    if plan is None or parent is None:
        return []
    if until is not None and until - time.monotonic() < LEAST_SECONDS:
        return [f"optdeps: {', '.join(plan['blocked'])} not blocked: the job's time is spent"]
    text = json.dumps(plan)
    runs = {f"head-{seed}": _observe(ws, fw, text, f"head-{seed}", seed) for seed in (0, 1)}
    with ws.sibling(parent, fw) as parent_ws:
        for seed in (0, 1):
            runs[f"parent-{seed}"] = _observe(parent_ws, fw, text, f"parent-{seed}", seed)
    failed = next((str(r["error"]) for r in runs.values() if "error" in r), "")
    if failed:
        return [f"optdeps: the changed modules could not be imported: {failed}"]
    return written(ws, fw, plan, runs, facts)


def _parent_version(ws: Workspace, path: str, parent: str) -> str | None:
    """``path`` on the parent, or the module it was there (``pkg/m.py`` that became
    ``pkg/m/__init__.py``, or the other way)."""
    text = ws.parent_text(path, parent)
    if text is not None:
        return text
    if path.endswith("/__init__.py"):
        return ws.parent_text(path.removesuffix("/__init__.py") + ".py", parent)
    return ws.parent_text(path.removesuffix(".py") + "/__init__.py", parent)


HELPER = '''

def _imported_without(monkeypatch, module, blocked, packages):
    """Import ``module`` afresh as if ``blocked`` were not installed: 'imported', 'needs
    <blocked>', or the error. The project's modules are imported again; ``monkeypatch``
    puts every module back after the test, and the fresh ones are dropped here."""

    def ours(name, tops):
        return any(name == t or name.startswith(t + '.') for t in tops)

    before = set(sys.modules)
    for name in list(sys.modules):
        if ours(name, packages):
            monkeypatch.delitem(sys.modules, name, raising=False)
        elif ours(name, [blocked]):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, blocked, None)
    try:
        importlib.import_module(module)
    except (Exception, SystemExit) as error:
        missing = getattr(error, 'name', None) or ''
        if isinstance(error, ImportError) and ours(missing, [blocked]):
            return f'needs {blocked}'
        text = re.sub(_MACHINE_PATH, '<path>', ' '.join(str(error).split()))
        return f'{type(error).__name__}: {text}'[:200]
    finally:
        for name in set(sys.modules) - before:
            if ours(name, [*packages, blocked]):
                del sys.modules[name]
    return 'imported'
'''


def _render(
    fw: Framework, tests: list[tuple[str, str, str, str]], packages: list[str]
) -> tuple[str, str, dict[str, list[dict[str, object]]]]:
    from bot.testgen import probe_optdeps

    test_dir = fw.test_dirs[0].strip("/")
    name = fw.nova_file("optional_imports")
    target = f"{test_dir}/{name}" if test_dir != "." else name
    body = [
        f"{MARKER}imports without an optional library, written by Nova",
        "from importing the changed modules on the change's head and on its parent with the",
        "library blocked (no model).",
        '"""',
        "import importlib",
        "import re",
        "import sys",
        "",
        f"_MACHINE_PATH = {probe_optdeps._PATH.pattern!r}",
        HELPER.rstrip(),
    ]
    found: dict[str, list[dict[str, object]]] = {}
    for module, blocked, ours, theirs in tests:
        base = f"test_{module.replace('.', '_')}_without_{blocked}".lower()
        test, n = base, 2
        while test in found:
            test, n = f"{base}_{n}", n + 1
        call = f"_imported_without(monkeypatch, {module!r}, {blocked!r}, {tuple(packages)!r})"
        body += ["", "", f"def {test}(monkeypatch):", f"    # before this change: {theirs!r}"]
        body.append(f"    assert {call} == {ours!r}")
        found[test] = [
            {
                "call": call,
                "head": ours,
                "parent": theirs,
                "changed": True,
                "new_name": False,
                "reaches": [module],
            }
        ]
    return target, "\n".join(body) + "\n", found


def import_hits(
    target: Target, executed: dict[str, set[int]], test_text: str, name: str
) -> list[int]:
    """The changed lines of ``target`` a test of this file ran by importing its module
    afresh inside the test (``_imported_without``): the top-level lines count there, where
    an import at collection never does."""
    start = test_text.find(f"\ndef {name.split('[')[0]}(")
    if start < 0:
        return []
    end = test_text.find("\ndef ", start + 1)
    if "_imported_without(" not in test_text[start : end if end > 0 else None]:
        return []
    mine = executed.get(target.path, set())
    return [n for n in target.lines if n in mine]
