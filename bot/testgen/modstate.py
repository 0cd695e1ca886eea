"""No model: a change to what a module does when it is imported, pinned by its state.

Many releases change module-level code: the setup of a package's logger (its level,
handlers), a registry filled at import, a module-level object configured by calls
(``env.filters[...] = ...``, ``parser.add_argument(...)``), a constant table. The
differential generator reaches such a change only through a function that reads the name
on inputs that show it; where none of its tests pins it, this generator (run after it,
before amplification) looks at the state itself:

- **What the changed lines configure**: the names a changed top-level statement binds or
  mutates (``moddata``: ``NAME = ...``, ``NAME[k] = v``, ``NAME.attr = v``,
  ``NAME.method(...)``, and names derived from them). Version strings, dunder names and a
  ``_version.py`` are skipped: a test pinning a version number is not a behaviour catch.
- **Observed on both sides**: ``probe_state`` (the side-runner, next to the differential
  generator's) imports each module twice on the head and twice on the parent (the changed
  files swapped in, another hash seed the second time) and describes each name: a value as
  its Python source, a table entry by entry, any other object by the facts of its structure
  (type names, public attributes, items; ``probe_objects.facts``); a class, function or
  module is an identity, never a value. Only what both runs of a side show alike counts.
- **The test**: for each name whose steady state differs, the first few differences (the
  shallowest first: type names, then sizes, then values; a table's changed entries one by
  one) become asserts on head's state, in one test file that imports the names. The gates
  decide as for any test; a changed top-level line counts as run by a test whose own body
  reads a name it binds, when the run executed it at import (``import_hits``).
"""

from __future__ import annotations

import ast
import functools
import json
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from bot.testgen.ghostwriter import _module_name
from bot.testgen.inputs import class_at
from bot.testgen.matrix import versions_masked
from bot.testgen.modregex import pattern_witnesses
from bot.testgen.probe_objects import VALUE
from bot.testgen.render import MARKER
from bot.testgen.retype import _find

if TYPE_CHECKING:
    from bot.testgen.frameworks import Framework
    from bot.testgen.matrix import Target
    from bot.testgen.runners import Lines
    from bot.testgen.workspace import Workspace

__all__ = ["class_body_hits", "generate_modstate", "import_hits"]

SIDE_RUNNER = Path(__file__).with_name("probe_state.py")
MAX_NAMES = 12  # names observed per module
MAX_CHECKS = 3  # asserts per name (each its own test)
MAX_TESTS = 12  # tests in the file
RUN_SECONDS = 60.0  # one side-runner run (every module)
_SKIPPED_FILES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "__main__.py"}
_VERSION_FILES = ("version.py", "__about__.py", "__version__.py")
_IDENTITY = ("<class '", "<function ", "<module '", "<bound method ", "<built-in ")
_CHAIN = re.compile(r"^((?:\.\w+|\[[^\]]*\])*)")


@dataclass
class _Check:
    """One assert on a module-level name (``{r}`` is where the name goes)."""

    assertion: str
    before: str
    imports: list[str] = field(default_factory=list)


def _skipped(path: str, name: str) -> str:
    """Why a bound name is not observed ("": it is)."""
    if name.startswith("__") and name.endswith("__"):
        return "a dunder name"
    if "version" in name.lower() or PurePosixPath(path).name.endswith(_VERSION_FILES):
        return "a version"
    return ""


def _wanted(
    targets: list[Target], fw: Framework, read: Callable[[str], str | None]
) -> dict[str, tuple[str, list[str]]]:
    """module -> (its path, the names its changed top-level lines bind, and the
    top-level functions whose changed lines are decorators)."""
    out: dict[str, tuple[str, list[str]]] = {}
    for t in targets:  # a top-level function whose decorators changed: what they attach
        if (
            "." not in t.qualname
            and t.qualname != "<module>"
            and t.path.endswith(".py")
            and not fw.is_test_name(t.path)
            and PurePosixPath(t.path).name not in _SKIPPED_FILES
        ):
            source = read(t.path)
            if source is not None and set(t.lines) & decorator_lines(source, t.qualname):
                path, names = out.setdefault(_module_name(t.path), (t.path, []))
                names += [t.qualname] if t.qualname not in names else []
    for t in targets:
        if (
            t.qualname != "<module>"
            or t.data is None
            or not t.path.endswith(".py")
            or fw.is_test_name(t.path)
            or PurePosixPath(t.path).name in _SKIPPED_FILES
            or t.path.startswith(("docs/", "doc/"))
        ):
            continue
        names = [n for n in sorted(t.data.bindings) if not _skipped(t.path, n)][:MAX_NAMES]
        if names:
            _, decorated = out.get(_module_name(t.path), (t.path, []))
            out[_module_name(t.path)] = (t.path, [*decorated, *names][:MAX_NAMES])
    return out


def decorator_lines(source: str, qualname: str) -> set[int]:
    """The lines of the decorators of the function (or method) ``qualname``: they run
    once, when the module is imported."""
    try:
        found = _find(_tree(source), qualname)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    if not isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef):
        return set()
    return {
        n for d in found.decorator_list for n in range(d.lineno, (d.end_lineno or d.lineno) + 1)
    }


def _unpinned(
    wanted: dict[str, tuple[str, list[str]]], facts: dict[str, dict[str, list[dict[str, Any]]]]
) -> tuple[dict[str, tuple[str, list[str]]], list[str]]:
    """The names no test of another generator pins a changed behaviour through (a fact
    that reaches ``module.NAME``, or ``<module>`` from the module's own test file): a
    table read by a function whose result changed is tested best by that function."""
    reached: set[str] = set()
    for file, rows in facts.items():
        own = PurePosixPath(file).stem.removeprefix("test_nova_")
        for found in rows.values():
            for f in found:
                if f.get("changed") and not f.get("new_name"):
                    reached |= {own if r == "<module>" else str(r) for r in f.get("reaches") or []}
    out: dict[str, tuple[str, list[str]]] = {}
    notes = []
    for module, (path, names) in wanted.items():
        whole = module.replace(".", "_") in reached
        left = [n for n in names if not whole and f"{module}.{n}" not in reached]
        if len(left) < len(names):
            gone = sorted(set(names) - set(left))
            notes.append(
                f"modstate: {path}: {', '.join(gone)} not observed: another generator's "
                "tests pin a changed behaviour through it"
            )
        if left:
            out[module] = (path, left)
    return out, notes


def _literal(node: ast.expr) -> bool:
    """A value written out in the source: a literal display (``("a", "b")``, ``{"k": 1}``,
    ``"https://..."``) whose items may name other constants (``(_OS_RELEASE, "a")``), one
    handed to ``set`` / ``frozenset`` / ``tuple`` / ``list`` / ``dict``, or another
    name's value (``tz_names = win_tz``)."""
    if isinstance(node, ast.Name | ast.Attribute):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _literal(k) for k in node.keys) and all(
            _literal(v) for v in node.values
        )
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("set", "frozenset", "tuple", "list", "dict")
    ):
        return all(_literal(a) for a in node.args) and all(_literal(k.value) for k in node.keywords)
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def written_out(source: str, name: str, lines: list[int]) -> bool:
    """Whether every changed statement binding ``name`` (on ``lines``; none there: every
    top-level statement binding it) assigns it a value written out in the source: a test
    asserting that value would restate the code, not test a behaviour (the functions
    reading it do)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    wanted, found = set(lines), 0
    binding = [n for n in tree.body if name in _bound(n)]
    changed = [n for n in binding if wanted & set(range(n.lineno, (n.end_lineno or n.lineno) + 1))]
    # a name the changed lines reach through another's value (``tz_names = win_tz``):
    # its own statements
    for node in changed or binding:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            return False  # a call, an augmented or subscript assignment: configured
        if not all(isinstance(t, ast.Name) and t.id == name for t in targets):
            return False
        if not _literal(value):
            return False
        found += 1
    return found > 0


def _bound(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds or configures (its targets' root names)."""
    if isinstance(node, ast.Assign):
        targets: list[ast.expr] = list(node.targets)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        targets = [node.value.func]
    else:
        return set()
    out: set[str] = set()
    for t in targets:
        while isinstance(t, ast.Attribute | ast.Subscript):
            t = t.value
        out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


def _computed(
    wanted: dict[str, tuple[str, list[str]]],
    targets: list[Target],
    ws: Workspace,
    notes: list[str],
) -> tuple[dict[str, tuple[str, list[str]]], list[str]]:
    """The wanted names but those the change only writes out as a literal value."""
    lines = {
        (t.path, n): ls
        for t in targets
        if t.qualname == "<module>" and t.data is not None
        for n, ls in t.data.bindings.items()
    }
    out: dict[str, tuple[str, list[str]]] = {}
    for module, (path, names) in wanted.items():
        source = ws.read(path) or ""
        literal = [n for n in names if written_out(source, n, lines.get((path, n), []))]
        if literal:
            notes = [
                *notes,
                f"modstate: {path}: {', '.join(literal)} not observed: a value written out in "
                "the source (a test of it would restate the code; the functions reading it "
                "test it)",
            ]
        left = [n for n in names if n not in literal]
        if left:
            out[module] = (path, left)
    return out, notes


def _observe(ws: Workspace, fw: Framework, plan: str, tag: str, seed: int) -> dict[str, Any]:
    """One run of the side-runner: module -> its names' descriptions (or its import error)."""
    from bot.testgen.differential import side_runner

    scratch = ws.scratch()
    script = scratch / "nova_probe_state.py"
    if not script.is_file():
        if not (scratch / "nova_probe.py").is_file():
            side_runner(scratch)
        shutil.copyfile(SIDE_RUNNER, script)
    return ws.side_run(fw.run_files[:1], script, plan, tag, seed, RUN_SECONDS)


def generate_modstate(
    ws: Workspace,
    fw: Framework,
    targets: list[Target],
    parent_files: dict[str, str | None] | None,
    facts: dict[str, dict[str, list[dict[str, object]]]] | None = None,
    pinned: dict[str, dict[str, list[dict[str, object]]]] | None = None,
) -> list[str]:
    """Write one test file pinning the module-level state the changed top-level code
    leaves after import, where it differs from the parent's; return notes. ``facts``
    gets each test's fact; ``pinned``: the other generators' facts (a name one of their
    tests pins a changed behaviour through is left to it)."""
    others = pinned if pinned is not None else facts or {}
    wanted, notes = _unpinned(_wanted(targets, fw, ws.read), others)
    wanted, notes = _computed(wanted, targets, ws, notes)
    if not wanted or not parent_files:
        return notes
    plan = json.dumps(
        {"modules": [{"module": m, "names": names} for m, (_p, names) in sorted(wanted.items())]}
    )
    started = time.monotonic()
    head = [_observe(ws, fw, plan, f"head-{seed}", seed) for seed in (0, 1)]
    with ws.replaced(parent_files):
        parent = [_observe(ws, fw, plan, f"parent-{seed}", seed) for seed in (0, 1)]
    failed = next((str(r["error"]) for r in [*head, *parent] if "error" in r), "")
    if failed:
        return [*notes, f"modstate: the changed modules could not be observed: {failed}"]
    tests: list[tuple[str, str, str, _Check]] = []  # module, path, name, check
    for module, (path, names) in sorted(wanted.items()):
        broken = [
            str(side[module]["import_error"])
            for side in [*head, *parent]
            if "import_error" in side.get(module, {})
        ]
        if broken:
            notes.append(f"modstate: {path} not observed: it does not import ({broken[0]})")
            continue
        for name in names:
            ours = _steady([h[module]["names"].get(name) for h in head])
            theirs = _steady([p[module]["names"].get(name) for p in parent])
            checks, said = _compare(ours, theirs)
            notes.append(f"modstate: {path}: {name} {said.replace('{n}', name)}")
            tests += [(module, path, name, c) for c in checks[:MAX_CHECKS]]
    took = f"{time.monotonic() - started:.1f} s"
    if not tests:
        return [*notes, f"modstate: nothing to pin ({took})"]
    target, text, found = _render(fw, tests[:MAX_TESTS])
    from bot.testgen.workspace import WriteRefused

    try:
        ws.write_test(target, text)
    except WriteRefused as exc:
        return [*notes, f"modstate: {exc}"]
    if facts is not None:
        facts[target] = found
    return [*notes, f"modstate wrote {target} ({len(found)} tests, {took})"]


def _steady(runs: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """What every run of one side showed alike: the whole description, or for an object
    the facts all runs share (expression -> [source, imports]); None when they disagree."""
    if any(r is None for r in runs):
        return None
    first = runs[0]
    assert first is not None
    if all(r is not None and r.get("kind") == "object" for r in runs):
        shared = {str(f[0]): [f[1], f[2]] for f in first["facts"]}
        for other in runs[1:]:
            assert other is not None
            shown = {str(f[0]): f[1] for f in other["facts"]}
            shared = {e: f for e, f in shared.items() if shown.get(e) == f[0]}
        long = dict(first.get("long") or {})
        for other in runs[1:]:
            assert other is not None
            long = {e: d for e, d in long.items() if (other.get("long") or {}).get(e) == d}
        return {**first, "facts": shared, "long": long}
    same = all(json.dumps(r, sort_keys=True) == json.dumps(first, sort_keys=True) for r in runs)
    return first if same else None


def _compare(
    ours: dict[str, Any] | None, theirs: dict[str, Any] | None
) -> tuple[list[_Check], str]:
    """The asserts that tell head's state from the parent's, and a note on it."""
    if ours is None or theirs is None:
        return [], "differs between runs of one side (not pinned)"
    kinds = (ours.get("kind"), theirs.get("kind"))
    if "missing" in kinds:
        return [], "is new or gone in this change (not pinned)"
    if "identity" in kinds or "unobservable" in kinds:
        return [], "is a class, function or module, or cannot be observed (not pinned)"
    if kinds == ("pattern", "pattern"):
        return _pattern_checks(ours, theirs)
    if ours.get("type") != theirs.get("type"):
        shown = repr(ours.get("type"))
        check = _Check(f"assert type({VALUE}).__name__ == {shown}", f"a {theirs.get('type')}")
        return [check], f"differs: a {theirs.get('type')} -> a {ours.get('type')}"
    if kinds == ("object", "object"):
        checks, said = _object_checks(ours["facts"], theirs["facts"])
        mine, old = ours.get("long") or {}, theirs.get("long") or {}
        texts = [e.replace(VALUE, "{n}") for e, d in mine.items() if e in old and old[e] != d]
        if texts and not checks:
            said = f"differs only in text too long to pin whole: {', '.join(texts[:3])}"
        return checks, said
    same = ours.get("value", ours.get("digest")) == theirs.get("value", theirs.get("digest"))
    if same and ours.get("kind") == theirs.get("kind"):
        return [], "is the same on both sides"
    delta = _entries(ours, theirs)
    if delta:
        return delta, f"differs in {len(delta)} entries"
    if kinds == ("value", "value"):
        value, before = str(ours["value"]), str(theirs["value"])
        if _version_only(value, before):
            return [], "differs only in a version number (not pinned)"
        check = _Check(_equals(VALUE, value), before, list(ours.get("imports") or []))
        return [check], f"differs: {_short(before)} -> {_short(value)}"
    return [], "differs in a value too long to pin whole (not pinned)"


def _pattern_checks(ours: dict[str, Any], theirs: dict[str, Any]) -> tuple[list[_Check], str]:
    """A compiled regex on both sides: its whole text and flags compared; where they
    differ, what it does with strings the two match differently (``modregex``): a test
    of its behaviour, not a copy of its text. A rebuilt pattern that matches alike pins
    nothing."""
    old = (str(theirs.get("pattern")), int(theirs.get("flags") or 0))
    new = (str(ours.get("pattern")), int(ours.get("flags") or 0))
    if old == new:
        return [], "is the same on both sides (its whole pattern and flags)"
    checks: list[_Check] = []
    for _seed, text in pattern_witnesses([(old, new)])[:MAX_CHECKS]:
        head, parent = _matched(new, text), _matched(old, text)
        if head is None or parent is None or head == parent:
            continue
        checks.append(_Check(f"assert {head[0].format(r=VALUE, t=repr(text))}", parent[1]))
    said = f"differs in its pattern ({len(old[0])} -> {len(new[0])} characters)"
    if old[1] != new[1]:
        said = f"differs in its flags ({old[1]} -> {new[1]})"
    if not checks:
        return [], f"{said}, but no string was found that the two match differently (not pinned)"
    return checks, f"{said}: {len(checks)} strings it matches differently"


def _matched(pattern: tuple[str, int], text: str) -> tuple[str, str] | None:
    """(an assert of what ``pattern`` finds in ``text``, with ``{r}`` for it and ``{t}``
    for the text; the same told in words), or None when it does not compile."""
    try:
        found = re.compile(pattern[0], pattern[1]).search(text)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    if found is None:
        return "{r}.search({t}) is None", "found nothing"
    span, groups = found.span(), found.groups()
    found_at = f"{{r}}.search({{t}}).span() == {span!r}"
    return (
        f"{{r}}.search({{t}}) is not None and {found_at} and {{r}}.search({{t}}).groups() == "
        f"{groups!r}",
        f"found {found.group(0)[:30]!r} at {span}",
    )


def _entries(ours: dict[str, Any], theirs: dict[str, Any]) -> list[_Check]:
    """A table's changed entries: a dict's keys whose value is new or changed, and the
    keys it lost; a collection's added and removed members."""
    if "items" in ours and "items" in theirs:
        mine = {str(k): str(v) for k, v in ours["items"]}
        old = {str(k): str(v) for k, v in theirs["items"]}
        out = [
            _Check(_equals(f"{VALUE}[{k}]", v), old.get(k, f"no key {k}"))
            for k, v in mine.items()
            if old.get(k) != v
        ]
        gone = [k for k in old if k not in mine]
        out += [_Check(f"assert {k} not in {VALUE}", f"{k} was a key") for k in gone]
        return out
    if "members" in ours and "members" in theirs:
        mine_m, old_m = set(ours["members"]), set(theirs["members"])
        out = [_Check(f"assert {m} in {VALUE}", f"no {m}") for m in sorted(mine_m - old_m)]
        out += [_Check(f"assert {m} not in {VALUE}", f"{m} in it") for m in sorted(old_m - mine_m)]
        return out
    return []


def _object_checks(
    ours: dict[str, list[Any]], theirs: dict[str, list[Any]]
) -> tuple[list[_Check], str]:
    """Facts of the structure both sides show with another value: the shallowest first,
    type names before sizes before values (``differential._fact_rank``)."""
    differ = [
        (expr, fact)
        for expr, fact in ours.items()
        if expr in theirs
        and theirs[expr][0] != fact[0]
        and not any(i in str(fact[0]) + str(theirs[expr][0]) for i in _IDENTITY)
        and not _version_only(str(fact[0]), str(theirs[expr][0]))
    ]
    if not differ:
        return _own_attributes(ours, theirs)
    differ.sort(key=lambda ef: (_depth(ef[0]), _rank(ef[0])))
    checks: list[_Check] = []
    for expr, (source, imports) in differ:
        before = str(theirs[expr][0])
        keys = _keys_delta(expr, str(source), before)
        if keys is not None:
            checks += keys
            continue
        shown = expr.replace(VALUE, "{n}")
        checks.append(_Check(_equals(expr, str(source)), f"{shown} was {before}", list(imports)))
    first = differ[0]
    shown = first[0].replace(VALUE, "{n}")
    said = f"differs: {shown}: {_short(str(theirs[first[0]][0]))} -> {_short(str(first[1][0]))}"
    return checks, said + (f" (and {len(differ) - 1} more)" if len(differ) > 1 else "")


_ATTRIBUTE = re.compile(r"\{r\}\.([A-Za-z_]\w*)")


def _own_attributes(
    ours: dict[str, list[Any]], theirs: dict[str, list[Any]]
) -> tuple[list[_Check], str]:
    """An attribute one side's object has and the other's shows nothing of (a decorator
    that now attaches ``pytest_impl`` where it attached ``pytestmark``): head's value
    asserted, or the parent's attribute asserted absent."""

    def named(facts: dict[str, list[Any]]) -> set[str]:
        return {m.group(1) for e in facts for m in _ATTRIBUTE.finditer(e)}

    mine, old = named(ours), named(theirs)
    checks = [
        _Check(
            # read so that the parent's object, which lacks it, fails the assert
            _equals(f"getattr({VALUE}, {a!r}, None)", str(ours[f"{VALUE}.{a}"][0])),
            f"no {a}",
            ours[f"{VALUE}.{a}"][1],
        )
        for a in sorted(mine - old)
        if f"{VALUE}.{a}" in ours
    ]
    checks += [
        _Check(f"assert not hasattr({VALUE}, {a!r})", f"{{n}}.{a} was set")
        for a in sorted(old - mine)
    ]
    if not checks:
        return [], "is the same on both sides (as far as its structure shows)"
    said = ", ".join(
        [*(f"+{a}" for a in sorted(mine - old)), *(f"-{a}" for a in sorted(old - mine))]
    )
    return checks, f"differs in its attributes: {said}"


def _keys_delta(expr: str, source: str, before: str) -> list[_Check] | None:
    """``list({r}...)`` (a dict's keys) that differ: the keys added and removed, each
    asserted by membership (their order is not the change); None for another fact."""
    if not (expr.startswith("list(") and expr.endswith(")")):
        return None
    try:
        mine, old = ast.literal_eval(source), ast.literal_eval(before)
    except (ValueError, SyntaxError):
        return None
    if not isinstance(mine, list) or not isinstance(old, list):
        return None
    inner = expr[5:-1]
    out = [_Check(f"assert {k!r} in {inner}", f"no key {k!r}") for k in mine if k not in old]
    gone = [k for k in old if k not in mine]
    out += [_Check(f"assert {k!r} not in {inner}", f"{k!r} was a key") for k in gone]
    return out or None


def _depth(expr: str) -> int:
    """How many attribute or item steps below the name a fact looks."""
    tail = expr.split(VALUE, 1)[-1]
    chain = _CHAIN.match(tail)
    return len(re.findall(r"\.\w+|\[[^\]]*\]", chain.group(1))) if chain else 0


def _rank(expr: str) -> int:
    return 0 if "__name__" in expr else 1 if expr.startswith("len(") else 2


def _equals(left: str, source: str) -> str:
    same = "is" if source in ("None", "True", "False") else "=="
    return f"assert {left} {same} {source}"


def _version_only(head: str, parent: str) -> bool:
    """Whether two values differ only in version numbers (``'lib/1.2'`` and ``'lib/1.3'``)."""
    return head != parent and versions_masked(head) == versions_masked(parent)


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _render(
    fw: Framework, tests: list[tuple[str, str, str, _Check]]
) -> tuple[str, str, dict[str, list[dict[str, object]]]]:
    """(the test file's path, its text, each test's fact)."""
    counts: dict[str, int] = {}
    for _m, _p, name, _c in tests:
        counts[name] = counts.get(name, 0) + 1
    owners: dict[str, set[str]] = {}
    for module, _p, name, _c in tests:
        owners.setdefault(name, set()).add(module)
    imports: set[str] = set()
    body: list[str] = []
    found: dict[str, list[dict[str, object]]] = {}
    used: set[str] = set()
    for module, _path, name, check in tests:
        local = name if len(owners[name]) == 1 else f"{module.replace('.', '_')}_{name}"
        imports.add(f"from {module} import {name}" + (f" as {local}" if local != name else ""))
        imports.update(check.imports)
        stem = module.rsplit(".", 1)[-1]
        base = f"test_{stem}_{name.strip('_').lower()}_state"
        test, n = base, 2
        while test in used:
            test, n = f"{base}_{n}", n + 1
        used.add(test)
        assertion = check.assertion.replace(VALUE, local)
        before = check.before.replace("{n}", local)
        body += ["", "", f"def {test}():", f"    # before this change: {_short(before)}"]
        body.append(f"    {assertion}")
        found[test] = [
            {
                "call": f"from {module} import {name}; {assertion.removeprefix('assert ')}",
                "head": assertion.removeprefix("assert "),
                "parent": before,
                "changed": True,
                "new_name": False,
                "reaches": [f"{module}.{name}"],
            }
        ]
    paths = sorted({p for _m, p, _n, _c in tests})
    plain = sorted(i for i in imports if i.startswith("import "))
    froms = sorted(i for i in imports if i.startswith("from "))
    head = [
        f"{MARKER}the module-level state of {', '.join(paths)}, written by Nova",
        "from importing the module on the change's head and on its parent (no model).",
        "",
        "Each expected value is what the changed top-level code leaves after import; a",
        'comment says what the parent commit left."""',
        "",
        *plain,
        *([""] if plain else []),
        *froms,
    ]
    text = "\n".join([*head, *body]) + "\n"
    ast.parse(text)  # a value that does not render as Python is a bug here, not a test
    test_dir = fw.test_dirs[0].strip("/")
    name = fw.nova_file("module_state")
    return (f"{test_dir}/{name}" if test_dir != "." else name), text, found


# -- the changed-line gate: a changed top-level line runs at import -----------------------


@functools.lru_cache(maxsize=8)
def _tree(text: str) -> ast.Module:
    """A module's or a test file's tree, parsed once: the gate asks for every test and
    changed target (read only here)."""
    return ast.parse(text)


def import_hits(
    target: Target, imported: Lines, source: str | None, test: str, name: str
) -> list[int]:
    """The changed top-level lines of ``target``'s module that count as run by the test
    ``name`` of the file ``test`` (its text): those of a statement the run executed at
    import (``imported``: lines run outside any test) binding a name the test's own body
    reads from that module (``from pkg.mod import NAME`` then ``NAME``, or ``mod.NAME``)."""
    if target.data is None or target.qualname != "<module>" or source is None:
        return []
    ran = imported.get(target.path, set())
    if not ran:
        return []
    read = _read_names(test, name, _module_name(target.path))
    lines = {n for bound in read for n in target.data.bindings.get(bound, [])}
    if not lines:
        return []
    try:
        tree = _tree(source)
    except SyntaxError:
        return []
    out = set()
    for node in tree.body:
        first, last = node.lineno, node.end_lineno or node.lineno
        span = {n for n in lines if first <= n <= last}
        if span and any(first <= n <= last for n in ran):
            out |= span
    return sorted(out)


def class_body_hits(
    target: Target, imported: Lines, source: str | None, test: str, name: str
) -> list[int]:
    """The changed lines of a class's own body (an enum's member, a dataclass's field, a
    class attribute: statements that run once, when the module is imported), or of a
    function's decorators, that count as run by the test ``name``: those the import ran,
    when the test's body reads the class (its outermost class, for one nested in another)
    or the function from the module."""
    if target.qualname == "<module>" or source is None:
        return []
    ran = imported.get(target.path, set())
    if not ran:
        return []
    top = target.qualname.split(".")[0]
    decorators = decorator_lines(source, target.qualname)  # they run at import too
    if decorators:
        lines = sorted(n for n in target.lines if n in decorators and n in ran)
        if lines and top in _read_names(test, name, _module_name(target.path)):
            return lines
        return []
    try:
        found = class_at(_tree(source), target.qualname)
    except SyntaxError:
        return []
    if found is None:
        return []
    own = set()  # lines of the class body's statements that are not a function's
    for node in found.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    lines = sorted(n for n in target.lines if n in own and n in ran)
    if not lines or top not in _read_names(test, name, _module_name(target.path)):
        return []
    return lines


def _read_names(text: str, name: str, module: str) -> set[str]:
    """The names of ``module`` the test function ``name`` (``test_x``, ``Cls::test_x``,
    ``test_x[case]``) reads in its body, through the file's imports or its own."""
    try:
        tree = _tree(text)
    except SyntaxError:
        return set()
    parts = name.split("[", 1)[0].split("::")
    scope: list[ast.stmt] = tree.body
    func: ast.AST | None = None
    for part in parts:
        func = next(
            (
                n
                for n in scope
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and n.name == part
            ),
            None,
        )
        if func is None:
            return set()
        scope = func.body
    if func is None:
        return set()
    names: dict[str, str] = {}  # local -> the module's name
    modules: set[str] = set()  # locals bound to the module itself
    for node in [*tree.body, *ast.walk(func)]:
        if isinstance(node, ast.ImportFrom) and not node.level:
            for alias in node.names:
                local = alias.asname or alias.name
                if node.module == module:
                    names[local] = alias.name
                elif f"{node.module}.{alias.name}" == module:
                    modules.add(local)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == module:
                    modules.add(alias.asname or alias.name)
    out = set()
    for sub in ast.walk(func):
        if isinstance(sub, ast.Name) and sub.id in names:
            out.add(names[sub.id])
        elif isinstance(sub, ast.Attribute) and ast.unparse(sub.value) in modules:
            out.add(sub.attr)
    return out
