"""ty against pyright in Nova's differential type check, on real repositories.

    python bench/typecheck.py REPO [REPO ...] [--commits 5] [--mutations 5]
                              [--pyright PATH] [--budget 300] [--rev SHA ...]

REPO is a git repository (a clone; a bare one is cloned, without checkout, to a tmp dir).
Two measurements per repository, each with ty and with pyright (when ``--pyright`` names
its binary, e.g. from ``pip install "pyright[nodejs]"`` in a venv of its own):

- **real changes**: the last ``--commits`` first-parent commits that touch Python files,
  each against its parent. Merged commits rarely break their callers, so what a checker
  reports new here is mostly its noise; every finding is printed for reading.
- **broken signatures** (recall): at the head, ``--mutations`` module-level functions that
  other files call (``from m import f`` / ``import m`` then ``f(...)`` / ``m.f(...)``, no
  ``*args``/``**kwargs`` or decorators) each get a new required first parameter, one
  commit each. Every such call site in another file is then broken; the recall is the
  share of those (file, line) a checker reports as new, in files the change did not touch.

The same machinery as the review (``bot.analyzers.typecheck_trees``): both revisions
written out of git, the base's configuration for both, new errors matched by text. ty runs
with Nova's rules (``typecheck.RULES``); pyright in ``standard`` mode with the rules that
mean the same (``PYRIGHT_RULES``). Times are wall seconds for checking both revisions.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.analyzers import typecheck  # noqa: E402
from bot.analyzers.typecheck_trees import (  # noqa: E402
    CONFIG_FILES,
    Diagnostic,
    line_text,
    materialize,
    new_in_head,
    python_paths,
    renames,
)
from bot.errors import AnalyzerError  # noqa: E402

PYRIGHT_RULES = {
    "reportCallIssue",
    "reportArgumentType",
    "reportAttributeAccessIssue",
    "reportMissingImports",
    "reportUndefinedVariable",
}
Checker = Callable[[Path, float], list[Diagnostic]]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def ty_checker() -> Checker:
    binary = typecheck.ty_binary()

    def check(tree: Path, budget: float) -> list[Diagnostic]:
        return typecheck._check(binary, tree, None, time.monotonic() + budget, tree.parent)

    return check


def pyright_checker(binary: str) -> Checker:
    def check(tree: Path, budget: float) -> list[Diagnostic]:
        config = {"typeCheckingMode": "standard", "reportMissingModuleSource": "none"}
        (tree / "pyrightconfig.json").write_text(json.dumps(config))
        proc = subprocess.run(
            [binary, "--outputjson", "."],
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=budget,
            check=False,
        )
        items = json.loads(proc.stdout or "{}").get("generalDiagnostics", [])
        root, lines, out = str(tree.resolve()) + "/", {}, []
        for item in items:
            rule = item.get("rule") or ""
            if rule not in PYRIGHT_RULES or item.get("severity") != "error":
                continue
            path = str(item["file"]).removeprefix(root)
            line = item["range"]["start"]["line"] + 1
            message = item["message"].split("\n")[0]
            out.append(Diagnostic(path, line, rule, message, line_text(tree, path, line, lines)))
        return out

    return check


@dataclass
class Outcome:
    seconds: float
    new: list[Diagnostic]


def differential(repo: Path, base: str, head: str, check: Checker, budget: float) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="nova-bench-types-") as tmp:
        scratch = Path(tmp)
        trees = {"base": scratch / "base", "head": scratch / "head"}
        base_paths = python_paths(repo, base)
        head_paths = [p for p in python_paths(repo, head) if p not in CONFIG_FILES]
        materialize(repo, base, trees["base"], base_paths, scratch)
        materialize(repo, head, trees["head"], head_paths, scratch)
        config = [p for p in base_paths if p in CONFIG_FILES]
        materialize(repo, base, trees["head"], config, scratch)
        start = time.monotonic()
        with ThreadPoolExecutor(2) as pool:
            before, after = pool.map(lambda t: check(t, budget), trees.values())
        seconds = time.monotonic() - start
        return Outcome(seconds, new_in_head(before, after, renames(repo, base, head)))


def _each(
    checkers: dict[str, Checker], repo: Path, base: str, head: str, budget: float
) -> Iterator[tuple[str, Outcome]]:
    """Each checker's outcome; one that times out or fails is said and left out."""
    for name, check in checkers.items():
        try:
            yield name, differential(repo, base, head, check, budget)
        except (subprocess.TimeoutExpired, AnalyzerError) as exc:
            print(f"    {name:8} did not finish: {str(exc)[:100]}")


def _module(path: str) -> str:
    p = PurePosixPath(path).with_suffix("")
    parts = list(p.parts)
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@dataclass(frozen=True)
class Target:
    path: str
    name: str
    line: int  # the def's line
    calls: frozenset[tuple[str, int]]  # (file, line) of each call in another file
    at: tuple[int, int]  # (line, byte column) where the new parameter goes
    text: str  # the new parameter: required and keyword-only, so no old call passes it


def _insertion(node: ast.FunctionDef, source: list[str]) -> tuple[tuple[int, int], str]:
    a = node.args
    parts: list[ast.AST] = [*a.posonlyargs, *a.args, *a.kwonlyargs, *a.defaults]
    parts += [d for d in a.kw_defaults if d is not None]
    star = "" if a.kwonlyargs else "*, "
    if not parts:  # def f(): right after the parenthesis
        line = node.lineno
        col = source[line - 1].encode().index(f"def {node.name}(".encode())
        return (line, col + len(node.name) + 5), star + "nova_added"
    last = max(parts, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))
    return (last.end_lineno or 0, last.end_col_offset or 0), f", {star}nova_added"


def _absolute(node: ast.ImportFrom, importer: str) -> str:
    """The module ``from .x import y`` names, seen from the file ``importer``."""
    if node.level == 0:
        return node.module or ""
    package = _module(importer).split(".")
    if not importer.endswith("__init__.py"):
        package = package[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _calls(tree: ast.AST, importer: str) -> dict[tuple[str, str], set[int]]:
    """(module, function) -> lines of the plain calls of imported functions in a file
    (``from m import f`` then ``f(...)``; ``import m`` / ``import m as x`` then
    ``m.f(...)``); calls that unpack ``*args`` or ``**kwargs`` are left out."""
    direct: dict[str, tuple[str, str]] = {}
    via: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node, importer)
            direct |= {a.asname or a.name: (module, a.name) for a in node.names}
        elif isinstance(node, ast.Import):
            via |= {a.asname or a.name: a.name for a in node.names}
    found: dict[tuple[str, str], set[int]] = {}
    for node in ast.walk(tree):
        if (
            not isinstance(node, ast.Call)
            or any(isinstance(a, ast.Starred) for a in node.args)
            or any(k.arg is None for k in node.keywords)
        ):
            continue
        f, key = node.func, None
        if isinstance(f, ast.Name) and f.id in direct:
            key = direct[f.id]
        elif isinstance(f, ast.Attribute) and (_dotted(f.value) or "") in via:
            key = (via[_dotted(f.value) or ""], f.attr)
        if key is not None:
            found.setdefault(key, set()).add(node.lineno)
    return found


def targets(repo: Path, rev: str, limit: int) -> list[Target]:
    """Module-level functions called from other files, the most called first."""
    files, sources = {}, {}
    for path in python_paths(repo, rev):
        if path.endswith(".py"):
            try:
                text = git(repo, "show", f"{rev}:{path}")
                files[path] = ast.parse(text)
            except (SyntaxError, ValueError, subprocess.CalledProcessError):
                continue
            sources[path] = text.split("\n")
    called: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for path, tree in files.items():
        for key, lines in _calls(tree, path).items():
            called.setdefault(key, set()).update((path, line) for line in lines)
    found = []
    for path, tree in files.items():
        module = _module(path)
        for node in tree.body:
            a = getattr(node, "args", None)
            if not isinstance(node, ast.FunctionDef) or node.decorator_list or a is None:
                continue
            if a.vararg or a.kwarg or node.name.startswith("__"):
                continue
            calls = frozenset(c for c in called.get((module, node.name), ()) if c[0] != path)
            if calls:
                at, text = _insertion(node, sources[path])
                found.append(Target(path, node.name, node.lineno, calls, at, text))
    found.sort(key=lambda t: (-len(t.calls), t.path, t.name))
    return found[:limit]


def mutate(repo: Path, base: str, target: Target) -> str:
    """A commit on ``base`` whose ``target`` takes a new required keyword-only parameter."""
    git(repo, "checkout", "-q", "--detach", "-f", base)
    lines = (repo / target.path).read_bytes().split(b"\n")
    line, col = target.at
    raw = lines[line - 1]
    lines[line - 1] = raw[:col] + target.text.encode() + raw[col:]
    (repo / target.path).write_bytes(b"\n".join(lines))
    git(repo, "-c", "user.name=bench", "-c", "user.email=b@x.invalid", "commit", "-qam", "m")
    return git(repo, "rev-parse", "HEAD").strip()


def real_changes(repo: Path, n: int, revs: list[str]) -> list[tuple[str, str]]:
    if revs or n <= 0:
        return [(git(repo, "rev-parse", f"{r}^").strip(), r) for r in revs]
    out = git(repo, "log", "--first-parent", "--no-merges", "--format=%H", "-n", "400", "--",
              "*.py")  # fmt: skip
    pairs = []
    for sha in out.split():
        parent = git(repo, "rev-parse", f"{sha}^").strip()
        pairs.append((parent, sha))
        if len(pairs) == n:
            break
    return pairs


def _show(d: Diagnostic) -> str:
    return f"      {d.path}:{d.line} [{d.rule}] {d.message[:110]}"


def bench(
    path: Path,
    checkers: dict[str, Checker],
    commits: int,
    muts: int,
    budget: float,
    revs: list[str],
) -> None:
    with tempfile.TemporaryDirectory(prefix="nova-bench-clone-") as tmp:
        repo = Path(tmp) / "repo"
        git(Path(tmp), "clone", "-q", str(path), str(repo))
        head = git(repo, "rev-parse", "HEAD").strip()
        count = len([p for p in python_paths(repo, head) if p.endswith(".py")])
        print(f"\n== {path} ({count} .py files at {head[:10]})")
        for base, sha in real_changes(repo, commits, revs):
            title = git(repo, "log", "-1", "--format=%s", sha).strip()[:60]
            print(f"  real {sha[:10]} {title}")
            for name, o in _each(checkers, repo, base, sha, budget):
                print(f"    {name:8} {o.seconds:6.1f}s  {len(o.new)} new")
                for d in o.new[:8]:
                    print(_show(d))
        for t in targets(repo, head, muts):
            sha = mutate(repo, head, t)
            print(f"  mutation {t.path}:{t.line} {t.name}(): {len(t.calls)} calls elsewhere")
            for name, o in _each(checkers, repo, head, sha, budget):
                got = {(d.path, d.line) for d in o.new if d.path != t.path}
                hit = len(t.calls & got)
                extra = len(got - t.calls)
                print(
                    f"    {name:8} {o.seconds:6.1f}s  recall {hit}/{len(t.calls)}"
                    f"  other new lines {extra}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--commits", type=int, default=5)
    parser.add_argument("--mutations", type=int, default=5)
    parser.add_argument("--pyright", help="the pyright binary (else ty alone)")
    parser.add_argument("--budget", type=float, default=300.0)
    parser.add_argument("--rev", action="append", default=[], help="a commit to check")
    args = parser.parse_args()
    checkers = {"ty": ty_checker()}
    if args.pyright:
        checkers["pyright"] = pyright_checker(args.pyright)
    for repo in args.repos:
        bench(repo, checkers, args.commits, args.mutations, args.budget, args.rev)


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    main()
