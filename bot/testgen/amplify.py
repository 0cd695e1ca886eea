"""Test amplification: the project's own tests that run the changed lines, observed.

The differential generator re-creates calls from the tests' source; where a test drives
the code in a way it cannot replay (a state machine fed through several calls, a
``monkeypatch.setenv`` first, a fixture pointing at a data directory), this runs the test
itself instead, on the change's head and on its parent (twice each, with two hash
seeds), and observes what every call from the test's body into the project returned
(``amplify_plugin``). The old test passes on both sides — it asserts only some things —
but a value it got often differs: then a new test is written beside it, its own body cut
after the statement holding the differing call, with head's value asserted there. The
gates then decide as for any generated test.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from bot.testgen.amplify_inputs import Steer, add_variants, steer_from_change
from bot.testgen.amplify_loops import comprehension_of, looped_checks
from bot.testgen.differential import side_runner
from bot.testgen.frameworks import Framework
from bot.testgen.ghostwriter import _module_name
from bot.testgen.matrix import Target
from bot.testgen.runners.python import measured_args
from bot.testgen.workspace import Workspace, WriteRefused

__all__ = ["AMPLIFIED", "Observed", "generate_amplified", "naming_files", "unpinned"]

AMPLIFIED = "test_nova_amp_"  # how its files are named (the pipeline checks them last)

PLUGIN = Path(__file__).with_name("amplify_plugin.py")
MAX_TEST_FILES = 30  # test files run in the first observation
MAX_TESTS = 1000  # tests of the first observation (its time limit stops it sooner)
MAX_RERUN = 300  # tests that ran a changed line, observed on the parent
MAX_CONFIRMED = 30  # tests whose values differed there, observed once more on each side
MAX_FILES = 2  # files written (each costs several runs of the gates)
PER_TARGET = 3  # tests written per changed target
FIRST_SECONDS = 20.0  # the first run (every test of the files): it stops there
PARENT_SECONDS = 15.0  # the parent's first run
SECONDS = 50.0  # all four runs: the whole job stays within its two minutes
TEST_SECONDS = 5.0  # one test, at most
MAX_VARIANTS = 48  # input variants of the tests that ran a changed line, in all
VARY_PREFIX = "test_nova_vary_"  # the temporary copies holding them
_TEMP = re.compile(r"/tmp/|pytest-of-|/var/folders/|\\\\Temp\\\\")


@dataclass
class Observed:
    """One run's observations: node id -> {"changed", "passed", "calls"}."""

    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str = ""
    capped: int = 0
    stopped: str = ""  # the run hit its time limit: the tests that ended are here


@dataclass
class Difference:
    """The first steady difference of one test: the call, head's and the parent's outcome."""

    node: str
    line: int
    name: str
    index: int
    head: dict[str, Any]
    parent: dict[str, Any]
    # a parametrized case's arguments: name -> [source, imports] (None: not rendered)
    params: dict[str, Any] | None = None
    # an input variant's test: the project's test it copies and the literal it changed
    variant: str = ""
    # every occurrence of the call at its line (a loop, a comprehension): head's and the
    # parent's steady outcomes in order (None where one was not steady)
    series: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None

    @property
    def amplifies(self) -> str:
        """The project's test this amplifies (a variant: its original, and what changed)."""
        if not self.variant:
            return self.node
        rel, _, rest = self.node.partition("::")
        return f"{_origin(rel)}::{rest.split('[', 1)[0]} ({self.variant})"


def generate_amplified(
    ws: Workspace,
    fw: Framework,
    targets: list[Target],
    parent_files: dict[str, str | None] | None,
    facts: dict[str, dict[str, list[dict[str, object]]]] | None = None,
    test_seconds: float = TEST_SECONDS,
    budget: float = SECONDS,
) -> list[str]:
    """Observe the tests that run the changed lines on both sides; write a test for each
    difference (a few per changed target), its four runs within ``budget`` seconds
    (about). Returns notes."""
    started = time.monotonic()
    if not parent_files:
        return ["amplify: no parent commit to compare the tests' observations with"]
    changed = _changed_lines(ws, fw, targets)
    if not changed:
        return ["amplify: no changed Python source lines"]
    files = _test_files(ws, fw, sorted(changed))
    if not files:
        return ["amplify: no test file mentions a changed module"]
    sources = {rel: ws.read(rel) or "" for rel in files}
    share = min(1.0, budget / SECONDS)
    first = _observe(ws, fw, files, changed, 0, FIRST_SECONDS * share, test_seconds, MAX_TESTS)
    if first.error:
        return [
            f"amplify: the tests mentioning the changed modules could not be observed: "
            f"{first.error}"
        ]
    ran = [n for n, t in first.tests.items() if t.get("changed") and t.get("passed")]
    notes = [
        f"amplify: {len(ran)} of {len(first.tests)} tests of {len(files)} file(s) ran a "
        "changed line and passed on the head"
        + (f" (the first {MAX_TESTS} of {first.capped} were run)" if first.capped else "")
        + (f" ({first.stopped})" if first.stopped else "")
    ]
    if not ran:
        return notes
    found = _compared(
        ws,
        fw,
        _spread(ran, first)[:MAX_RERUN],
        first,
        changed,
        parent_files,
        sources,
        test_seconds,
        started,
        notes,
        budget,
    )
    writable = _writable(found, sources, notes)
    chosen = _chosen(writable, targets, changed)
    written = _write(ws, list(first.tests), chosen, sources, facts, notes)
    notes.append(f"amplify: {written} test(s) written in {time.monotonic() - started:.1f} s")
    return notes


def unpinned(
    targets: list[Target], facts: dict[str, dict[str, list[dict[str, Any]]]]
) -> list[Target]:
    """The changed targets no fact of the differential generator's tests pins: neither
    the function a pinning test calls nor one it reaches."""
    pinned: set[str] = set()
    for rows in facts.values():
        for found in rows.values():
            for f in found:
                if f.get("changed") and not f.get("new_name"):
                    pinned |= {str(r) for r in f.get("reaches") or []}
                    pinned |= set(_called(str(f.get("call") or "")))
    return [
        t
        for t in targets
        if t.qualname not in pinned
        and t.name not in pinned
        and not (t.name == "__init__" and t.qualname.split(".")[-2:][0] in pinned)
    ]


def _called(call: str) -> list[str]:
    """The names a fact's last statement calls (``m.close()`` -> close)."""
    last = call.rsplit("; ", 1)[-1]
    try:
        tree = ast.parse(last)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            out.append(name)
    return out


def _compared(
    ws: Workspace,
    fw: Framework,
    ran: list[str],
    first: Observed,
    changed: dict[str, list[int]],
    parent_files: dict[str, str | None],
    sources: dict[str, str],
    test_seconds: float,
    started: float,
    notes: list[str],
    budget: float = SECONDS,
) -> list[list[Difference]]:
    """The parent once on every test that ran a changed line (and the variants, with
    their head run), then the head and the parent again only on the tests whose values
    differed: each test's steady differences."""
    described: dict[str, str] = {}  # a variant's node -> what it changed
    share = min(1.0, budget / SECONDS)
    extra = _variants(ws, ran, sources, _steer(ws, changed, parent_files), described, notes)
    if extra:
        # the smaller copies first: a big one stopped by the time limit leaves them a turn
        nodes = [n for _, ns in sorted(extra, key=lambda e: len(e[1])) for n in ns]
        more = _observe(ws, fw, nodes, changed, 0, PARENT_SECONDS * share, test_seconds)
        first.tests.update(more.tests)
        ran = ran + [n for n in nodes if n in more.tests]
    with ws.replaced(parent_files):
        parent = _observe(ws, fw, ran, changed, 0, PARENT_SECONDS * share, test_seconds)
    seen = _worth_confirming(ran, first, parent)[:MAX_CONFIRMED]
    each = max(5.0, (budget - (time.monotonic() - started)) / 2)
    head2 = _observe(ws, fw, seen, changed, 1, each, test_seconds) if seen else Observed()
    with ws.replaced(parent_files):
        parent2 = _observe(ws, fw, seen, changed, 1, each, test_seconds) if seen else Observed()
    for rel, _ in extra:
        ws.remove_test(rel)
    broken = next((o.error for o in [parent, head2, parent2] if o.error), "")
    if broken:
        notes.append(f"amplify: a later observation failed: {broken}")
        return []
    found = [ds for n in seen if (ds := _differences(n, first, head2, [parent, parent2]))]
    for ds in found:
        for d in ds:
            d.variant = described.get(d.node.split("[", 1)[0], "")
    notes.append(
        f"amplify: {len(found)} test(s) got another value on the parent"
        + (f" ({len(seen) - len(found)} more only in one run)" if len(seen) > len(found) else "")
    )
    return found


def _worth_confirming(ran: list[str], head: Observed, parent: Observed) -> list[str]:
    """The tests whose values differed between one run of each side, those that differ
    beyond a run's own part (an id, an address, a clock's reading, a set's order) first:
    a difference only there goes away in the second runs, and the tests confirmed are
    few."""
    differ = [n for n in ran if _differences(n, head, head, [parent])]
    real = [n for n in differ if _differences(n, head, head, [parent], masked=True)]
    return real + [n for n in differ if n not in real]


def _spread(nodes: list[str], survey: Observed) -> list[str]:
    """The tests in an order that reaches every changed line early: each round takes,
    in the suite's order, a test that runs a changed line none taken before ran."""
    left = list(nodes)
    out: list[str] = []
    while left:
        seen: set[str] = set()
        taken: list[str] = []
        for node in left:
            hit = set(survey.tests[node].get("hit") or [])
            if not hit <= seen or not taken:
                taken.append(node)
                seen |= hit
        out += taken
        left = [n for n in left if n not in taken]
    return out


def _variants(
    ws: Workspace,
    nodes: list[str],
    sources: dict[str, str],
    steer: Steer,
    described: dict[str, str],
    notes: list[str],
) -> list[tuple[str, list[str]]]:
    """Temporary copies of test modules with input variants of the tests in ``nodes``
    (``amplify_inputs.add_variants``: one literal input changed towards what the changed
    lines test), written beside the original as ``test_nova_vary_<file>`` with their new
    node ids; ``sources`` gets their text. Observed like the originals, then removed."""
    by_file: dict[str, list[str]] = {}
    for node in nodes:
        rel, _, rest = node.partition("::")
        qualname = rest.split("[", 1)[0].replace("::", ".")
        if qualname and qualname not in by_file.setdefault(rel, []):
            by_file[rel].append(qualname)
    each = max(2, MAX_VARIANTS // max(1, sum(len(q) for q in by_file.values())))
    out: list[tuple[str, list[str]]] = []
    left = MAX_VARIANTS
    for rel, qualnames in by_file.items():
        text, ids = _only(sources.get(rel, ""), qualnames), []
        for qualname in qualnames:
            if left <= 0:
                break
            text, made = add_variants(text, qualname, steer, min(each, left))
            left -= len(made)
            ids += [v.qualname for v in made]
            for v in made:
                described[v.qualname] = f"{qualname}, {v.description}"
        if not ids:
            continue
        temp = str(PurePosixPath(rel).with_name(VARY_PREFIX + PurePosixPath(rel).name))
        try:
            temp = ws.write_test(temp, text)
        except WriteRefused as exc:
            notes.append(f"amplify: no input variants of {rel}: {exc}")
            continue
        sources[temp] = text
        out.append((temp, [f"{temp}::{q.replace('.', '::')}" for q in ids]))
        for q in ids:
            described[f"{temp}::{q.replace('.', '::')}"] = described.pop(q)
    if out:
        notes.append(
            f"amplify: {sum(len(ids) for _, ids in out)} input variant(s) of "
            f"{len(nodes)} test(s), one literal changed towards the changed lines"
        )
    return out


def _only(source: str, qualnames: list[str]) -> str:
    """The test module without its tests other than ``qualnames`` (their lines cut, the
    rest byte for byte): a big module's copy stays small and quick to collect. The
    module itself when the cut one would not compile."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    wanted = set(qualnames)
    cuts: list[tuple[int, int, str]] = []  # first line, last line, what stands there
    for node in tree.body:
        inside = node.body if isinstance(node, ast.ClassDef) else [node]
        prefix = node.name + "." if isinstance(node, ast.ClassDef) else ""
        gone = [
            f
            for f in inside
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
            and f.name.startswith("test")
            and prefix + f.name not in wanted
        ]
        for i, f in enumerate(gone):
            first = min([d.lineno for d in f.decorator_list] + [f.lineno])
            # a class left with no statement gets a `pass` where its last test was
            keep = (
                isinstance(node, ast.ClassDef) and len(gone) == len(inside) and i == len(gone) - 1
            )
            cuts.append(
                (first, f.end_lineno or f.lineno, " " * f.col_offset + "pass" if keep else "")
            )
    if not cuts:
        return source
    rows = source.splitlines(keepends=True)
    for first, last, put in sorted(cuts, reverse=True):
        rows[first - 1 : last] = [put + "\n"] if put else []
    text = "".join(rows)
    try:
        compile(text, "<only>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    return text


def _origin(rel: str) -> str:
    """The project's test file a variants' copy was made from (itself otherwise)."""
    path = PurePosixPath(rel)
    if path.name.startswith(VARY_PREFIX):
        return str(path.with_name(path.name[len(VARY_PREFIX) :]))
    return rel


def _steer(
    ws: Workspace, changed: dict[str, list[int]], parent_files: dict[str, str | None]
) -> Steer:
    """What the changed lines of every changed module test, together."""
    parts = [
        steer_from_change(ws.read(p) or "", parent_files.get(p), set(lines))
        for p, lines in changed.items()
    ]
    if len(parts) == 1:
        return parts[0]
    merged: dict[str, Any] = {}
    for f in dataclasses.fields(Steer):
        values = [getattr(s, f.name) for s in parts]
        if f.type in ("bool", bool):
            merged[f.name] = any(values)
        else:
            merged[f.name] = tuple(dict.fromkeys(x for v in values for x in v))
    return Steer(**merged)


def _changed_lines(ws: Workspace, fw: Framework, targets: list[Target]) -> dict[str, list[int]]:
    out: dict[str, set[int]] = {}
    for t in targets:
        if t.path.endswith(".py") and not fw.is_test_name(t.path) and t.lines:
            out.setdefault(t.path, set()).update(t.lines)
    return {p: sorted(n) for p, n in out.items()}


def _test_files(ws: Workspace, fw: Framework, changed: list[str]) -> list[str]:
    """The project's test files: all of a small suite, else those that name a changed
    module (``naming_files``)."""
    every = [
        rel
        for rel in ws.files()
        if rel.endswith(".py")
        and fw.is_test_name(rel)
        and not _nova_file(rel)
        and not rel.endswith("conftest.py")
    ]
    if len(every) <= MAX_TEST_FILES:
        return every  # a small suite: all of it (tests import by relative imports too)
    return naming_files(changed, {rel: ws.read(rel) or "" for rel in every})[:MAX_TEST_FILES]


def naming_files(changed: list[str], texts: dict[str, str]) -> list[str]:
    """The files whose text names a changed module as a word: first those naming its last
    part (``parameters``), then those naming only its package (``oauthlib``, which every
    test of the project may name)."""
    own = {_module_name(p).rsplit(".", 1)[-1] for p in changed} - {"__init__", ""}
    packages = {_module_name(p).split(".", 1)[0] for p in changed} - own

    def words(names: set[str]) -> re.Pattern[str] | None:
        if not names:
            return None
        return re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")

    first, second = words(own), words(packages)
    named = [rel for rel, text in texts.items() if first and first.search(text)]
    return named + [
        rel for rel, text in texts.items() if rel not in named and second and second.search(text)
    ]


def _nova_file(rel: str) -> bool:
    return PurePosixPath(rel).name.startswith("test_nova_")


def _observe(
    ws: Workspace,
    fw: Framework,
    selected: list[str],
    changed: dict[str, list[int]],
    seed: int,
    seconds: float,
    test_seconds: float,
    max_tests: int = 0,
) -> Observed:
    """One run of pytest on ``selected`` (files, or node ids: their files are run and the
    plugin keeps only those tests, so an id pytest could not parse back is no error)."""
    scratch = ws.scratch()
    if not (scratch / "nova_probe.py").is_file():
        side_runner(scratch)
    plugins = ws.plugin_dir()
    if not (plugins / "nova_amp.py").is_file():
        shutil.copyfile(PLUGIN, plugins / "nova_amp.py")
    out = scratch / f"amp-{seed}-{time.monotonic_ns()}.json"
    plan = scratch / "amp-plan.json"
    plan.write_text(
        json.dumps(
            {
                "root": str(ws.root),
                "test_files": sorted({str(ws.root / n.split("::", 1)[0]) for n in selected}),
                "select": [n for n in selected if "::" in n],
                "changed": {str(ws.root / p): lines for p, lines in changed.items()},
                "out": str(out),
                "max_tests": max_tests,
            }
        ),
        encoding="utf-8",
    )
    run = ws.run(
        [
            *fw.run_files,
            *measured_args(ws.root),
            "-p",
            "nova_limits",
            "-p",
            "nova_amp",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            f"--nova-amp={plan}",
            "-q",
            "--continue-on-collection-errors",
            # in the order given: the files whose tests come first run first
            *dict.fromkeys(n.split("::", 1)[0] for n in selected),
        ],
        timeout=seconds,
        env={
            "PYTHONHASHSEED": str(seed),
            "PYTEST_NOVA_SECONDS": f"{test_seconds:g}",
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    )
    rows = out.read_text(encoding="utf-8").splitlines() if out.is_file() else []
    out.unlink(missing_ok=True)
    found = Observed()
    for row in rows:
        data = json.loads(row)
        if "test" in data:
            found.tests[data.pop("test")] = data
        found.capped = int(data.get("capped") or found.capped)
    if run.timed_out:
        found.stopped = f"stopped after {seconds:g} s"
    elif not found.tests:
        tail = run.output.strip().splitlines()[-1:] or ["no output"]
        found.error = tail[0][:200]
    return found


# -- comparing --------------------------------------------------------------------------


def _keyed(obs: Observed, node: str) -> dict[tuple[int, str, int], dict[str, Any]]:
    test = obs.tests.get(node) or {}
    return {(c["line"], c["name"], c["index"]): c for c in test.get("calls", [])}


def _outcome(call: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in call.items() if k not in ("line", "name", "index")}


WALKED = ("after", "object")  # outcomes shown by facts of an object


def _steady(runs: list[dict[tuple[int, str, int], dict[str, Any]]], key: Any) -> Any:
    """The outcome every run showed alike for ``key``, else None."""
    seen = [_outcome(r[key]) for r in runs if key in r]
    if len(seen) != len(runs):
        return None
    if any(s.get("filled") != seen[0].get("filled") for s in seen):  # not steady: unsaid
        seen = [{k: v for k, v in s.items() if k != "filled"} for s in seen]
    if any(s.get("task") != seen[0].get("task") for s in seen):
        return None
    if all(s["kind"] == seen[0]["kind"] for s in seen) and seen[0]["kind"] in WALKED:
        # a walk stops at its time limit: the facts every run showed alike
        others = [{json.dumps(f) for f in s["facts"]} for s in seen[1:]]
        facts = [f for f in seen[0]["facts"] if all(json.dumps(f) in o for o in others)]
        same = all(s.get("repr") == seen[0].get("repr") for s in seen)
        return {**seen[0], "facts": facts, "repr": seen[0].get("repr") if same else None}
    return seen[0] if all(s == seen[0] for s in seen) else None


def _pinnable(outcome: dict[str, Any]) -> bool:
    """Nothing that names an address, a temporary path or today's date."""
    text = json.dumps(outcome)
    today = time.strftime("%Y-%m-%d")
    y, m, d = time.localtime()[:3]
    return not (
        "0x" in text
        or _TEMP.search(text)
        or today in text
        or f"{y}, {m}, {d}" in text
        or outcome.get("kind") == "unshown"
    )


DIFFERENCES = 6  # differing calls of one test tried, in the order the test made them


# a run's own part of a value: an address, an object's id, a clock's reading
_NOISE = re.compile(r"0x[0-9a-fA-F]{6,}|\b\d{12,}\b|\b\d+\.\d{6,}\b")


_BRACED = re.compile(r"\{([^{}]*)\}")  # a set's display: its order may be the run's own


def _masked(outcome: dict[str, Any]) -> dict[str, Any]:
    """The outcome with what is a run's own part masked (``_NOISE``), the items of a
    braced display in a fixed order."""
    text = _NOISE.sub("0", json.dumps(outcome))
    text = _BRACED.sub(lambda m: "{" + ", ".join(sorted(m[1].split(", "))) + "}", text)
    try:
        masked: dict[str, Any] = json.loads(text)
    except json.JSONDecodeError:
        return outcome
    return masked


def _differences(
    node: str, first: Observed, head2: Observed, parents: list[Observed], masked: bool = False
) -> list[Difference]:
    """The calls of the test whose steady outcome differs between the sides, in order
    (the first one that can be written is: the test's body passes on both sides, so
    cutting it after a later call is as sound as after the first). ``masked``: compared
    without the parts of a value that differ from run to run (an id, an address, a
    clock's reading), which tells the tests worth a second run on each side first."""
    # an input variant may fail on the head after its calls (the original's asserts on
    # another input): the calls it made before that ran, and the test is cut there
    rel = node.split("::", 1)[0]
    variant = _origin(rel) != rel
    if not variant and not all((o.tests.get(node) or {}).get("passed") for o in (first, head2)):
        return []
    out: list[Difference] = []
    head = [_keyed(first, node), _keyed(head2, node)]
    parent = [_keyed(p, node) for p in parents]
    done: set[tuple[int, str]] = set()  # a call's line: its first difference only
    for key in head[0]:
        if key[:2] in done:
            continue
        mine, theirs = _steady(head, key), _steady(parent, key)
        if masked and mine is not None and theirs is not None:
            mine, theirs = _masked(mine), _masked(theirs)
        if mine is None or theirs is None or mine == theirs:
            continue
        task = _task_differs(mine, theirs) or _only_differs("filled", mine, theirs)
        if mine["kind"] == theirs["kind"] and mine["kind"] in ("after", "object") and not task:
            narrowed = _narrowed(mine, theirs)
            if narrowed is None:
                continue
            mine, theirs = narrowed
        if not _pinnable(mine):
            continue
        params = (first.tests.get(node) or {}).get("params")
        found = Difference(node, key[0], key[1], key[2], mine, theirs, params)
        series = _series(head, parent, key)
        found.series = series if series and all(_pinnable(o) for o in series[0]) else None
        done.add(key[:2])
        out.append(found)
        if len(out) >= DIFFERENCES:
            break
    return out


def _series(
    head: list[dict[tuple[int, str, int], dict[str, Any]]],
    parent: list[dict[tuple[int, str, int], dict[str, Any]]],
    key: tuple[int, str, int],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """Every occurrence of the call at its line on each side (a loop's iterations): the
    steady outcomes in order; None when one is not steady or the runs of a side made
    the call a different number of times."""

    def side(runs: list[dict[tuple[int, str, int], dict[str, Any]]]) -> list[Any] | None:
        counts = {sum(1 for k in r if k[:2] == key[:2]) for r in runs}
        if len(counts) != 1:
            return None
        outcomes = [_steady(runs, (key[0], key[1], i)) for i in range(counts.pop())]
        return None if any(o is None for o in outcomes) else outcomes

    mine, theirs = side(head), side(parent)
    return None if mine is None or theirs is None else (mine, theirs)


def _narrowed(
    mine: dict[str, Any], theirs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """An object (or what a call left in its receiver) on both sides: the one thing to
    assert of it — its repr when both are text that differs, else its first fact that
    differs (of those that can be pinned)."""
    kind = mine["kind"]
    texts = mine.get("repr"), theirs.get("repr")
    if texts[0] and texts[1] and texts[0] != texts[1] and _pinnable({"v": texts[0]}):
        return {"kind": "repr", "value": mine["repr"]}, {"kind": "repr", "value": theirs["repr"]}
    facts = [f for f in mine["facts"] if _pinnable({"v": f})]
    fact = _differing_fact(facts, theirs["facts"])
    if fact is None:
        return None
    return {"kind": kind, "facts": [fact[0]]}, {"kind": kind, "facts": [fact[1]]}


def _differing_fact(
    mine: list[list[Any]], theirs: list[list[Any]]
) -> tuple[list[Any], list[Any]] | None:
    """The first fact of the receiver both sides show with different values."""
    other = {f[0]: f for f in theirs}
    for fact in mine:
        twin = other.get(fact[0])
        if twin is not None and twin[1] != fact[1]:
            return fact, twin
    return None


def _writable(
    found: list[list[Difference]], sources: dict[str, str], notes: list[str]
) -> list[tuple[Difference, Written]]:
    """Each test's first difference that can be written, with its test."""
    out = []
    for ds in found:
        why = ""
        for d in ds:
            built = amplified_test(sources.get(d.node.split("::", 1)[0], ""), d)
            if not isinstance(built, str):
                out.append((d, built))
                break
            why = why or built
        else:
            notes.append(f"amplify: {ds[0].node}: no test: {why}")
    return out


def _chosen(
    found: list[tuple[Difference, Written]], targets: list[Target], changed: dict[str, list[int]]
) -> list[tuple[Difference, Written]]:
    """Up to ``PER_TARGET`` per changed target: different callees first, one per test
    function (its parametrized cases would be written under one name), the project's
    own tests before their variants, and at most ``PER_TARGET`` of one difference (the
    same callee, head's and the parent's outcome alike: each costs runs of the gates)."""
    cap = PER_TARGET * max(1, len({(t.path, t.qualname) for t in targets if t.path in changed}))
    first: list[tuple[Difference, Written]] = []
    rest: list[tuple[Difference, Written]] = []
    names: set[str] = set()
    units: dict[str, tuple[Difference, Written]] = {}
    for pair in sorted(found, key=lambda p: bool(p[0].variant)):
        units.setdefault(pair[0].node.split("[", 1)[0], pair)
    alike: dict[tuple[str, str, str], int] = {}
    for pair in units.values():
        d = pair[0]
        kind = (d.name, json.dumps(d.head, sort_keys=True), json.dumps(d.parent, sort_keys=True))
        alike[kind] = alike.get(kind, 0) + 1
        if alike[kind] > PER_TARGET:
            continue
        (rest if d.name in names else first).append(pair)
        names.add(d.name)
    return (first + rest)[:cap]


# -- writing ----------------------------------------------------------------------------


def _write(
    ws: Workspace,
    run: list[str],
    found: list[tuple[Difference, Written]],
    sources: dict[str, str],
    facts: dict[str, dict[str, list[dict[str, object]]]] | None,
    notes: list[str],
) -> int:
    by_file: dict[str, list[tuple[Difference, Written]]] = {}
    for d, built in found:  # a variant's test goes with the tests of the file it copies
        by_file.setdefault(_origin(d.node.split("::", 1)[0]), []).append((d, built))
    count = 0
    for rel, tests in sorted(by_file.items(), key=lambda kv: -len(kv[1]))[:MAX_FILES]:
        # a variants' copy holds the original module's text and more
        made_from = {d.node.split("::", 1)[0] for d, _ in tests}
        collected = tuple(n.split("::", 1)[1] for n in run if n.split("::", 1)[0] in made_from)
        text = amplified_module(
            sources[max(made_from, key=lambda r: len(sources.get(r, "")))],
            [(d.node.split("[", 1)[0].split("::")[1:], w) for d, w in tests],
            collected,
        )
        stem = PurePosixPath(rel).stem.removeprefix("test_").removesuffix("_test")
        target = str(PurePosixPath(rel).with_name(f"{AMPLIFIED}{stem}.py"))
        try:
            target = ws.write_test(target, text)
        except WriteRefused as exc:
            notes.append(f"amplify: {exc}")
            continue
        count += len(tests)
        mine = facts.setdefault(target, {}) if facts is not None else {}
        for d, _ in tests:
            parts = d.node.split("[", 1)[0].split("::")[1:]
            unit = "::".join([*parts[:-1], _renamed(parts[-1])])
            mine[unit] = [_fact(d)]
            notes.append(
                f"amplify wrote {target}::{unit} from {d.amplifies}: {d.name} gave "
                f"{_shown(d.head)} on the head, {_shown(d.parent)} on the parent"
            )
    return count


def _renamed(name: str) -> str:
    return f"{name}_changed"


def _shown(outcome: dict[str, Any]) -> str:
    if outcome["kind"] == "raises":
        message = outcome.get("message")
        return f"raises {outcome['type']}" + (f"({message!r})" if message else "")
    if outcome["kind"] in ("after", "object"):
        fact = outcome["facts"][0]
        left = "None, leaving " if outcome["kind"] == "after" else ""
        return f"{left}{fact[0].replace('{r}', 'it')} == {fact[1]}"
    return str(outcome.get("value"))[:200]


def _fact(d: Difference) -> dict[str, object]:
    return {
        "call": d.head.get("asserted", d.name),
        "head": _shown(d.head),
        "parent": _shown(d.parent),
        "changed": True,
        "new_name": False,
        "reaches": [],
        "amplifies": d.amplifies,
    }


@dataclass
class Written:
    """An amplified test: the imports its asserted values need, and its source lines."""

    imports: list[str]
    lines: list[str]


def amplified_test(source: str, d: Difference) -> Written | str:
    """The test function of ``d.node`` (in ``source``), renamed, cut after the statement
    holding the differing call, with head's outcome asserted there: its lines. A string
    says why it cannot be written."""
    parts = d.node.split("::")[1:]
    parts[-1] = parts[-1].split("[", 1)[0]
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "its module does not parse"
    func = _function(tree, parts)
    if func is None:
        return "its function was not found in the module"
    if _task_only(d):
        return _task_checked(func, d)
    where = _statement(func.body, d.line, opened="kind" in d.parent)
    if isinstance(where, str):
        return where
    body, index = where.body, where.index
    stmt = body[index]
    target = _target(stmt, d)
    if target is None:
        return f"the call of {d.name} was not found on line {d.line}"
    if _only_differs("filled", d.head, d.parent):
        if where.loop is not None:
            return "the call filled its argument otherwise inside a loop"
        checks = _filled_checks(stmt, target, d)
        if isinstance(checks, str):
            return checks
    elif where.loop is not None:
        checks = looped_checks(func, where.loop, body, index, target, d)
        if isinstance(checks, str):
            return checks
    else:
        comp = comprehension_of(stmt, target, d)
        if isinstance(comp, str):
            return comp
        if comp is None and d.index > 0:
            return f"the call of {d.name} differs at its occurrence {d.index + 1} on its line"
        checks = _checks(stmt, comp or target, d)
        if isinstance(checks, str):
            return checks
    if "kind" not in d.parent:
        return "the parent's outcome of the call is not known"
    bound = _bind_params(func, d.params) if "[" in d.node else []
    if isinstance(bound, str):
        return bound
    head_imports = list(d.head.get("imports") or [])
    if d.head["kind"] in ("after", "object"):
        head_imports += list(d.head["facts"][0][2])
    d.head.setdefault("asserted", ast.unparse(target))
    if where.loop is None:
        del body[index:]
        body.extend(checks)
    for name, (shown, imports) in reversed(bound):
        func.body.insert(0, ast.parse(f"{name} = {shown}").body[0])
        head_imports += imports
    func.name = _renamed(func.name)
    comment = f"Nova: amplified from {d.amplifies}; on the parent {d.name} gave {_shown(d.parent)}"
    return _written(head_imports, comment, func)


def _task_only(d: Difference) -> bool:
    return _task_differs(d.head, d.parent)


def _task_differs(mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """The call ended alike on both sides but left the test's own task otherwise (a
    cancellation still pending after an ``async with``)."""
    return _only_differs("task", mine, theirs)


def _only_differs(key: str, mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """The outcomes differ in ``key`` only."""
    if key not in mine or mine.get(key) == theirs.get(key):
        return False
    rest = [{k: v for k, v in o.items() if k != key} for o in (mine, theirs)]
    return rest[0] == rest[1]


def _filled_checks(stmt: ast.stmt, target: ast.expr, d: Difference) -> list[ast.stmt] | str:
    """The statement, then what head's call left in a list or dict the test passed to
    it (``parse(text, out)``, then ``assert out == [...]``)."""
    call = target.value if isinstance(target, ast.Await) else target
    if not isinstance(call, ast.Call):
        return "the call that filled its argument was not found"
    theirs = d.parent.get("filled") or {}
    for name, (position, shown) in d.head["filled"].items():
        if theirs.get(name, [None, None])[1] == shown:
            continue
        given = [k.value for k in call.keywords if k.arg == name]
        plain = [a for a in call.args[: position + 1] if not isinstance(a, ast.Starred)]
        if not given and len(plain) == position + 1 == len(call.args[: position + 1]):
            given = [call.args[position]]
        if given and _plain(given[0]):
            arg = ast.unparse(given[0])
            d.head = {"kind": "value", "value": shown, "asserted": arg}
            d.parent = {"kind": "value", "value": str(theirs.get(name, [None, "?"])[1])}
            return [stmt, *ast.parse(f"assert {arg} == {shown}").body]
    return "the argument the call filled is not a name the test reads again"


def _task_checked(func: ast.FunctionDef | ast.AsyncFunctionDef, d: Difference) -> Written | str:
    """The test cut after its statement holding the call (a whole ``with`` block, an
    ``async with`` in it), then head's count of the task's pending cancellations."""
    if not isinstance(func, ast.AsyncFunctionDef) or d.index > 0 or "[" in d.node:
        return "the task's state differs at a call that is not the first of an async test"
    body = func.body
    at = next(
        (i for i, s in enumerate(body) if s.lineno <= d.line <= (s.end_lineno or s.lineno)), None
    )
    if at is None or isinstance(body[at], ast.For | ast.AsyncFor | ast.While | ast.Try):
        return "the task's state differs at a call inside a loop or a try block"
    check = f"asyncio.current_task().cancelling() == {int(d.head['task'])}"
    del body[at + 1 :]
    body.append(ast.parse(f"assert {check}").body[0])
    d.head = {"kind": "value", "value": str(d.head["task"]), "asserted": check.split(" ==")[0]}
    d.parent = {"kind": "value", "value": str(d.parent.get("task"))}
    func.name = _renamed(func.name)
    comment = (
        f"Nova: amplified from {d.amplifies}; on the parent {d.parent['value']} after {d.name}"
    )
    return _written(["import asyncio"], comment, func)


def _written(
    imports: list[str], comment: str, func: ast.FunctionDef | ast.AsyncFunctionDef
) -> Written | str:
    """The test's lines under its comment, every line of which stays a comment (a
    variant's literal or a shown value may span lines); a string if they do not load."""
    lines = [f"# {row}".rstrip() for row in comment[:300].splitlines() or [""]]
    lines += ast.unparse(func).splitlines()
    try:
        compile("\n".join([*imports, *lines]), "<amplified>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"the written test does not compile ({type(exc).__name__}: {exc.msg})"
    return Written(imports, lines)


def _bind_params(
    func: ast.FunctionDef | ast.AsyncFunctionDef, params: dict[str, Any] | None
) -> list[tuple[str, list[Any]]] | str:
    """A parametrized case made plain: the function's own ``parametrize`` marks taken
    off, their argument names taken out of its signature, and (name, [source, imports])
    to bind at its start. A string says why it cannot be."""
    if not params or any(v is None for v in params.values()):
        return "a parametrized case whose arguments have no source form"
    names: set[str] = set()
    kept = []
    for deco in func.decorator_list:
        if isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("parametrize"):
            if any(k.arg == "indirect" for k in deco.keywords) or not deco.args:
                return "a parametrized case with indirect arguments"
            first = deco.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names |= {n.strip() for n in first.value.split(",") if n.strip()}
            elif isinstance(first, ast.List | ast.Tuple):
                names |= {str(e.value) for e in first.elts if isinstance(e, ast.Constant)}
            continue
        kept.append(deco)
    if names != set(params):
        return "a case parametrized outside its function (a class mark, a fixture's params)"
    func.decorator_list = kept
    args = func.args
    args.args = [a for a in args.args if a.arg not in names]
    args.defaults = args.defaults[-len(args.args) :] if args.args else []
    return [(n, params[n]) for n in params]


def _function(tree: ast.Module, parts: list[str]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    body: list[ast.stmt] = tree.body
    for part in parts[:-1]:
        cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if cls is None:
            return None
        body = cls.body
    return next(
        (
            n
            for n in body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == parts[-1]
        ),
        None,
    )


_EXPECTING = re.compile(r"raises|Raises|warns|Warns|suppress|assertLogs|deprecated_call")


def _expects(expr: ast.expr) -> bool:
    """A context manager that catches what its block raises (``pytest.raises``,
    ``self.assertRaises``, ``contextlib.suppress``): cut short, its block would not."""
    func = expr.func if isinstance(expr, ast.Call) else expr
    return _EXPECTING.search(ast.unparse(func)) is not None


@dataclass
class Place:
    """Where the differing call's statement stands: its block and index there, and the
    outermost loop holding it (that loop's block and index), if any."""

    body: list[ast.stmt]
    index: int
    loop: tuple[list[ast.stmt], int] | None = None


_RAISES = re.compile(r"(^|\.)(raises|assertRaises|assertRaisesRegex)$")


def _statement(
    body: list[ast.stmt],
    line: int,
    loop: tuple[list[ast.stmt], int] | None = None,
    opened: bool = True,
) -> Place | str:
    """The simple statement holding ``line`` (in the function's body, or a ``with``,
    ``if`` or loop block of it) and the block it sits in. A ``pytest.raises`` block
    holding it is opened (its statements put in its place: cut after the call, the
    written test asserts the call's own outcome)."""
    for i, stmt in enumerate(body):
        if not stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            continue
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            if not stmt.body or line < stmt.body[0].lineno:
                return "the call is in a loop's header"
            if stmt.orelse and line >= stmt.orelse[0].lineno:
                return "the call is in a loop's else block"
            return _statement(stmt.body, line, loop or (body, i), opened)
        if isinstance(stmt, ast.With | ast.AsyncWith):
            if not stmt.body or line < stmt.body[0].lineno:
                return "the call is in a with statement's header"
            if any(_expects(item.context_expr) for item in stmt.items):
                if len(stmt.items) != 1 or not _raises(stmt.items[0].context_expr):
                    return "the call is inside a block that expects a warning or a log"
                if not opened:
                    return "the call is inside a block that expects an exception (parent unknown)"
                body[i : i + 1] = stmt.body
                return _statement(body, line, loop, opened)
            return _statement(stmt.body, line, loop, opened)
        if isinstance(stmt, ast.If):
            for block in (stmt.body, stmt.orelse):
                if block and block[0].lineno <= line <= (block[-1].end_lineno or 0):
                    inner = _statement(block, line, loop, opened)
                    if isinstance(inner, Place) and block is stmt.orelse:
                        return "the call is in an else branch"
                    return inner
            return "the call is in an if statement's test"
        if isinstance(stmt, ast.Try | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return "the call is inside a try block or a nested definition"
        if hasattr(ast, "TryStar") and isinstance(stmt, ast.TryStar):
            return "the call is inside a try block"
        if isinstance(stmt, ast.Match):
            return "the call is inside a match statement"
        return Place(body, i, loop)
    return f"no statement of the test holds line {line}"


def _raises(expr: ast.expr) -> bool:
    """``pytest.raises(E)``, ``self.assertRaises(E)``: a block that expects an exception."""
    func = expr.func if isinstance(expr, ast.Call) else expr
    return _RAISES.search(ast.unparse(func)) is not None


def _target(stmt: ast.stmt, d: Difference) -> ast.expr | None:
    """The call (or property read) of ``d.name`` in the statement: one of them, or the
    one starting on ``d.line``."""
    parts = d.name.split(".")
    if any(p.startswith("<") for p in parts[:-1]):
        return None  # a function defined inside another: not named in the test
    short = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
    if short.startswith("__"):
        return None  # an operator's method: no call names it
    calls: list[ast.expr] = []
    properties: list[ast.expr] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == short:
                calls.append(node)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == short
            and isinstance(node.ctx, ast.Load)
        ):
            properties.append(node)
    funcs = {id(c.func) for c in calls if isinstance(c, ast.Call)}
    found = calls or [p for p in properties if id(p) not in funcs]
    if not found:
        return None
    if len(found) > 1:
        found = [c for c in found if c.lineno == d.line]
    if len(found) != 1:
        return None
    # an awaited call's value is the await's (the call alone gives a coroutine)
    awaited = [n for n in ast.walk(stmt) if isinstance(n, ast.Await) and n.value is found[0]]
    return awaited[0] if awaited else found[0]


def _checks(stmt: ast.stmt, target: ast.expr, d: Difference) -> list[ast.stmt] | str:
    """What replaces the statement: it (when it binds the value) or the call alone, and
    the assert of head's outcome."""
    head = d.head
    bound = (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.value is target
    )
    value = ast.Name(stmt.targets[0].id) if bound else target  # type: ignore[attr-defined]
    keep: list[ast.stmt] = [stmt] if bound else []
    if head["kind"] == "raises":
        match = f", match={re.escape(head['message'])!r}" if head.get("message") else ""
        check = f"with pytest.raises({head['type']}{match}):\n    {ast.unparse(target)}"
        head.setdefault("imports", []).append("import pytest")
        return ast.parse(check).body
    if head["kind"] == "value":
        return [*keep, *ast.parse(f"assert {ast.unparse(value)} == {head['value']}").body]
    if head["kind"] == "repr":
        return [*keep, *ast.parse(f"assert repr({ast.unparse(value)}) == {head['value']!r}").body]
    if head["kind"] == "after":
        receiver: ast.expr | None = None
        call = target.value if isinstance(target, ast.Await) else target
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            receiver = call.func.value
        elif bound and d.name.endswith(".__init__"):
            receiver = value
        if receiver is None or not _plain(receiver):
            return "the call's receiver is not a name the test can read again"
        expr, shown = head["facts"][0][0], head["facts"][0][1]
        check = f"assert {expr.replace('{r}', ast.unparse(receiver))} == {shown}"
        return [stmt, *ast.parse(check).body]
    if head["kind"] == "object":
        expr, shown = head["facts"][0][0], head["facts"][0][1]
        check = f"assert {expr.replace('{r}', ast.unparse(value))} == {shown}"
        return [*keep, *ast.parse(check).body]
    return f"head's outcome cannot be asserted ({head['kind']})"


def _plain(node: ast.expr) -> bool:
    """A name or a chain of attributes of one: reading it again changes nothing."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def amplified_module(
    source: str, tests: list[tuple[list[str], Written]], collected: tuple[str, ...] = ()
) -> str:
    """The original module's imports and non-test statements, with the amplified tests
    (each: its class path and name, and the lines ``amplified_test`` made) in place of
    its tests. ``collected``: the names the module's tests ran under (``Class::test``),
    which tell the tests a class inherits. What the kept code reads stays defined: a
    ``Test*`` name imported or defined here (a helper class, a client, a base class
    with tests of its own: kept without its tests); what it does not read is left out,
    so no other test of the project is collected from this module again."""
    tree = ast.parse(source)
    classes = {parts[0] for parts, _ in tests if len(parts) > 1}
    written = "\n".join(line for _, w in tests for line in [*w.imports, *w.lines])
    needed = _needed(tree, classes, _read(ast.parse(written)))
    imports: list[str] = []
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            continue
        if isinstance(node, ast.ClassDef):
            if node.name in classes:
                mine = [lines for parts, lines in tests if parts[0] == node.name]
                out.append(_class_with(node, mine, _inherited(node, collected)))
                continue
            if _tests_of(node) or node.name.startswith("Test"):
                if node.name in needed:  # a base or a helper the kept code reads
                    out.append(_class_with(node, [], _inherited(node, collected)))
                continue
        if isinstance(node, ast.ImportFrom | ast.Import):
            node.names = [
                a
                for a in node.names
                if not (a.asname or a.name).startswith("Test") or (a.asname or a.name) in needed
            ]
            if not node.names:
                continue
        out.append(ast.unparse(node))
    for parts, w in tests:
        imports += w.imports
        if len(parts) == 1:
            out.append("\n".join(w.lines))
    head = [ast.unparse(n) for n in tree.body[:1] if ast.get_docstring(tree) is not None]
    head += [ast.unparse(n) for n in tree.body if _future(n)]
    extra = [i for i in dict.fromkeys(imports) if i not in head and i not in out]
    body = [o for o in out if o not in head]
    return "\n\n".join([*head, *extra, *body]) + "\n"


def _tests_of(node: ast.ClassDef) -> list[str]:
    return [
        n.name
        for n in node.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")
    ]


def _inherited(node: ast.ClassDef, collected: tuple[str, ...]) -> set[str]:
    """The tests ``node`` ran that it does not define (a mixin's, a base's)."""
    own = {n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    return {
        c.split("::")[1].split("[", 1)[0]
        for c in collected
        if c.count("::") == 1 and c.split("::")[0] == node.name
    } - own


def _read(*nodes: ast.AST) -> set[str]:
    """The names ``nodes`` read (``a`` of ``a.b.c``, a base class, a decorator)."""
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def _members_read(node: ast.ClassDef) -> set[str]:
    """What a class kept without its tests reads: its bases, decorators, other members."""
    members = [
        n
        for n in node.body
        if not (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"))
    ]
    return _read(*node.bases, *node.keywords, *node.decorator_list, *members)


def _needed(tree: ast.Module, classes: set[str], read: set[str]) -> set[str]:
    """The names the kept code reads: the amplified tests' (``read``), those of the
    module's statements that stay, and, in turn, of each class they read that would
    otherwise be left out (to a fixpoint: a base class's own base)."""
    droppable: dict[str, ast.ClassDef] = {}
    needed = set(read)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            continue
        if isinstance(node, ast.ClassDef):
            if node.name not in classes and (_tests_of(node) or node.name.startswith("Test")):
                droppable[node.name] = node
            else:
                needed |= _members_read(node)
        elif not isinstance(node, ast.Import | ast.ImportFrom):
            needed |= _read(node)
    todo = [n for n in needed if n in droppable]
    while todo:
        name = todo.pop()
        if name in droppable:
            more = _members_read(droppable.pop(name))
            todo += [n for n in more - needed if n in droppable]
            needed |= more
    return needed


def _future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _class_with(node: ast.ClassDef, tests: list[Written], inherited: set[str]) -> str:
    """The class with its non-test members and the amplified tests only: the tests it
    inherits (from a mixin of another module) are set to None, which no runner collects."""
    node.body = [
        n
        for n in node.body
        if not (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"))
    ] or [ast.Pass()]
    node.body += [ast.parse(f"{name} = None").body[0] for name in sorted(inherited)]
    text = ast.unparse(node)
    methods = []
    for written in tests:
        methods.append("\n".join("    " + line if line else line for line in written.lines))
    return text + "\n\n" + "\n\n".join(methods)
