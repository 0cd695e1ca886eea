"""Keep only tests worth keeping, with evidence for each.

A generated test is kept when it passes ``runs`` times in a row (not flaky), executes at
least one changed line, and bites: it fails on the parent commit's code, or (tried only for
the tests that pass on the parent) on a simple mutant of a changed line (a flipped
comparison, a changed constant, a negated condition). A test that hits the time or memory
limit is dropped with the runner's reason. Everything else is dropped with its reason.
How tests are run and measured is the framework's ``Runner``; the decisions are here, the
same for every language.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from bot.testgen.jsscan import JsScanError, matching_close
from bot.testgen.matrix import Target
from bot.testgen.modstate import class_body_hits, import_hits
from bot.testgen.optdeps import import_hits as optdeps_hits
from bot.testgen.runners import Runner
from bot.testgen.workspace import Workspace

__all__ = ["TestCase", "evaluate", "failure", "keep_whole_units", "mutants"]

_FLIPS = {
    "python": [
        (" == ", " != "),
        (" != ", " == "),
        (" <= ", " > "),
        (" >= ", " < "),
        (" < ", " >= "),
        (" > ", " <= "),
        (" and ", " or "),
        (" or ", " and "),
        (" + ", " - "),
        (" - ", " + "),
    ],
    "javascript": [
        (" === ", " !== "),
        (" !== ", " === "),
        (" == ", " != "),
        (" != ", " == "),
        (" <= ", " > "),
        (" >= ", " < "),
        (" < ", " >= "),
        (" > ", " <= "),
        (" && ", " || "),
        (" || ", " && "),
        (" + ", " - "),
        (" - ", " + "),
    ],
}
_WORDS = {
    "python": [("True", "False"), ("False", "True")],
    "javascript": [("true", "false"), ("false", "true")],
}
_COMMENT = {"python": "#", "javascript": "//"}
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
MAX_MUTANT_RUNS = 8  # runs of mutants per test file


@dataclass
class TestCase:
    path: str
    name: str  # the test's node id inside the file ("test_x" or "TestY::test_x")
    targets: list[str] = field(default_factory=list)
    evidence: dict[str, object] = field(default_factory=dict)
    reason: str | None = None  # why it was dropped

    @property
    def node_id(self) -> str:
        return f"{self.path}::{self.name}"

    def kept_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "name": self.name,
            "targets": self.targets,
            "evidence": self.evidence,
        }

    def dropped_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"path": self.path, "name": self.name, "reason": self.reason}
        if self.evidence.get("calls"):
            out["calls"] = self.evidence["calls"]  # what it called, head and parent
        return out


def failure(runner: Runner, rel: str, name: str) -> str:
    """What the runner saw fail for this test: its assertion or exception, or why the
    file's tests did not run; never a bare "fails"."""
    seen = runner.failures.get(f"{rel}::{name}")
    if seen:
        return seen
    whole = runner.failures.get(f"{rel}::*")
    return f"it did not run ({whole})" if whole else "it did not run (no report of it)"


def mutants(line: str, language: str = "python") -> Iterator[tuple[str, str]]:
    """(description, mutated line) for simple mutants of one source line."""
    code = line.split(_COMMENT[language], 1)[0]
    for old, new in _FLIPS[language]:
        if old in code:
            yield f"'{old.strip()}' -> '{new.strip()}'", line.replace(old, new, 1)
    for old, new in _WORDS[language]:
        m = re.search(rf"\b{old}\b", code)
        if m:
            yield f"{old} -> {new}", line[: m.start()] + new + line[m.end() :]
    for m in _NUMBER.finditer(code):
        value = int(m.group(1))
        yield (f"{value} -> {value + 1}", line[: m.start()] + str(value + 1) + line[m.end() :])
    yield from (_negated_python(line, code) if language == "python" else _negated_js(line, code))


def _negated_python(line: str, code: str) -> Iterator[tuple[str, str]]:
    stripped = code.strip()
    for keyword in ("if ", "elif ", "while ", "return "):
        if stripped.startswith(keyword) and len(stripped) > len(keyword):
            indent = line[: len(line) - len(line.lstrip())]
            body = stripped[len(keyword) :].rstrip(":")
            tail = ":" if stripped.endswith(":") else ""
            yield f"negated {keyword.strip()}", f"{indent}{keyword}not ({body}){tail}"


def _negated_js(line: str, code: str) -> Iterator[tuple[str, str]]:
    m = re.match(r"\s*(?:\}\s*else\s+)?(if|while)\s*\(", code)
    if m:
        try:
            close = matching_close(line, m.end() - 1)
        except JsScanError:
            return
        yield (
            f"negated {m.group(1)}",
            f"{line[: m.end()]}!({line[m.end() : close]}){line[close:]}",
        )
        return
    m = re.match(r"\s*return\s+(.+?);?\s*$", code)
    if m and m.group(1).strip():
        yield ("negated return", f"{line[: m.start(1)]}!({m.group(1)}){line[m.end(1) :]}")


def evaluate(
    ws: Workspace,
    runner: Runner,
    rel: str,
    cases: list[TestCase],
    targets: list[Target],
    runs: int,
    parent: str | None,
    first_run: dict[str, bool] | None = None,
    parent_files: dict[str, str | None] | None = None,
    until: float | None = None,
) -> None:
    """Fill each case's ``evidence``, or its ``reason`` when it must be dropped. Every step
    runs the file's remaining tests together: runs, coverage, each mutant, the parent.
    No mutant runs after ``until`` (``time.monotonic``): a test that passes on the parent
    is then dropped, unproven. Last, the sandbox's verdicts (``Workspace.distrust``)
    overrule the evidence."""
    _judge(ws, runner, rel, cases, targets, runs, parent, first_run, parent_files, until)
    ws.distrust(rel, cases)


def _judge(
    ws: Workspace,
    runner: Runner,
    rel: str,
    cases: list[TestCase],
    targets: list[Target],
    runs: int,
    parent: str | None,
    first_run: dict[str, bool] | None = None,
    parent_files: dict[str, str | None] | None = None,
    until: float | None = None,
) -> None:
    alive = list(cases)
    passed = {c.name: 0 for c in cases}  # runs passed in a row
    for i in range(runs):
        outcome = (
            first_run
            if i == 0 and first_run is not None
            else runner.outcomes(ws, rel, [c.name for c in alive])
        )
        for c in list(alive):
            if outcome.get(c.name):
                passed[c.name] += 1
            else:
                alive.remove(c)
    for c in cases:
        done = c.evidence["runs"] = passed[c.name]
        if done < runs and c.node_id in runner.limit_hits:
            c.reason = runner.limit_hits[c.node_id]
        elif done == 0:
            c.reason = f"fails on this change: {failure(runner, rel, c.name)}"
        elif done < runs:
            c.reason = (
                f"flaky: passed {done} of {runs} runs in a row, then {failure(runner, rel, c.name)}"
            )
    alive = [c for c in cases if not c.reason]
    if not alive:
        return
    executed = runner.per_test_lines(ws, rel, [c.name for c in alive])
    covered: dict[str, dict[str, list[int]]] = {}
    if alive and not any(executed.get(c.name) for c in alive):
        # coverage recorded nothing at all, not even the test file: the measurement
        # failed, which says nothing of the tests; the parent and the mutants decide
        why = runner.coverage_failure or "coverage recorded no file"
        for c in alive:
            c.evidence["changed_lines_covered"] = None
            c.evidence["coverage_unmeasured"] = why
            covered[c.name] = {}
    test_text = ws.read(rel) or ""
    sources = {t.path: ws.read(t.path) for t in targets}
    for c in alive:
        if c.name in covered:
            continue
        if c.name not in executed:
            c.reason = (
                "its changed-line coverage could not be measured on its own "
                "(another test shares its name, or the runner has no per-line "
                "coverage)"
            )
            continue
        mine = executed[c.name]
        hits: dict[str, list[int]] = {}
        for t in targets:
            # a changed table runs at import, before any test: it counts when the test
            # ran a function that reads it (``moddata``)
            hit = t.ran(mine)
            # or at import, binding a name the test itself reads (``modstate``)
            hit = hit or import_hits(t, runner.imported, sources.get(t.path), test_text, c.name)
            # or in a class's own body (a member, a field), the test reading that class
            hit = hit or class_body_hits(t, runner.imported, sources.get(t.path), test_text, c.name)
            # or at a fresh import inside the test, a library blocked (``optdeps``)
            hit = hit or optdeps_hits(t, mine, test_text, c.name)
            if hit:
                hits.setdefault(t.path, []).extend(hit)
                c.targets.append(f"{t.path}::{t.qualname}")
        covered[c.name] = hits
        c.evidence["changed_lines_covered"] = sum(len(v) for v in hits.values())
        c.evidence["changed_lines"] = {p: sorted(set(v)) for p, v in hits.items()}
        if not hits:
            c.reason = "does not execute any changed line"
    alive = [c for c in alive if not c.reason]
    for c in alive:
        c.evidence["mutant_killed"] = None
    # the parent first: one run; only the tests that pass on it need the mutants (a run each)
    if parent_files is None and parent is not None:
        parent_files = {p: ws.parent_text(p, parent) for p in sorted({t.path for t in targets})}
    _parent_round(ws, runner, rel, alive, parent, parent_files or {})
    _mutation_round(
        ws, runner, rel, [c for c in alive if not c.evidence["fails_on_parent"]], covered, until
    )
    for c in alive:
        if not c.evidence["mutant_killed"] and not c.evidence["fails_on_parent"]:
            tried = c.evidence.pop("mutants_tried", None)
            if tried == OUT_OF_TIME:
                c.reason = (
                    "no bite shown: passes on the parent commit, and the job's time ran out "
                    "before the mutants of its changed lines ran (NOVA_TEST_JOB_SECONDS)"
                )
                continue
            which = (
                f"the {MAX_MUTANT_RUNS} simple mutants tried" if tried else "every simple mutant"
            )
            c.reason = (
                f"no bite: survives {which} of the changed lines and passes on the parent commit"
            )


OUT_OF_TIME = "out of time"  # ``mutants_tried`` when the job's time stopped the mutants


def _mutation_round(
    ws: Workspace,
    runner: Runner,
    rel: str,
    alive: list[TestCase],
    covered: dict[str, dict[str, list[int]]],
    until: float | None = None,
) -> None:
    """Each mutant is one run of the tests still waiting; at most ``MAX_MUTANT_RUNS`` per
    file, so a change of many lines cannot hold the job, and none after ``until``."""
    lines = sorted({(path, n) for c in alive for path, ns in covered[c.name].items() for n in ns})
    budget = MAX_MUTANT_RUNS
    for path, n in lines:
        waiting = [
            c
            for c in alive
            if not c.evidence["mutant_killed"] and n in covered[c.name].get(path, [])
        ]
        source = ws.read(path)
        if not waiting or source is None:
            continue
        rows = source.split("\n")
        for description, mutated in mutants(rows[n - 1], runner.language):
            text = "\n".join(rows[: n - 1] + [mutated] + rows[n:])
            if budget <= 0:
                for c in waiting:
                    c.evidence["mutants_tried"] = MAX_MUTANT_RUNS
                return
            if until is not None and time.monotonic() > until:
                for c in alive:
                    if not c.evidence["mutant_killed"]:
                        c.evidence["mutants_tried"] = OUT_OF_TIME
                return
            with ws.replaced({path: text}):
                if not runner.syntax_ok(ws, path):
                    continue
                budget -= 1
                outcome = runner.outcomes(ws, rel, [c.name for c in waiting], failing=True)
            for c in list(waiting):
                if outcome.get(c.name) is False:
                    c.evidence["mutant_killed"] = f"{path}:{n} {description}"
                    waiting.remove(c)
            if not waiting:
                break


def _parent_round(
    ws: Workspace,
    runner: Runner,
    rel: str,
    alive: list[TestCase],
    parent: str | None,
    files: dict[str, str | None],
) -> None:
    """One run of the tests on the parent's version of every changed file (a file the
    change added is absent, one it deleted or renamed is back)."""
    for c in alive:
        c.evidence["fails_on_parent"] = False
    if parent is None or not alive:
        return
    with ws.replaced({p: text for p, text in files.items() if p != rel}):
        outcome = runner.outcomes(ws, rel, [c.name for c in alive], failing=True)
    for c in alive:
        ran = outcome.get(c.name)
        c.evidence["fails_on_parent"] = ran is not True
        if ran is None:  # the file does not load there: a name the parent lacks
            c.evidence["parent_error"] = "the test file cannot be loaded on the parent"
        elif ran is False:
            c.evidence["parent_failure"] = failure(runner, rel, c.name)


# what a run on the parent says when the test names what the parent lacks: it fails
# there before the behaviour is reached (`pytest.raises(mod.NewError)`), so it shows a new
# name, never that the behaviour changed; the same words the bench's re-run reads
_NAME_MISSING = re.compile(
    r"\b(?:ImportError|ModuleNotFoundError|NameError)\b|cannot import name"
    r"|\b(?:module|type object) '[^']*' has no attribute"
    r"|got an unexpected keyword argument"  # a parameter new in the change
)


# an import the test itself blocked (``sys.modules[x] = None``: a library not installed,
# ``optdeps``): the parent needing it is a behaviour, not a name it lacks
_BLOCKED = re.compile(
    r"(?:\b(?:ImportError|ModuleNotFoundError): )?import of [\w.]+ halted; None in sys\.modules"
)


# an object the parent made lacks an attribute: a name new in the change (an attribute only
# head's ``__init__`` sets: ``'Meter' object has no attribute 'history'``), which the bench's
# re-run, like an outside judge reading the exception, counts as a missing name. Nova does
# not claim such a test as a catch (``unclaimed``). A built-in type's value lacking one
# (``'NoneType' object has no attribute 'group'``: the parent returned None) is a
# behaviour: no change adds attributes to those
_ATTRIBUTE_MISSING = re.compile(r"'([\w.]+)' object has no attribute")
_BUILT_IN_TYPES = frozenset(
    "NoneType str bytes bytearray int float complex bool list tuple dict set frozenset "
    "function builtin_function_or_method method module type range generator coroutine".split()
    # the namespace Nova builds as an input shaped by what head's body reads: the parent
    # reading another attribute of it is the changed body's behaviour
    + ["types.SimpleNamespace", "SimpleNamespace"]
)


def attribute_missing(failure: str) -> bool:
    """Whether a test's failure on the parent shows an instance of a class of the
    project's (or a library's) lacking an attribute: it may be a name the parent lacks,
    so it is no claim of a changed behaviour."""
    return any(m not in _BUILT_IN_TYPES for m in _ATTRIBUTE_MISSING.findall(failure))


def names_missing(failure: str) -> bool:
    """Whether a test's failure on the parent is a name the parent does not have (a
    module's or a class's attribute, an import, a keyword parameter) rather than a
    behaviour; an instance lacking an attribute (``'NoneType' object has no attribute``)
    may be either, and is left to the generator's facts."""
    return bool(_NAME_MISSING.search(_BLOCKED.sub("", failure)))


def keep_whole_units(cases: list[TestCase], unit: Callable[[str], str]) -> None:
    """Tests that can only be cut out together (the cases of one parametrized test) are
    kept together or dropped together."""
    groups: dict[str, list[TestCase]] = {}
    for c in cases:
        groups.setdefault(unit(c.name), []).append(c)
    for group in groups.values():
        gone = next((c for c in group if c.reason), None)
        if gone is None:
            continue
        for c in group:
            if not c.reason:
                c.reason = (
                    f"kept only with all its cases, and {gone.name} was dropped ({gone.reason})"
                )
