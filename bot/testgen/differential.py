"""No model configured: differential regression tests.

For each changed top-level Python function the matrix lists, candidate inputs come from
the existing tests and doctest examples (``inputs``) plus a few drawn from the signature's
type hints. The side-runner (``probe.py``) calls the function on them in the sandbox, twice
on the change's head and twice on its parent, each in its own worktree (the second run
with another hash seed). An input whose result differs between two runs of one side is
dropped (time, randomness, set order); a function that writes files, starts processes or
uses the network is skipped. Inputs where head and parent differ are the behaviour
change: they become tests that pin head's value (or exception), plus a few where both
agree. The gates then decide which tests are kept, as for any generator.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bot.testgen import ambient, logged, optdeps, projstate, scratch, search, streams, wired
from bot.testgen.absent import AbsentInputs
from bot.testgen.amplify_adds import added_to
from bot.testgen.amplify_drops import left_out
from bot.testgen.asyncs import carried
from bot.testgen.bare import Bare, without_init
from bot.testgen.consts import constant_inputs, named_literals
from bot.testgen.extremes import towards_exceptions, towards_transforms
from bot.testgen.fixtures import fixture_files, replay_fixtures
from bot.testgen.frameworks import Framework
from bot.testgen.ghostwriter import _module_name
from bot.testgen.inputs import (
    Candidate,
    doc_examples,
    inputs_from_doctests,
    inputs_from_tests,
    is_doc,
    literal_pool,
    member_values,
    steer,
    steering_literals,
)
from bot.testgen.instances import class_instances
from bot.testgen.linebreaks import broken_lines, placed_in_lines
from bot.testgen.matrix import Target
from bot.testgen.moddata import callers_elsewhere
from bot.testgen.nearby import nearby_strings
from bot.testgen.operands import other_types
from bot.testgen.placed import into_containers, switched
from bot.testgen.probe import RUN_GRACE
from bot.testgen.probe_objects import VALUE
from bot.testgen.raisers import raiser_inputs, with_helpers
from bot.testgen.render import Example, render_module
from bot.testgen.retype import called_def, retype
from bot.testgen.seeded import seed_inputs
from bot.testgen.shapes import shaped_inputs
from bot.testgen.steady_parts import imported_first, unlike, unpacked
from bot.testgen.steer import data_inputs, placed
from bot.testgen.typehints import Hints, imported_paths, type_hints
from bot.testgen.warned import warned_examples
from bot.testgen.witness import steer_plans
from bot.testgen.workspace import Workspace, WriteRefused

__all__ = ["DifferentialPlan", "generate_differential", "static_side_effect"]

PROBE = Path(__file__).with_name("probe.py")
DRAWN = 100  # inputs drawn from type hints per function
_VALUES = 4  # values of the constants the changed lines name, steering inputs
MAX_CHANGED = 8  # tests per function pinning a changed behaviour
MAX_AGREED = 3  # and guarding an unchanged one
CALL_SECONDS = 1.0
RUN_SECONDS = 40.0  # all calls of one side-runner run
SLOW_MS = 250  # a call slower than this is not made a test: the gates run each test often
MAX_FILES = 4  # test files written (each costs several runs of the gates)
MAX_SEARCHED = 6  # functions whose agreeing inputs are searched (search.py)
SEARCH_SECONDS = 6.0  # all calls of one search run
RUN_LEAST = 10.0  # a run's budget however little of the job is left
FIRST_SHARE = 0.4  # of the time left, the first run's (it draws inputs too)
START_SECONDS = 30.0  # a run's interpreter start and the plan's read, before its budget
_DRAW_PACKAGES = (
    "hypothesis",
    "_hypothesis_globals",
    "sortedcontainers",
    "attr",
    "attrs",
    "typing_extensions",
    "exceptiongroup",
)
# calls that act on the world whatever they are called on (``Path.write_text``); words
# as common as ``remove`` or ``run`` (``list.remove``) count only on the os module
_EFFECT_CALLS = {
    "rmtree": "removes files",
    "makedirs": "creates directories",
    "write_text": "writes files",
    "write_bytes": "writes files",
    "Popen": "starts processes",
    "check_output": "starts processes",
    "check_call": "starts processes",
    "urlopen": "uses the network",
    "create_connection": "uses the network",
}
_OS_CALLS = {
    "remove": "removes files",
    "unlink": "removes files",
    "rmdir": "removes files",
    "mkdir": "creates directories",
    "makedirs": "creates directories",
    "rename": "moves files",
    "replace": "moves files",
    "system": "starts processes",
}
_EFFECT_MODULES = {
    "subprocess": "starts processes",
    "socket": "uses the network",
    "requests": "uses the network",
    "httpx": "uses the network",
    "shutil": "changes files",
    "urllib": "uses the network",
}


def static_side_effect(source: str, name: str) -> str | None:
    """Why the function ``name`` looks like it acts on files, processes or the network
    (a call the side-runner's audit hook would stop anyway), or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in _defs_named(tree, name):
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Call):
                continue
            func = sub.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in _EFFECT_MODULES
            ):
                return f"{_EFFECT_MODULES[func.value.id]} ({ast.unparse(func)})"
            callee = (
                func.attr
                if isinstance(func, ast.Attribute)
                else (func.id if isinstance(func, ast.Name) else "")
            )
            if callee == "open" and isinstance(func, ast.Name):
                mode = (
                    sub.args[1]
                    if len(sub.args) > 1
                    else next((k.value for k in sub.keywords if k.arg == "mode"), None)
                )
                if mode is None or (
                    isinstance(mode, ast.Constant)
                    and isinstance(mode.value, str)
                    and not any(c in mode.value for c in "wax+")
                ):
                    continue  # reading a file is not a side effect
                return f"writes files ({ast.unparse(sub)[:60]})"
            on_os = (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "os"
            )
            why = _OS_CALLS.get(callee) if on_os else _EFFECT_CALLS.get(callee)
            if why:
                return f"{why} ({ast.unparse(func)})"
    return None


def _defs_named(tree: ast.Module, qualname: str) -> list[ast.AST]:
    """The function (or class) of a dotted qualname ("f", "Cls.method")."""
    body: list[ast.stmt] = tree.body
    found: list[ast.AST] = []
    for part in qualname.split("."):
        found = [
            n
            for n in body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and n.name == part
        ]
        if not found:
            return []
        node = found[-1]
        assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        body = node.body
    return found[-1:]


@dataclass
class DifferentialPlan:
    """One module's functions and their candidate inputs."""

    path: str
    module: str
    functions: dict[str, list[dict[str, object]]] = field(default_factory=dict)
    via: dict[str, list[str]] = field(default_factory=dict)  # name -> private names it reaches
    strings: dict[str, list[str]] = field(default_factory=dict)  # words of its tests, to draw
    scratch: set[str] = field(default_factory=set)  # names that write files (scratch.py)

    def spec(self, draw: int) -> dict[str, object]:
        return {
            "module": self.module,
            "functions": [
                {
                    "qualname": q,
                    "inputs": inputs,
                    "draw": draw,
                    "strings": self.strings.get(q, []),
                    "scratch": q in self.scratch,
                }
                for q, inputs in self.functions.items()
            ],
        }


def _plan_json(
    plans: list[DifferentialPlan],
    draw: int,
    settings: list[str],
    seconds: float = RUN_SECONDS,
    loggers: list[str] | None = None,
    wire: bool = False,
    blocked: dict[str, Any] | None = None,
) -> str:
    return json.dumps(
        {
            "optdeps": blocked,  # the changed modules imported with a library blocked
            "call_seconds": CALL_SECONDS,
            "run_seconds": seconds,
            "modules": [p.spec(draw) for p in plans],
            "ambient": settings,  # each input called again under each (ambient.py)
            "logs": loggers or [],  # the loggers whose records are noted (logged.py)
            "wire": wire,  # HTTP requests recorded, connections refused (wired.py)
        }
    )


def _lend_hypothesis(target: Path) -> None:
    """Links to Nova's own Hypothesis (and what it imports) in ``target``: the side-runner
    draws inputs with it when the project has no Hypothesis. Only these packages are on
    that path, so the project's code cannot pick up anything else of Nova's."""
    target.mkdir(exist_ok=True)
    for name in _DRAW_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None:
            continue
        locations = spec.submodule_search_locations
        where = locations[0] if locations else spec.origin
        if where is None:
            continue
        link = target / Path(where).name
        if not link.exists():
            link.symlink_to(where)


def side_runner(where: Path) -> Path:
    """The side-runner's script and the helper modules it imports, copied into ``where``
    (it runs with the project's interpreter, which cannot import Nova)."""
    script = where / "nova_probe.py"
    shutil.copyfile(PROBE, script)
    helpers = ("probe_objects", "probe_steady", "ambient", "probe_logs", "asyncs", "wire", "seeded")
    for helper in (*helpers, "scratch", "probe_optdeps", "probe_streams", "probe_tee"):
        shutil.copyfile(PROBE.with_name(f"{helper}.py"), where / f"nova_{helper}.py")
    return script


@dataclass
class _Clock:
    """The side-runner runs' budgets: each a share of the time left until ``until``
    (``time.monotonic``; None: each gets ``RUN_SECONDS``), never less than
    ``RUN_LEAST``; and the functions a run's watchdog found hung, left out of the later
    runs (a call that blocks where no timer reaches would block each of them)."""

    until: float | None
    hung: set[tuple[str, str]] = field(default_factory=set)

    def seconds(
        self, runs_left: int, share: float | None = None, now: float | None = None
    ) -> float:
        if self.until is None:
            return RUN_SECONDS
        left = self.left(now)
        part = left * share if share is not None else left / max(runs_left, 1)
        return max(RUN_LEAST, min(RUN_SECONDS, part))

    def left(self, now: float | None = None) -> float:
        """Seconds left until ``until`` from ``now`` (``time.monotonic()``; infinite without
        an ``until``)."""
        if self.until is None:
            return float("inf")
        return self.until - (time.monotonic() if now is None else now)

    def note(self, data: dict[str, object], tag: str, notes: list[str]) -> None:
        """What a run's watchdog said: the run ended past its budget, in this function."""
        if "stopped" not in data:
            return
        hung = data.get("hung")
        if isinstance(hung, list) and len(hung) == 2:
            self.hung.add((str(hung[0]), str(hung[1])))
            notes.append(
                f"differential: the {tag} run was ended {RUN_GRACE:g} s past its budget in "
                f"{hung[0]}.{hung[1]} (a call blocked where its timer could not stop it); "
                "the later runs leave it out"
            )
        else:
            notes.append(f"differential: the {tag} run was ended {RUN_GRACE:g} s past its budget")

    def left_out(self, plans: list[DifferentialPlan]) -> list[DifferentialPlan]:
        """``plans`` without the functions found hung."""
        if not self.hung:
            return plans
        kept = [
            replace(
                p,
                functions={q: i for q, i in p.functions.items() if (p.module, q) not in self.hung},
            )
            for p in plans
        ]
        return [p for p in kept if p.functions]


def _probe(
    ws: Workspace,
    fw: Framework,
    plan: str,
    tag: str,
    seed: int,
    seconds: float = RUN_SECONDS,
) -> dict[str, object]:
    scratch = ws.scratch()
    script = scratch / "nova_probe.py"
    if not script.is_file():
        side_runner(scratch)
        _lend_hypothesis(scratch / "draw")
    plan_file, out_file = scratch / f"plan-{tag}.json", scratch / f"out-{tag}.json"
    plan_file.write_text(plan, encoding="utf-8")
    out_file.unlink(missing_ok=True)
    run = ws.run(
        [fw.run_files[0], str(script), str(plan_file), str(out_file), str(scratch / "draw")],
        timeout=seconds + RUN_GRACE + START_SECONDS,  # its watchdog ends it before
        # no bytecode written: the first import of a module inside a call (the idna codec,
        # a lazily imported helper) would write a .pyc, which the audit hook takes for the
        # function's own side effect (on a fresh tree only: the parent's)
        env={"PYTHONHASHSEED": str(seed), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    if not out_file.is_file():
        tail = run.output.strip().splitlines()[-1:] or ["no output"]
        return {"error": tail[0][:200]}
    data = json.loads(out_file.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {"error": "unreadable probe output"}


def _reached(
    ws: Workspace, targets: list[Target], notes: list[str], tests: dict[str, str]
) -> dict[str, dict[str, list[str]]]:
    """path -> the names a test calls -> the changed private names each reaches. A public
    function the tests never call by name is reached through its callers too."""
    from bot.testgen.reach import entries

    text = "\n".join(tests.values())
    by_path: dict[str, dict[str, list[str]]] = {}
    sources: dict[str, str] = {}
    for t in targets:
        if not t.path.endswith(".py") or (t.name.startswith("<") and t.name != "<module>"):
            continue
        # a changed table: what reads it, in its module and those importing it
        found = list(t.data.entries) if t.data is not None else []
        if t.data is None or t.name != "<module>":
            unnamed = re.search(rf"\b{re.escape(t.name)}\s*\(", text) is None
            source = ws.read(t.path) or ""
            found += [(t.path, e) for e in entries(source, t.qualname, t.lines, callers=unnamed)]
        if not found and t.name == "<module>":
            continue  # an import, a version string: nothing a function reads
        if not found and "." not in t.qualname and not t.name.startswith("<"):
            found = callers_elsewhere(t.path, t.qualname, _package_sources(ws, tests, sources))
        if not found:
            notes.append(
                f"differential: {t.path}::{t.qualname} skipped: private, and no public "
                "function or method of its module calls it"
            )
        for path, e in found:
            vias = by_path.setdefault(path, {}).setdefault(e.qualname, [])
            if e.via and e.via not in vias:
                vias.append(e.via)
    return by_path


def _package_sources(ws: Workspace, tests: dict[str, str], cache: dict[str, str]) -> dict[str, str]:
    """The project's Python files that are not tests (read once, into ``cache``)."""
    if not cache:
        cache.update(
            {p: ws.read(p) or "" for p in ws.files() if p.endswith(".py") and p not in tests}
        )
    return cache


def _candidates(
    qualname: str,
    source: str,
    path: str,
    tests: dict[str, str],
    found: dict[str, list[Candidate]],
    package: dict[str, str] | None = None,
) -> list[Candidate]:
    """Where the inputs of one name come from: its calls in the tests (for a member of
    a class: the instances the tests build and use it on, and its calls on anything),
    its docstring's examples, and for a one-parameter function the tests' literals.
    ``package``: the project's sources, where the functions that build a class are."""
    from bot.testgen.scenarios import makers_of, scenarios_from_doctests, scenarios_from_tests

    if "." not in qualname:
        out = found.get(qualname, []) + inputs_from_doctests(source, qualname, path)
        if len(out) < 5 and _one_parameter(source, qualname):
            # the literals of the tests that name it, else of those that import its package
            out += literal_pool(tests, qualname) or literal_pool(tests, _top_package(path))
        return list(dict.fromkeys(out))
    owner, member = qualname.rsplit(".", 1)
    short = owner.rsplit(".", 1)[-1]
    if member == "__init__":
        return found.get(short, [])
    calls = [c for c in found.get(member, []) if c.ctor is None or c.receiver == short]
    return list(
        dict.fromkeys(
            scenarios_from_tests(tests, short, member, makers_of(package or {}, short))
            + scenarios_from_doctests(source, short, member, path)
            + sorted(calls, key=lambda c: c.ctor is None)  # built in place first
            + _on_built(source, qualname, found.get(short, []))
        )
    )


BUILT = 24  # instances a member that needs no argument is read on


def _on_built(source: str, qualname: str, built: list[Candidate]) -> list[Candidate]:
    """A property, or a method that needs no argument, read on each distinct instance
    the tests build of its class: its own calls in the tests may be few or none (a sort
    key), while what it answers depends on how the instance was built."""
    try:
        nodes = _defs_named(ast.parse(source), qualname)
    except SyntaxError:
        return []
    if not nodes or not isinstance(nodes[0], ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    args = nodes[0].args
    if len(args.posonlyargs) + len(args.args) - len(args.defaults) != 1 or args.kwonlyargs:
        return []  # besides self, it needs an argument (or it is a static method)
    if any(
        isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
        for d in nodes[0].decorator_list
    ):
        return []
    short = qualname.rsplit(".", 2)[-2]
    made = [
        Candidate((), (), c.imports, c.origin, ctor=(c.args, c.kwargs), receiver=short)
        for c in built
        if c.ctor is None and not c.steps
    ]
    return list(dict.fromkeys(made))[:BUILT]


def _words(tests: dict[str, str], name: str) -> list[str]:
    """Short string literals of the test files that mention ``name``: what a drawn
    string argument is chosen from, so a unit is ``'V'`` and not ``'&L/l+'``."""
    out = []
    for c in literal_pool(tests, name, limit=200):
        value = ast.literal_eval(c.args[0] or "0")
        if isinstance(value, str) and len(value) <= 12 and value.isprintable():
            out.append(value)
    return sorted(set(out))[:40]


def _one_argument(source: str, name: str) -> bool:
    """Whether ``name`` needs one argument (besides ``self`` for a method)."""
    return _one_parameter(source, name) or ("." in name and _one_parameter(source, name, 2))


def _top_package(path: str) -> str:
    """The top-level package (or module) of the module at ``path`` (``src/`` left out)."""
    return _module_name(path).split(".", 1)[0]


def _one_parameter(source: str, name: str, count: int = 1) -> bool:
    try:
        nodes = _defs_named(ast.parse(source), name)
    except SyntaxError:
        return False
    if not nodes or not isinstance(nodes[0], ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    args = nodes[0].args
    return len(args.posonlyargs) + len(args.args) - len(args.defaults) == count


def _plans(
    ws: Workspace, fw: Framework, targets: list[Target], notes: list[str], settings: list[str]
) -> list[DifferentialPlan]:
    tests = {p: ws.read(p) or "" for p in ws.files() if fw.is_test_name(p)}
    tests = replay_fixtures(tests, {p: ws.read(p) or "" for p in fixture_files(ws.files(), tests)})
    # the documentation's examples build and call things the way users do
    tests.update(doc_examples({p: ws.read(p) or "" for p in ws.files() if is_doc(p)}))
    by_path = _reached(ws, targets, notes, tests)
    absent = AbsentInputs(ws, fw, notes)  # values a changed lookup does not find
    siblings = ambient.sibling_arguments(tests) if settings else []  # ambient.py
    plans = []
    sources: dict[str, str] = {}  # the project's sources, read once
    changed: dict[str, list[int]] = {}  # what the changed lines test steers input types
    for t in targets:
        changed.setdefault(t.path, []).extend(t.lines)
    for path, group in sorted(by_path.items()):
        source = ws.read(path) or ""
        elsewhere = Hints()
        for other in imported_paths(source, path, sorted(changed)):
            elsewhere.merge(type_hints(ws.read(other) or "", changed[other]))
        # the class of a member too: how the tests build its instances
        names = {q.rsplit(".", 1)[-1] for q in group} | {
            q.rsplit(".", 2)[-2] for q in group if "." in q
        }
        found = inputs_from_tests(tests, names)
        plan = DifferentialPlan(path, _module_name(path))
        for name in sorted(group):
            effect = static_side_effect(source, name)
            # requests recorded (wired.py); files written in a scratch directory
            recorded = wired.recorded(effect, source) if effect else False
            if effect and not recorded and not scratch.offered(effect):
                notes.append(f"differential: {path}::{name} skipped: it {effect}")
                continue
            if effect and not recorded:
                plan.scratch.add(name)
            package = _package_sources(ws, tests, sources) if "." in name else {}
            candidates = _candidates(name, source, path, tests, found, package)
            writes = (effect and not recorded) or scratch.writes(source)
            named = scratch.named_paths(tests, source, name) if writes else {}
            if named:  # the tests' calls with a path: a name in the scratch directory
                mined = inputs_from_tests(named, names)
                candidates[:0] = _candidates(name, source, path, named, mined, package)
            # what the changed lines it reaches test for steers more inputs there
            reached = {name, name.rsplit(".", 1)[0], *group[name]}
            lines = sorted(
                {n for t in targets if t.path == path and t.qualname in reached for n in t.lines}
            )
            # a constructor the probe cannot run (a socket): receivers built bare
            bare = Bare(source, name, tests, lines, wired.unrecorded(static_side_effect))
            candidates, said = without_init(bare, candidates, found)
            notes += [f"differential: {path}::{name}: {said}"] if said else []
            strings, numbers = steering_literals(source, lines)
            for value in named_literals(source, path, lines, ws.read)[:_VALUES]:  # consts.py
                if isinstance(value, str) and value not in strings and len(value) <= 20:
                    strings.append(value)
                elif isinstance(value, int) and value not in numbers:
                    numbers.append(value)
            for t in targets:  # a changed helper of another module it reaches steers too
                if t.path != path and t.qualname in group[name] and t.path.endswith(".py"):
                    more, more_numbers = steering_literals(ws.read(t.path) or "", t.lines)
                    strings += [m for m in more if m not in strings]
                    numbers += [m for m in more_numbers if m not in numbers]
            # the project's own multi-line inputs, steered line by line
            broken = broken_lines(candidates, source, lines) + placed_in_lines(candidates, strings)
            hints = type_hints(source, lines)
            hints.merge(elsewhere)
            steered = into_containers(candidates, [*strings, *numbers])
            steered += steer(candidates, strings, numbers) + placed(candidates, strings)
            steered += left_out(candidates, source, lines)  # a part it reads left out
            steered += added_to(candidates, source, lines)  # or one it reads added
            steered += member_values(name, source, lines)  # an enum's changed members
            # the switches a changed reader may sit behind: on steered inputs, on the first
            mine = changed.get(path, [])  # a parameter on a changed line may be new
            switched_ = switched(steered, source, name, mine)
            switched_ += switched(candidates[:4], source, name, mine)
            candidates += steered + switched_
            candidates += seed_inputs(candidates[:6], source, name, called_def)  # seeded.py
            candidates += retype(candidates, source, name, hints)
            candidates += other_types(candidates, source, name, lines)  # isinstance(other, C)
            # an instance of a class a changed isinstance names (instances.py)
            candidates += class_instances(candidates, source, name, lines, plan.module)
            shaped = shaped_inputs(candidates, source, name, lines, tests)
            candidates += shaped.candidates
            if shaped.candidates:
                notes.append(
                    f"differential: {len(shaped.candidates)} inputs shaped from how "
                    f"{name} uses {', '.join(shaped.params)}"
                )
            candidates += data_inputs(
                [t.data for t in targets if t.data],
                path,
                name,
                candidates,
                _one_parameter(source, name),
            )
            candidates += absent(path, name, source, lines, candidates)
            candidates += towards_exceptions(candidates, source, lines) + broken
            # callables that raise what a changed except of its module names
            candidates += raiser_inputs(candidates, source, name, changed.get(path, []))
            candidates += towards_transforms(candidates, source, lines, strings)
            candidates += nearby_strings(candidates, source, lines)
            if _one_parameter(source, name):  # the changed lines' literals themselves
                candidates += [
                    Candidate((repr(v),), (), (), f"{path} (changed lines)")
                    for v in [*strings, *numbers]
                ]
            if siblings and _one_argument(source, name):
                # ranked after its own inputs (as a retyped one): another function's
                candidates += [Candidate((a,), (), i, "others' (typed)") for a, i in siblings]
            candidates += constant_inputs(candidates, source, lines)  # a branch's constants
            if any(k.startswith(ambient.PROJECT) for k in settings):  # projstate.py
                candidates[:0] = projstate.unset_inputs(
                    source, name, strings, plan.module, settings
                )
            plan.functions[name] = [c.to_dict() for c in candidates]
            plan.via[name] = group[name]
            plan.strings[name] = sorted({*strings, *_words(tests, name.rsplit(".", 1)[-1])})
        if plan.functions:
            plans.append(plan)
    return plans


_CARRIED = ("args", "kwargs", "imports", "ctor", "steps", "origin")


def _key(result: dict[str, object]) -> str:
    keys = ("args", "kwargs", "ctor", "steps", "ambient")
    return json.dumps([result.get(k) for k in keys], sort_keys=True)


def _outcomes(data: dict[str, object], name: str) -> dict[str, str]:
    """input key -> outcome key of one run; {} when the run gave nothing for it."""
    functions = data.get("functions")
    entry = functions.get(name) if isinstance(functions, dict) else None
    if data.get("import_error") or entry is None:
        return {}
    if entry.get("missing"):
        return {"*": "missing"}
    if not entry["results"]:
        return {"*": "?"}  # there, but nothing was called (skipped, or out of time)
    return {_key(r): json.dumps(r["outcome"], sort_keys=True) for r in entry["results"]}


def _describe(outcome: str) -> str:
    """What one side did, for a comment in the test."""
    if outcome == "missing":
        return "did not exist"
    data = json.loads(outcome)
    if data.get("kind") == "raises":
        message = data.get("message")
        return f"raised {data['type']}" + (f"({message!r})" if message else "")
    if data.get("kind") == "identity":
        return f"returned {data['value']}, another number in every run"
    if data.get("kind") == "value":
        shown = data.get("state", {}).get("value") if data["value"] == "None" else None
        value = str(data["value"]) if shown is None else f"None, leaving {shown}"
        said = f", printing {data['printed'][:50]!r}" if data.get("printed") else ""
        said += scratch.written_head(data) if data.get("files") else ""
        return f"returned {value if len(value) <= 60 else value[:57] + '...'}{said}"
    return str(data.get("kind"))


def _may_equal(head: str, parent: str) -> bool:
    """Whether two values that print differently may still compare equal: both plain
    literals and equal (``1`` and ``1.0``, dicts in another order), or either one is not
    a literal (``OrderedDict([...])`` and ``{...}``, ``Decimal('1')`` and ``1``)."""
    try:
        return bool(ast.literal_eval(head) == ast.literal_eval(parent))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return True


def _example(
    result: dict[str, Any],
    entry: dict[str, Any],
    before: str | None,
    outcome: dict[str, Any] | None = None,
    said: str = "",
) -> Example:
    """The example of one input: head's outcome (or the part of it to assert), and what
    the parent did (``said`` when it is not its whole outcome)."""
    outcome = outcome or result["outcome"]
    parent = json.loads(before) if before is not None and before != "missing" else None
    if isinstance(parent, dict) and parent.get("kind") == "object" and not said:
        # a value whose repr is not a value: what it was, not its facts
        what = f"a {parent.get('type')} object"
        said = "returned None" if parent.get("view") == "after" else f"returned {what}"
    if (
        isinstance(parent, dict)
        and parent.get("kind") == outcome.get("kind") == "value"
        and parent.get("value") != outcome.get("value")
        and outcome.get("ordered")
        and _may_equal(str(outcome.get("value")), str(parent.get("value")))
    ):
        # the parent's value printed differently: it may still compare equal (1 == 1.0,
        # an OrderedDict and a dict, dicts in another order), so type and order are
        # asserted too
        outcome = {**outcome, "strict": True}
    return Example(
        list(result["args"]),
        dict(result["kwargs"]),
        list(result["imports"]),
        outcome,
        before is not None,
        "" if before is None else (said or _describe(before)),
        kind=str(entry.get("kind") or "function"),
        owner=entry.get("owner"),
        ctor=result.get("ctor"),
        steps=list(result.get("steps") or []),
        origin=str(result.get("origin", "")),
        new=before == "missing",
        parent=None if before is None or before == "missing" else json.loads(before),
        pinned=bool(result.get("pinned")),  # its outcome shows with the clock pinned only
        ambient=str(result.get("ambient") or ""),  # observed under a process-wide setting
        scratch=bool(result.get("scratch")),  # in a scratch directory (scratch.py)
        seeded=list(result.get("seeded") or []),  # the generators it drew from (seeded.py)
    )


def _parent_outcome(run: dict[str, str], key: str) -> str:
    """What one parent run did with an input: its outcome, "missing" when the name (or
    its module) is not there, "?" when the run has the name but did not come to it."""
    if key in run:
        return run[key]
    return run.get("*", "?" if run else "missing")


OBJECT_FACTS = 3  # facts asserted of an object when no single one tells the sides apart


def _steady(outcomes: list[str]) -> dict[str, list[Any]] | None:
    """expression -> fact, of the facts every run of one side showed alike (an address,
    a counter, a set's order differ between runs: they are never pinned); None when a
    run did not return an object."""
    seen = [json.loads(o) if o.startswith("{") else {} for o in outcomes]
    if not seen or any(o.get("kind") != "object" for o in seen):
        return None
    steady = {str(f[0]): list(f) for f in seen[0]["facts"]}
    for other in seen[1:]:
        shown = {str(f[0]): f[1] for f in other["facts"]}
        steady = {e: f for e, f in steady.items() if shown.get(e) == f[1]}
    return steady


def _fact_rank(fact: list[Any]) -> int:
    """Type names first (they never hold a value of the run), then sizes, then values."""
    expr = str(fact[0])
    return 0 if "__name__" in expr else 1 if expr.startswith("len(") else 2


def _guarding(facts: dict[str, list[Any]]) -> list[list[Any]]:
    """The facts that guard a value both sides share, or that head returns where the
    parent did something else: its type, then the first values (they bite on a mutant
    where type names rarely do), then the rest."""
    shown = list(facts.values())
    return (shown[:1] + sorted(shown[1:], key=lambda f: -_fact_rank(f)))[:OBJECT_FACTS]


def _object_example(
    result: dict[str, Any], entry: dict[str, Any], head: list[str], parent: list[str]
) -> Example | None:
    """The example of an input whose value's repr is not a value: the smallest fact of
    its structure that tells head from the parent (the first in the walk: shallowest,
    type names before contents), else a few that both share; None when the runs of a
    side disagree on everything."""
    outcome = result["outcome"]
    ours = _steady([json.dumps(outcome, sort_keys=True), *head])
    if not ours:
        return None
    if len(set(parent)) > 1 and _steady(parent) is None:
        return None
    theirs = _steady(parent) if parent else None
    before: str | None = parent[0] if parent else None
    said = ""
    if theirs is not None:
        theirs.update(unlike(ours, theirs, parent))  # not steady there, and never head's
        differ = [f for e, f in ours.items() if e in theirs and theirs[e][1] != f[1]]
        differ.sort(key=_fact_rank)  # stable: the shallowest of each rank first
        if differ:
            chosen = differ[:1]
            said = f"{chosen[0][0].replace(VALUE, 'actual')} was {theirs[chosen[0][0]][1]}"
        else:
            chosen, before = _guarding(ours), None
    else:
        chosen = _guarding(ours)
    imports = sorted({str(i) for f in chosen for i in f[2]})
    shown = {"kind": "object", "facts": [f[:2] for f in chosen], "imports": imports}
    if outcome.get("view"):
        shown["view"] = outcome["view"]
    return _example(result, entry, before, shown, said)


def _compare(
    name: str, first: dict[str, Any], head: list[dict[str, object]], parent: list[dict[str, object]]
) -> tuple[list[Example], str]:
    """The examples worth writing for ``name`` and a note on how the inputs fared."""
    entry = first["functions"][name]
    head_runs = [_outcomes(d, name) for d in head]
    parent_runs = [_outcomes(d, name) for d in parent]
    changed: list[Example] = []
    agreed: list[Example] = []
    unstable = unusable = slow = unreached = 0
    depends: set[str] = set()
    timeless = sum(1 for r in entry["results"] if r.get("clock"))  # see probe.call
    for result in entry["results"]:
        key, outcome = _key(result), result["outcome"]
        # a run that did not reach an input (out of time) tells nothing about it
        ours = {json.dumps(outcome, sort_keys=True), *(r[key] for r in head_runs if key in r)}
        if outcome["kind"] in ("depends", "identity"):  # the clock, ids, the environment
            unstable += 1
            depends.add(str(outcome.get("on")))
            continue
        if outcome["kind"] not in ("value", "raises", "object"):
            unusable += 1
            continue
        if int(result.get("ms", 0)) > SLOW_MS:  # each run of the test would pay it again
            slow += 1
            continue
        # the parent's runs that came to this input (one that ended before it tells nothing)
        theirs_all = [o for o in (_parent_outcome(r, key) for r in parent_runs) if o != "?"]
        if parent_runs and not theirs_all:
            unreached += 1
            continue
        if outcome["kind"] == "object":  # compared fact by fact: see _object_example
            steps = [r[key] for r in head_runs if key in r]
            found = _object_example(result, entry, steps, theirs_all)
            if found is None:
                unstable += 1
            else:
                (changed if found.changed else agreed).append(found)
            continue
        if len(ours) > 1:
            unstable += 1
            continue
        theirs = set(theirs_all)
        if len(theirs) > 1:
            unstable += 1
            continue
        same = theirs == ours or not parent_runs
        if same and result.get("ambient"):
            continue  # a setting's call only tells where the sides differ under it
        example = _example(result, entry, None if same else next(iter(theirs)))
        (agreed if same else changed).append(example)
    if any(not e.ambient for e in changed):  # the default setting shows the change already
        changed = [e for e in changed if not e.ambient]
    note = (
        f"{len(entry['results'])} inputs: {len(changed)} where the parent differs, "
        f"{len(agreed)} where it agrees"
    )
    if unstable:
        on = f": they read {', '.join(sorted(depends))}" if depends else ""
        note += f", {unstable} non-deterministic (dropped{on})"
    if timeless:
        note += f", {timeless} read the clock but came out the same with it moved ahead"
    if pinned := sum(1 for r in entry["results"] if r.get("pinned")):
        note += f", {pinned} steady with the clock pinned (compared pinned on both sides)"
    if changed and changed[0].ambient:
        said = sorted({ambient.setting(e.ambient).said for e in changed})
        hides = "the default setting hides it"
        if {e.ambient for e in changed} == {ambient.ENVIRON}:
            hides = "with this machine's, each input read it"
        note += f" (only under {', '.join(said)}: {hides})"
    if unreached:
        note += f", {unreached} not reached by the parent's runs (not compared)"
    if unusable:
        note += f", {unusable} unusable (past the time of a call, or a value that does not render)"
    if slow:
        note += f", {slow} slower than {SLOW_MS} ms a call (not written)"

    def rank(e: Example) -> tuple[bool, bool, int]:  # the project's own inputs, then the simplest
        size = sum(map(len, e.args)) + sum(len(k) + len(v) for k, v in e.kwargs.items())
        size += len(json.dumps(e.ctor)) + sum(map(len, e.steps)) if e.ctor else 0
        return (e.origin == "drawn", e.origin == "typed", size)

    changed.sort(key=rank)
    agreed.sort(key=rank)
    # tests where both agree only guard a name whose change no input showed: each needs
    # mutant runs to be kept, the costliest gate
    return _varied(changed, MAX_CHANGED) + ([] if changed else _varied(agreed, MAX_AGREED)), note


def _varied(examples: list[Example], limit: int) -> list[Example]:
    """At most ``limit``, one per distinct outcome first (eight inputs that all return []
    pin less than three that return different things); repeats only to make up three."""
    seen: set[str] = set()
    first: list[Example] = []
    rest: list[Example] = []
    for e in examples:
        before = e.before.split(", leaving", 1)[0]
        key = json.dumps([e.outcome, before, e.kind], sort_keys=True)
        (rest if key in seen else first).append(e)
        seen.add(key)
    return (first + rest[: max(0, 3 - len(first))])[:limit]


def generate_differential(
    ws: Workspace,
    fw: Framework,
    targets: list[Target],
    parent: str | None,
    facts: dict[str, dict[str, list[dict[str, object]]]] | None = None,
    until: float | None = None,
) -> list[str]:
    """Write one regression test file per changed module; return notes on what it did.
    Each of the four runs (head twice, parent twice) probes every module at once, in a
    share of the time left until ``until`` (``time.monotonic``; None: no end)."""
    notes: list[str] = []
    clock = _Clock(until)
    settings = _settings(ws, targets, parent, notes)
    plans = _plans(ws, fw, targets, notes, settings)
    if not plans:  # optdeps.py: the changed modules imported with a library blocked, alone
        notes += optdeps.generate_optdeps(ws, fw, targets, parent, facts, until)
        return notes + ["differential: no changed public top-level Python function to test"]
    blocked = optdeps.plan_for(ws, fw, targets, parent)  # in each run (optdeps.py)
    if parent:  # values a changed literal (regex, format spec) treats differently, first
        notes += steer_plans(plans, targets, ws.read, lambda p: ws.parent_text(p, parent))
    pairs = _pairs(ws, targets, parent)
    loggers = logged.loggers(pairs, [p.module for p in plans])
    wire = wired.needed(pairs)  # the changed modules use an HTTP client (wired.py)
    seconds = clock.seconds(4, FIRST_SHARE)
    first = _probe(
        ws,
        fw,
        _plan_json(plans, DRAWN, settings, seconds, loggers, wire, blocked),
        "head-1",
        0,
        seconds,
    )
    imported = {"head-1": first.get("optdeps")}  # optdeps.py: each run's imports
    clock.note(first, "head-1", notes)
    if "error" in first:
        return notes + [f"differential: the changed modules could not be probed: {first['error']}"]
    found = _modules(first)
    rendered = [
        DifferentialPlan(
            p.path,
            p.module,
            {
                q: [
                    {k: r[k] for k in (*_CARRIED, "scratch") if k in r}
                    for r in entry["results"]
                    if not r.get("ambient")  # each run calls it under the settings itself
                ]
                for q, entry in found[p.module]["functions"].items()
            },
        )
        for p in plans
        if p.module in found and not found[p.module].get("import_error")
    ]

    def again(tag: str, seed: int, where: Workspace, runs_left: int) -> dict[str, Any]:
        """A run of the rendered inputs (without the functions found hung)."""
        seconds = clock.seconds(runs_left)
        plan = _plan_json(clock.left_out(rendered), 0, settings, seconds, loggers, wire, blocked)
        data = _probe(where, fw, plan, tag, seed, seconds)
        clock.note(data, tag, notes)
        imported[tag] = data.get("optdeps")
        return _modules(data)

    rerun = bool(blocked) or _any_result(found)
    if not rerun:  # nothing to run again: the time is left to the project's tests
        notes.append("differential: no input reached a changed function: no further runs")
    head = [again("head-2", 1, ws, 3)] if rerun else []
    before: list[dict[str, dict[str, Any]]] = []
    if parent and rerun:
        with ws.sibling(parent, fw) as parent_ws:
            before = [again(f"parent-{seed}", seed, parent_ws, 2 - seed) for seed in (0, 1)]
            searched = _quiet(plans, found, before)  # search.py: where every input agreed
            if searched and clock.left() < 4 * SEARCH_SECONDS:
                notes.append("differential: no search of agreeing inputs: the job's time is spent")
            elif searched:
                notes += _search(ws, parent_ws, fw, searched, found, head, before)
    notes += optdeps.written(ws, fw, blocked, imported, facts)
    pending: list[_File] = []
    for plan in plans:
        _one_module(
            fw,
            plan,
            found.get(plan.module, {}),
            [h.get(plan.module, {}) for h in head],
            [b.get(plan.module, {}) for b in before],
            notes,
            pending,
            ws.parent_text(plan.path, parent) if parent else None,
        )
    # the files that pin the most changed behaviour first: each costs runs of the gates
    pending.sort(key=lambda f: f.score, reverse=True)
    for file in pending[MAX_FILES:]:
        notes.append(
            f"differential: no test file for {', '.join(file.names)}: at most {MAX_FILES} "
            "files are checked, and the others pin more changed behaviour"
        )
    for file in pending[:MAX_FILES]:
        try:
            ws.write_test(file.target, file.text)
        except WriteRefused as exc:
            notes.append(f"differential: {exc}")
            continue
        if facts is not None:
            facts[file.target] = file.facts
        notes.append(f"differential wrote {file.target} for {', '.join(file.names)}")
    return notes


def _quiet(
    plans: list[DifferentialPlan],
    found: dict[str, dict[str, Any]],
    before: list[dict[str, dict[str, Any]]],
) -> list[DifferentialPlan]:
    """Plans of counted variants (``search.variants``) of the inputs of the functions
    where every usable input agreed on both sides (at most ``MAX_SEARCHED``), when no
    input of any function showed the change (else the search's runs would add to a job
    that pins it already)."""
    quiet: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for plan in plans:
        entries = (found.get(plan.module) or {}).get("functions") or {}
        for name, entry in sorted(entries.items()):
            usable = [
                r
                for r in entry.get("results") or []
                if not r.get("ambient") and r["outcome"]["kind"] in ("value", "raises")
            ]
            theirs = [_outcomes(b.get(plan.module, {}), name) for b in before]
            if not usable or not theirs or any("*" in t or not t for t in theirs):
                continue
            ours = {_key(r): json.dumps(r["outcome"], sort_keys=True) for r in usable}
            if any(t.get(k, v) != v for t in theirs for k, v in ours.items()):
                return []  # an input shows the change already
            quiet[(plan.path, name)] = usable
    out: list[DifferentialPlan] = []
    left = MAX_SEARCHED
    for plan in plans:
        functions: dict[str, list[dict[str, object]]] = {}
        for (path, name), usable in quiet.items():
            varied = search.variants(usable) if path == plan.path and left > 0 else []
            if varied:
                functions[name] = list(varied)
                left -= 1
        if functions:
            out.append(DifferentialPlan(plan.path, plan.module, functions))
    return out


def _search(
    ws: Workspace,
    parent_ws: Workspace,
    fw: Framework,
    plans: list[DifferentialPlan],
    found: dict[str, dict[str, Any]],
    head: list[dict[str, dict[str, Any]]],
    before: list[dict[str, dict[str, Any]]],
) -> list[str]:
    """The searched variants probed twice on each side, in runs of their own with
    ``SEARCH_SECONDS``, their results put after each run's own for the same functions."""
    plan = _plan_json(plans, 0, [], SEARCH_SECONDS)
    runs = [
        (found, _probe(ws, fw, plan, "search-head-1", 0, SEARCH_SECONDS)),
        (head[0], _probe(ws, fw, plan, "search-head-2", 1, SEARCH_SECONDS)),
        *(
            (b, _probe(parent_ws, fw, plan, f"search-parent-{seed}", seed, SEARCH_SECONDS))
            for seed, b in zip((0, 1), before, strict=False)
        ),
    ]
    tried = 0
    for into, data in runs:
        for module, got in _modules(data).items():
            for name, entry in (got.get("functions") or {}).items():
                there = ((into.get(module) or {}).get("functions") or {}).get(name)
                if there is None or "results" not in there:
                    continue
                there["results"] = [*there["results"], *(entry.get("results") or [])]
                if into is found:
                    tried += len(entry.get("results") or [])
    names = [q for p in plans for q in p.functions]
    return [
        f"differential: every input of {', '.join(names)} agreed: {tried} counted variants "
        "of their literals searched"
    ]


def _settings(
    ws: Workspace, targets: list[Target], parent: str | None, notes: list[str]
) -> list[str]:
    """The process-wide settings the change's lines (removed or added) may read or stop
    reading (ambient.py): every input is also called under each, on both sides."""
    if not parent:
        return []
    found = ambient.relevant(_pairs(ws, targets, parent))
    if found:
        said = ", ".join(ambient.SETTINGS[k].said for k in found)
        notes.append(f"differential: the changed lines may read a process-wide setting: {said}")
    return found + projstate.settings(ws, targets, parent, notes)  # the project's own


def _pairs(
    ws: Workspace, targets: list[Target], parent: str | None
) -> list[tuple[str | None, str]]:
    """Each changed module's text on the parent and on head (none without a parent)."""
    paths = sorted({t.path for t in targets if t.path.endswith(".py")})
    return [(ws.parent_text(p, parent), ws.read(p) or "") for p in paths] if parent else []


def _parent_runs(
    parent: list[dict[str, Any]], name: str, source: str | None
) -> tuple[list[dict[str, Any]], str]:
    """The parent's runs to compare ``name`` with: those that answered for it. A name
    is new on the head only when the parent's module lacks it (the probe found no such
    attribute, or its source defines no such name), never because the probe skipped it
    or the module did not import there: then there is nothing to compare, and the
    second value says why."""
    if not parent:
        return [], ""  # no parent commit
    entries = [(run, (run.get("functions") or {}).get(name)) for run in parent]
    answered = [run for run, e in entries if e is not None and "kind" in e]
    if answered:
        return answered, ""
    missing = [run for run, e in entries if e is not None and e.get("missing")]
    if missing or not defined(source, name):
        return [{"functions": {name: {"missing": True, "results": []}}}], ""
    skipped = next((str(e["skipped"]) for _, e in entries if e and e.get("skipped")), "")
    failed = next((str(r["import_error"]) for r in parent if r.get("import_error")), "")
    if skipped:
        return [], f"the probe skipped it on the parent (it {skipped}), where it exists"
    if failed:
        return [], f"its module does not import on the parent ({failed})"
    return [], "the parent's probe gave no answer for it"


def defined(source: str | None, qualname: str) -> bool:
    """Whether ``source`` (a module's text; None: no such file) defines ``qualname``
    (``f``, ``Cls.method``): a def, a class, an assignment or an import binding the name,
    a member of the class or one it may inherit. True when it cannot be told."""
    if source is None:
        return False
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True
    owner, _, member = qualname.partition(".")
    if not _binds(tree, owner):
        return False
    if not member or member.startswith("__"):
        return True
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == owner]
    if not classes:
        return True  # bound by an import or an assignment: its members are unknown here
    last = member.rsplit(".", 1)[-1]
    return any(c.bases or c.keywords or c.decorator_list or _binds(c, last) for c in classes)


def _binds(tree: ast.AST, name: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            if node.id == name:
                return True
        elif isinstance(node, ast.alias):
            if node.name == "*" or (node.asname or node.name.split(".")[0]) == name:
                return True
    return False


@dataclass
class _File:
    target: str
    text: str
    names: list[str]
    facts: dict[str, list[dict[str, object]]]
    # behaviour catches, those that need no pinned clock, new names, all examples
    score: tuple[int, int, int, int]


def _any_result(found: dict[str, dict[str, Any]]) -> bool:
    """Whether a run called any function of the changed modules (an input, a setting's
    call or a module's own state)."""
    return any(
        entry.get("results")
        for module in found.values()
        for entry in (module.get("functions") or {}).values()
        if isinstance(entry, dict)
    )


def _modules(data: dict[str, object]) -> dict[str, dict[str, Any]]:
    modules = data.get("modules")
    return modules if isinstance(modules, dict) else {}


def _one_module(
    fw: Framework,
    plan: DifferentialPlan,
    first: dict[str, Any],
    head: list[dict[str, Any]],
    parent: list[dict[str, Any]],
    notes: list[str],
    pending: list[_File],
    parent_source: str | None = None,
) -> None:
    for run in (first, *head, *parent):  # a value that read randomness: its steady parts
        unpacked(run)
    if not first or first.get("import_error"):
        notes.append(
            f"differential: {plan.path} could not be probed: "
            f"{first.get('import_error') or 'no answer'}"
        )
        return
    functions = first["functions"]
    examples: dict[str, list[Example]] = {}
    params: dict[str, list[str]] = {}
    for name, entry in sorted(functions.items()):
        if entry.get("skipped"):
            notes.append(f"differential: {plan.path}::{name} skipped: it {entry['skipped']}")
            continue
        if entry.get("missing"):
            continue
        theirs, why = _parent_runs(parent, name, parent_source)
        if why:
            notes.append(f"differential: {plan.path}::{name}: no test: {why}")
            continue
        chosen, how = _compare(name, first, head, theirs)
        warned, said = warned_examples(name, first, head, theirs)  # warned.py
        chosen, how = chosen + warned, how + said
        logs, said = logged.logged_examples(name, first, head, theirs)  # logged.py
        chosen, how = chosen + logs, how + said
        written, said = streams.streams_examples(name, first, head, theirs)  # streams.py
        chosen, how = chosen + written, how + said
        chosen = wired.offline(chosen, entry["results"])  # a request's test records it
        sent, said = wired.wired_examples(name, first, head, theirs)  # wired.py
        chosen, how = chosen + sent, how + said
        carried(chosen, entry["results"])  # awaited calls (asyncs.py): their tests await too
        through = plan.via.get(name)
        reached = f" (reaches the changed {', '.join(through)})" if through else ""
        notes.append(f"differential: {plan.path}::{name}{reached}: {how}")
        if chosen:
            examples[name] = chosen
            params[name] = list(entry.get("params") or [])
    if not examples:
        return
    stem = plan.module.replace(".", "_")
    test_dir = fw.test_dirs[0].strip("/")
    target = f"{test_dir}/{fw.nova_file(stem)}" if test_dir != "." else fw.nova_file(stem)
    found: dict[str, list[dict[str, object]]] = {}
    text = with_helpers(render_module(plan.module, plan.path, examples, params, found, plan.via))
    text = imported_first(text, str(first.get("after") or ""), plan.module)  # a cycle
    every = [e for chosen in examples.values() for e in chosen]
    score = (
        sum(e.changed and not e.new for e in every),
        sum(e.changed and not e.new and not (e.pinned or e.ambient) for e in every),  # sturdier
        sum(e.new for e in every),
        len(every),
    )
    pending.append(_File(target, text, sorted(examples), found, score))
