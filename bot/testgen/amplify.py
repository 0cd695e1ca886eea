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
import builtins
import dataclasses
import json
import keyword
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from bot.testgen.amplify_adds import adding_first
from bot.testgen.amplify_calls import ADDED, CallPlan, add_calls, call_plan, order_tests
from bot.testgen.amplify_drops import leaving_out_first
from bot.testgen.amplify_flags import FlagPlan, changed_modules
from bot.testgen.amplify_flags import marked as flags_marked
from bot.testgen.amplify_inputs import Steer, Variant, add_variants, steer_from_change
from bot.testgen.amplify_order import Aims, aims_of, container_variants
from bot.testgen.amplify_streams import written_differs
from bot.testgen.amplify_warns import warned_differences, warned_first
from bot.testgen.amplify_write import (
    CALLS_PREFIX,
    VARY_PREFIX,
    Difference,
    Written,
    amplified_module,
    amplified_test,
    changed_name,
    only_differs,
    origin,
    outcome_text,
    task_differs,
)
from bot.testgen.differential import side_runner
from bot.testgen.frameworks import Framework, nova_written
from bot.testgen.ghostwriter import _module_name
from bot.testgen.matrix import Target
from bot.testgen.runners.python import measured_args
from bot.testgen.steady_parts import of_runs
from bot.testgen.workspace import MAX_TEST_BYTES, Workspace, WriteRefused

__all__ = [
    "AMPLIFIED",
    "Observed",
    "amplifiable",
    "generate_amplified",
    "naming_files",
    "pins_behaviour",
    "unpinned",
]

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
ORDERED = 4  # of them, per test, with a whole container changed (amplify_order)
MAX_CALLS = 32  # copies with one call added on an object the test builds (amplify_calls)
CALLS_EACH = 4  # of them, per test
OTHERS_CALLS = 8  # tests that ran no changed line, given a changed function's call
CALLS_SECONDS = 6.0  # their run on each side
# not less when the budget is halved: one pytest start with a heavy import takes seconds
CALLS_LEAST = 5.0
# where a temporary path starts: pytest's own folder wherever TMPDIR points, or a
# system temporary folder
_TEMP_ROOTS = r"/tmp/|pytest-of-|/var/folders/|\\\\Temp\\\\"
_TEMP = re.compile(_TEMP_ROOTS)


@dataclass
class Observed:
    """One run's observations: node id -> {"changed", "passed", "calls"}."""

    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str = ""
    capped: int = 0
    stopped: str = ""  # the run hit its time limit: the tests that ended are here


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
    plan = call_plan(
        [(ws.read(t.path) or "", t.qualname, list(t.lines)) for t in targets if t.path in changed],
        list(sources.values()),
        changed_modules({p: (ws.read(p) or "", old) for p, old in parent_files.items()}),
    )
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
    if not ran and not plan.functions:  # (a changed function may take a value they make)
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
        plan,
    )
    writable = _writable(found, sources, notes)
    chosen = _chosen(writable, targets, changed)
    written = _write(ws, list(first.tests), chosen, sources, facts, notes)
    notes.append(f"amplify: {written} test(s) written in {time.monotonic() - started:.1f} s")
    return notes


# a call one side's signature refuses: the parameters changed, no behaviour was compared
_SIGNATURE = re.compile(
    r"TypeError\(.*(?:takes \d+ positional arguments? but \d+ (?:were|was) given"
    r"|got an unexpected keyword argument|missing \d+ required (?:positional|keyword-only))"
)


def pins_behaviour(fact: dict[str, Any]) -> bool:
    """Whether a fact of the differential generator's tests pins a changed behaviour: the
    sides differ, in a name both have, and neither refused the call's arguments."""
    if not fact.get("changed") or fact.get("new_name"):
        return False
    sides = f"{fact.get('head') or ''} {fact.get('parent') or ''}"
    return not _SIGNATURE.search(sides)


def unpinned(
    targets: list[Target], facts: dict[str, dict[str, list[dict[str, Any]]]]
) -> list[Target]:
    """The changed targets no fact of the differential generator's tests pins: neither
    the function a pinning test calls nor one it reaches."""
    pinned: set[str] = set()
    for rows in facts.values():
        for found in rows.values():
            for f in found:
                if pins_behaviour(f):
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
    plan: CallPlan | None = None,
) -> list[list[Difference]]:
    """The parent once on every test that ran a changed line (and the variants, with
    their head run), then the head and the parent again only on the tests whose values
    differed: each test's steady differences."""
    described: dict[str, str] = {}  # a variant's node -> what it changed
    share = min(1.0, budget / SECONDS)
    steer = _steer(ws, changed, parent_files)
    aims = aims_of(_changed_rows(ws, changed, parent_files))
    own = list(ran)  # the project's own tests: the copies below are made of them
    extra = _variants(ws, ran, sources, (steer, aims), described, notes)
    if extra:
        # the smaller copies first: a big one stopped by the time limit leaves them a turn
        nodes = [n for _, ns in sorted(extra, key=lambda e: len(e[1])) for n in ns]
        more = _observe(ws, fw, nodes, changed, 0, PARENT_SECONDS * share, test_seconds)
        first.tests.update(more.tests)
        ran = ran + [n for n in nodes if n in more.tests]
    # the copies with a call added run on their own on each side: behind a big suite's
    # own tests in one run, its time limit would stop the parent before them
    # the other passing tests, for a value they make to give a changed function
    others = [n for n, t in first.tests.items() if t.get("passed") and n not in own]
    rows = _changed_rows(ws, changed, parent_files)
    others = _nearest(others, sources, rows)  # those that share the changed lines' words
    calls = _call_variants(ws, own, sources, plan, described, notes, others) if plan else []
    calls_seconds = max(CALLS_SECONDS * share, CALLS_LEAST)
    called = [n for _, ns in calls for n in ns]
    if called:
        more = _observe(ws, fw, called, changed, 0, calls_seconds, test_seconds)
        first.tests.update(more.tests)
        called = [n for n in called if n in more.tests]
    if not ran and not called:  # no test ran a changed line, and no copy was made
        for rel, _ in extra:
            ws.remove_test(rel)
        return []
    with ws.replaced(parent_files):
        parent = (
            _observe(ws, fw, ran, changed, 0, PARENT_SECONDS * share, test_seconds)
            if ran
            else Observed()
        )
        if called and not parent.error:
            theirs = _observe(ws, fw, called, changed, 0, calls_seconds, test_seconds)
            parent.tests.update(theirs.tests)  # a failed run of them costs only them
    ran = ran + called
    extra += calls
    seen = _worth_confirming(ran, first, parent)[:MAX_CONFIRMED]
    seen = warned_first(seen, ran, first, parent, MAX_CONFIRMED)  # (amplify_warns)
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
    found = warned_differences(seen, found, [first, head2], [parent, parent2], notes)
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
    real = [n for n in differ if _differences(n, head, head, [parent], masked=1)]
    # a test that draws numbers or ids of its own (randint, uuid4): after those that
    # differ beyond them too, which its draws crowd out of the few confirmed otherwise
    clear = [n for n in real if _differences(n, head, head, [parent], masked=2)]
    return clear + [n for n in real if n not in clear] + [n for n in differ if n not in real]


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


def _file_variants(
    source: str, qualnames: list[str], steering: tuple[Steer, Aims], each: int, left: int
) -> tuple[str, list[tuple[str, Variant]]]:
    """One test module's copy with at most ``left`` input variants of its tests
    ``qualnames`` (``each`` per test), and which test each variant is of."""
    text, out = _only(source, qualnames), []
    for qualname in qualnames:
        if left <= 0:
            break
        # whole containers first (few, aimed), then one literal at a time
        text, whole = container_variants(text, qualname, *steering, min(ORDERED, left))
        text, made = add_variants(text, qualname, steering[0], min(each, left - len(whole)))
        left -= len(whole) + len(made)
        out += [(qualname, v) for v in whole + made]
    return text, out


def _variants(
    ws: Workspace,
    nodes: list[str],
    sources: dict[str, str],
    steering: tuple[Steer, Aims],
    described: dict[str, str],
    notes: list[str],
) -> list[tuple[str, list[str]]]:
    """Temporary copies of test modules with input variants of the tests in ``nodes``
    (``amplify_inputs.add_variants``: one literal input changed towards what the changed
    lines test), written beside the original as ``test_nova_vary_<file>`` with their new
    node ids; ``sources`` gets their text. Observed like the originals, then removed."""
    # a test that holds a part the changed conditions read, to leave out, first
    aimed = steering[0].drop_first
    nodes = adding_first(nodes, sources, steering[0].adds)  # or one it reads, to add
    nodes = leaving_out_first(nodes, sources, aimed, steering[0].drop_params)
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
        cap = left
        while True:
            text, made = _file_variants(sources.get(rel, ""), qualnames, steering, each, cap)
            # a long test copied many times: fewer copies, not none
            if len(text.encode()) <= MAX_TEST_BYTES or len(made) <= 1:
                break
            cap = len(made) // 2
        if cap < left and made:
            notes.append(
                f"amplify: {len(made)} input variant(s) of {rel}: more would be over the "
                f"{MAX_TEST_BYTES} byte limit of a test file"
            )
        left -= len(made)
        ids = [v.qualname for _, v in made]
        for qualname, v in made:
            described[v.qualname] = f"{qualname}, {v.description}"
        if not ids:
            continue
        temp = _copy_name(ws, rel, VARY_PREFIX)
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


def _call_variants(
    ws: Workspace,
    nodes: list[str],
    sources: dict[str, str],
    plan: CallPlan,
    described: dict[str, str],
    notes: list[str],
    others: list[str] | None = None,
) -> list[tuple[str, list[str]]]:
    """Temporary copies of test modules holding copies of the tests in ``nodes`` with one
    call added on an object they build (``amplify_calls``), ``CALLS_EACH`` per test and
    ``MAX_CALLS`` in all, the tests that fill their object in a rarer way first; then of
    the ``others`` (tests that ran no changed line) with a changed module function given
    a value they made (``OTHERS_CALLS`` at most); written beside the original as
    ``test_nova_vary_calls__<file>`` (only the copies kept), observed like the input
    variants, then removed."""

    def pairs(found: list[str]) -> list[tuple[str, str]]:
        return list(
            dict.fromkeys(
                (rel, rest.split("[", 1)[0].replace("::", "."))
                for rel, _, rest in (n.partition("::") for n in found)
                if rest
            )
        )

    tests = pairs(nodes)
    valued = replace(plan, methods={}, flags=FlagPlan()) if plan.functions else None
    ordered = [(t, plan) for t in order_tests(sources, tests, plan)]
    if valued is not None:
        rest = [t for t in pairs(others or []) if t not in tests]
        ordered += [(t, valued) for t in order_tests(sources, rest, valued)][:OTHERS_CALLS]
    texts: dict[str, str] = {}
    made: dict[str, list[Variant]] = {}
    shown: dict[tuple[str, str], str] = {}
    left = MAX_CALLS
    for (rel, qualname), used in ordered:
        if left <= 0:
            break
        text, copies = add_calls(
            texts.get(rel, sources.get(rel, "")), qualname, used, min(CALLS_EACH, left)
        )
        if copies:
            texts[rel] = text
            made.setdefault(rel, []).extend(copies)
            left -= len(copies)
            shown.update({(rel, v.qualname): f"{qualname}, {v.description}" for v in copies})
    out: list[tuple[str, list[str]]] = []
    for rel, copies in made.items():
        text = _only(texts[rel], [v.qualname for v in copies])
        ids = [v.qualname.replace(".", "::") for v in copies]
        temp = _copy_name(ws, rel, CALLS_PREFIX)
        try:  # refused over the size limit of a test file, like any write
            temp = ws.write_test(temp, text)
        except WriteRefused as exc:
            notes.append(f"amplify: no added calls in copies of {rel}: {exc}")
            continue
        sources[temp] = text
        out.append((temp, [f"{temp}::{i}" for i in ids]))
        for v, i in zip(copies, ids, strict=True):
            described[f"{temp}::{i}"] = shown[(rel, v.qualname)]
    if out:
        tested = {(rel, d.split(",", 1)[0]) for (rel, _), d in shown.items()}
        notes.append(
            f"amplify: {sum(len(ids) for _, ids in out)} copies of {len(tested)} test(s) "
            "with one call added on an object they build"
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


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def _nearest(nodes: list[str], sources: dict[str, str], rows: list[str]) -> list[str]:
    """``nodes`` (test ids), those whose function's text shares the most words with the
    changed ``rows`` first (a test of ``$ref`` schemas for a change that resolves refs),
    the file's order among equals."""
    wanted = set(_WORD.findall("\n".join(rows))) - set(dir(builtins)) - set(keyword.kwlist)
    if not wanted:
        return nodes
    texts: dict[str, dict[str, str]] = {}
    for rel in {n.partition("::")[0] for n in nodes}:
        texts[rel] = _function_texts(sources.get(rel, ""))

    def score(node: str) -> int:
        rel, _, rest = node.partition("::")
        name = rest.split("[", 1)[0].rsplit("::", 1)[-1]
        return len(wanted & set(_WORD.findall(texts[rel].get(name, ""))))

    return sorted(nodes, key=lambda n: -score(n))


def _function_texts(source: str) -> dict[str, str]:
    """A test module's functions (methods too) by name -> their text."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    return {
        node.name: ast.get_source_segment(source, node) or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _changed_rows(
    ws: Workspace, changed: dict[str, list[int]], parent_files: dict[str, str | None]
) -> list[str]:
    """The changed lines' text on the head, and the parent's lines the head lacks."""
    out: list[str] = []
    for path, lines in changed.items():
        head = (ws.read(path) or "").splitlines()
        out += [head[n - 1] for n in lines if 0 < n <= len(head)]
        kept = set(head)
        out += [row for row in (parent_files.get(path) or "").splitlines() if row not in kept]
    return out


def _changed_lines(ws: Workspace, fw: Framework, targets: list[Target]) -> dict[str, list[int]]:
    out: dict[str, set[int]] = {}
    for t in targets:
        if t.path.endswith(".py") and not fw.is_test_name(t.path) and t.lines:
            out.setdefault(t.path, set()).update(t.lines)
    return {p: sorted(n) for p, n in out.items()}


def amplifiable(ws: Workspace, fw: Framework, targets: list[Target]) -> bool:
    """Whether amplification would have tests to run: changed Python source lines and a
    test file that names a changed module (what ``generate_amplified`` looks for first)."""
    changed = _changed_lines(ws, fw, targets)
    return bool(changed) and bool(_test_files(ws, fw, sorted(changed)))


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


def _copy_name(ws: Workspace, rel: str, prefix: str) -> str:
    """Where a copy of the test file ``rel`` goes: ``<prefix><name>`` beside it, its
    ``test_`` the start of the project's ``python_files`` (``check_nova_vary_...``)."""
    path = PurePosixPath(rel)
    start = ws.framework.nova_file("").split("nova_")[0] if ws.framework else "test_"
    return str(path.with_name(start + prefix.removeprefix("test_") + path.name))


def _nova_file(rel: str) -> bool:
    return nova_written(rel)


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


def _seeded(obs: Observed, node: str) -> list[str]:
    """The global generators the test's body drew from in that run."""
    return [str(g) for g in (obs.tests.get(node) or {}).get("seeded") or []]


def _outcome(call: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in call.items() if k not in ("line", "name", "index", "ran", "streams")}


WALKED = ("after", "object")  # outcomes shown by facts of an object


def _steady(runs: list[dict[tuple[int, str, int], dict[str, Any]]], key: Any) -> Any:
    """The outcome every run showed alike for ``key``, else None."""
    seen = [_outcome(r[key]) for r in runs if key in r]
    if len(seen) != len(runs):
        return None
    # what the call left in a container passed to it, not steady or naming a temporary
    # path (a CLI's argument list holding ``tmp_path``): unsaid, the value still compared
    if any(
        s.get("filled") != seen[0].get("filled") or not _pinnable({"f": s.get("filled")})
        for s in seen
    ):
        seen = [{k: v for k, v in s.items() if k != "filled"} for s in seen]
    if any(s.get("task") != seen[0].get("task") for s in seen):
        return None
    if all(s["kind"] == seen[0]["kind"] for s in seen) and seen[0]["kind"] in WALKED:
        # a walk stops at its time limit: the facts every run showed alike
        others = [{json.dumps(f) for f in s["facts"]} for s in seen[1:]]
        facts = [f for f in seen[0]["facts"] if all(json.dumps(f) in o for o in others)]
        same = all(s.get("repr") == seen[0].get("repr") for s in seen)
        return {**seen[0], "facts": facts, "repr": seen[0].get("repr") if same else None}
    if all(s == seen[0] for s in seen):
        return seen[0]
    # alike but for each run's temporary directory (the parent's failed assert in a
    # helper names the test's ``tmp_path``): steady, and still never pinned (``_TEMP``)
    masked = [_temp_masked(s) for s in seen]
    return masked[0] if all(m == masked[0] for m in masked) else None


_TEMP_PATH = re.compile(rf"({_TEMP_ROOTS})[^\s'\"\\,;:)\]]*")


def _temp_masked(outcome: dict[str, Any]) -> dict[str, Any]:
    """The outcome with each temporary path written ``/tmp/...``."""
    text = json.dumps(outcome)
    if not _TEMP_PATH.search(text):
        return outcome
    masked: dict[str, Any] = json.loads(_TEMP_PATH.sub(r"\1...", text))
    return masked


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
_NOISE = re.compile(
    r"0x[0-9a-fA-F]{6,}|\b\d{12,}\b|\b\d+\.\d{6,}\b"
    r"|\b[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b"  # a uuid
)


_BRACED = re.compile(r"\{([^{}]*)\}")  # a set's display: its order may be the run's own


_DRAWN = re.compile(r"\d+")  # a number a test may have drawn (randint)


def _masked(outcome: dict[str, Any], deep: bool = False) -> dict[str, Any]:
    """The outcome with what is a run's own part masked (``_NOISE``; ``deep``: every
    number too), the items of a braced display in a fixed order."""
    text = _NOISE.sub("0", json.dumps(outcome))
    text = _DRAWN.sub("0", text) if deep else text
    text = _BRACED.sub(_set_sorted, text)
    try:
        masked: dict[str, Any] = json.loads(text)
    except json.JSONDecodeError:
        return outcome
    return masked


def _set_sorted(braced: re.Match[str]) -> str:
    """A set's display with its items sorted; a dict's as it is (its order is the
    insertion's: the same in every run, and what an order change changes)."""
    items = braced[1].split(", ")
    if all(": " in item for item in items):
        return braced[0]
    return "{" + ", ".join(sorted(items)) + "}"


def _differences(
    node: str, first: Observed, head2: Observed, parents: list[Observed], masked: int = 0
) -> list[Difference]:
    """The calls of the test whose steady outcome differs between the sides, in order
    (the first one that can be written is: the test's body passes on both sides, so
    cutting it after a later call is as sound as after the first). ``masked``: compared
    without the parts of a value that differ from run to run (an id, an address, a
    clock's reading; at 2, every number too, in the part that differs), which tells the
    tests worth a second run on each side first."""
    # an input variant may fail on the head after its calls (the original's asserts on
    # another input): the calls it made before that ran, and the test is cut there
    rel = node.split("::", 1)[0]
    variant = origin(rel) != rel
    if not variant and not all((o.tests.get(node) or {}).get("passed") for o in (first, head2)):
        return []
    out: list[Difference] = []
    head = [_keyed(first, node), _keyed(head2, node)]
    parent = [_keyed(p, node) for p in parents]
    done: set[tuple[int, str]] = set()  # a call's line: its first difference only
    for key in head[0]:
        if key[:2] in done:
            continue
        if head[0][key].get("library") and not any(h.get(key, {}).get("ran") for h in head):
            continue  # a library's call in which no changed line ran on the head
        mine, theirs = _steady(head, key), _steady(parent, key)
        if mine is None or theirs is None:  # not steady whole: maybe in a part
            mine, theirs = of_runs(head, parent, key, _outcome) or (mine, theirs)
        if masked and mine is not None and theirs is not None:
            mine, theirs = _masked(mine, masked > 1), _masked(theirs, masked > 1)
        # what it wrote may differ (amplify_streams); not asked when masked: a test whose
        # words alone differ is confirmed after those whose values differ
        if mine is not None and mine == theirs and not masked:
            mine, theirs = written_differs(head, parent, key) or (mine, theirs)
        if mine is None or theirs is None or mine == theirs:
            continue
        task = task_differs(mine, theirs) or only_differs("filled", mine, theirs)
        if mine["kind"] == theirs["kind"] and mine["kind"] in ("after", "object") and not task:
            narrowed = _narrowed(mine, theirs) or of_runs(head, parent, key, _outcome)
            if narrowed is None:
                continue
            mine, theirs = narrowed
        if masked > 1 and _masked(mine, True) == _masked(theirs, True):
            continue  # the part that differs holds only numbers and ids the test drew
        if not _pinnable(mine):
            continue
        case = first.tests.get(node) or {}
        found = Difference(node, key[0], key[1], key[2], mine, theirs, case.get("params"))
        found.indices = case.get("indices")
        found.seeded = tuple(
            sorted({g for o in (first, head2, *parents) for g in _seeded(o, node)})
        )
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
            copied = sources.get(d.node.split("::", 1)[0], "")
            built = amplified_test(copied, d)
            if not isinstance(built, str):
                built.lines = flags_marked(built.lines, d.variant, copied)
                out.append((d, _marked(built, d.variant)))
                break
            why = why or built
        else:
            notes.append(f"amplify: {ds[0].node}: no test: {why}")
    return out


def _marked(written: Written, variant: str) -> Written:
    """A copy with a call added (``amplify_calls``): a comment above the statement
    holding that call (the call itself, or the assert on its outcome)."""
    head, sep, call = variant.partition(": ")
    if f", {ADDED} after line " not in head or not sep:
        return written
    try:
        shown = ast.unparse(ast.parse(call))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return written
    for i, row in enumerate(written.lines):
        if shown in row and not row.lstrip().startswith("#"):
            indent = row[: len(row) - len(row.lstrip())]
            written.lines.insert(i, f"{indent}# the call Nova added after the test's own code")
            break
    return written


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
    bodies: set[str] = set()
    for pair in units.values():
        d = pair[0]
        body = _body(pair[1])
        if body and body in bodies:  # a variant whose changed literal the cut no longer holds
            continue
        bodies.add(body)
        kind = (d.name, json.dumps(d.head, sort_keys=True), json.dumps(d.parent, sort_keys=True))
        alike[kind] = alike.get(kind, 0) + 1
        if alike[kind] > PER_TARGET:
            continue
        (rest if d.name in names else first).append(pair)
        names.add(d.name)
    return (first + rest)[:cap]


def _body(written: Written) -> str:
    """A written test's statements, without its comments and its name."""
    rows = [r for r in written.lines if not r.lstrip().startswith("#")]
    return re.sub(r"^(\s*(?:async )?def )\w+", r"\1_", "\n".join(rows), count=1, flags=re.M)


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
        by_file.setdefault(origin(d.node.split("::", 1)[0]), []).append((d, built))
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
        fw = ws.framework  # a name the project's python_files matches (check_nova_amp_x)
        named = fw.nova_file("amp_" + stem) if fw else f"{AMPLIFIED}{stem}.py"
        target = str(PurePosixPath(rel).with_name(named))
        try:
            target = ws.write_test(target, text)
        except WriteRefused as exc:
            notes.append(f"amplify: {exc}")
            continue
        count += len(tests)
        mine = facts.setdefault(target, {}) if facts is not None else {}
        for d, _ in tests:
            parts = d.node.split("[", 1)[0].split("::")[1:]
            unit = "::".join([*parts[:-1], changed_name(parts[-1])])
            mine[unit] = [_fact(d)]
            notes.append(
                f"amplify wrote {target}::{unit} from {d.amplifies}: {d.name} gave "
                f"{outcome_text(d.head)} on the head, {outcome_text(d.parent)} on the parent"
            )
    return count


def _fact(d: Difference) -> dict[str, object]:
    return {
        "call": d.head.get("asserted", d.name),
        "head": outcome_text(d.head),
        "parent": outcome_text(d.parent),
        "changed": True,
        "new_name": False,
        "reaches": [],
        "amplifies": d.amplifies,
    }
