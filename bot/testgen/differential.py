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
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.testgen.frameworks import Framework
from bot.testgen.ghostwriter import _module_name
from bot.testgen.inputs import inputs_from_doctests, inputs_from_tests
from bot.testgen.matrix import Target
from bot.testgen.render import Example, render_module
from bot.testgen.workspace import Workspace, WriteRefused

__all__ = ["DifferentialPlan", "generate_differential", "static_side_effect"]

PROBE = Path(__file__).with_name("probe.py")
DRAWN = 100  # inputs drawn from type hints per function
MAX_CHANGED = 8  # tests per function pinning a changed behaviour
MAX_AGREED = 3  # and guarding an unchanged one
CALL_SECONDS = 2.0
_DRAW_PACKAGES = (
    "hypothesis",
    "_hypothesis_globals",
    "sortedcontainers",
    "attr",
    "attrs",
    "typing_extensions",
    "exceptiongroup",
)
_EFFECT_CALLS = {
    "open": "opens files",
    "remove": "removes files",
    "unlink": "removes files",
    "rmtree": "removes files",
    "rmdir": "removes files",
    "mkdir": "creates directories",
    "makedirs": "creates directories",
    "write_text": "writes files",
    "write_bytes": "writes files",
    "touch": "creates files",
    "rename": "moves files",
    "system": "starts processes",
    "Popen": "starts processes",
    "run": None,
    "check_output": "starts processes",
    "check_call": "starts processes",
    "urlopen": "uses the network",
    "socket": "uses the network",
    "create_connection": "uses the network",
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
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name):
            continue
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
            why = _EFFECT_CALLS.get(callee)
            if why and callee != "open":
                return f"{why} ({ast.unparse(func)})"
    return None


@dataclass
class DifferentialPlan:
    """One module's functions and their candidate inputs."""

    path: str
    module: str
    functions: dict[str, list[dict[str, object]]] = field(default_factory=dict)

    def spec(self, draw: int) -> dict[str, object]:
        return {
            "module": self.module,
            "functions": [
                {"qualname": q, "inputs": inputs, "draw": draw}
                for q, inputs in self.functions.items()
            ],
        }


def _plan_json(plans: list[DifferentialPlan], draw: int) -> str:
    return json.dumps({"call_seconds": CALL_SECONDS, "modules": [p.spec(draw) for p in plans]})


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


def _probe(ws: Workspace, fw: Framework, plan: str, tag: str, seed: int) -> dict[str, object]:
    scratch = ws.scratch()
    script = scratch / "nova_probe.py"
    if not script.is_file():
        shutil.copyfile(PROBE, script)
        _lend_hypothesis(scratch / "draw")
    plan_file, out_file = scratch / f"plan-{tag}.json", scratch / f"out-{tag}.json"
    plan_file.write_text(plan, encoding="utf-8")
    out_file.unlink(missing_ok=True)
    run = ws.run(
        [fw.run_files[0], str(script), str(plan_file), str(out_file), str(scratch / "draw")],
        timeout=180,
        env={"PYTHONHASHSEED": str(seed)},
    )
    if not out_file.is_file():
        tail = run.output.strip().splitlines()[-1:] or ["no output"]
        return {"error": tail[0][:200]}
    data = json.loads(out_file.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {"error": "unreadable probe output"}


def _plans(
    ws: Workspace, fw: Framework, targets: list[Target], notes: list[str]
) -> list[DifferentialPlan]:
    by_path: dict[str, list[Target]] = {}
    for t in targets:
        if not t.path.endswith(".py") or t.name.startswith("<"):
            continue
        if "." in t.qualname:
            notes.append(
                f"differential: {t.path}::{t.qualname} skipped: a method or nested "
                "function (inputs are found for top-level functions)"
            )
        elif t.qualname.startswith("_"):
            notes.append(f"differential: {t.path}::{t.qualname} skipped: private")
        else:
            by_path.setdefault(t.path, []).append(t)
    tests = {p: ws.read(p) or "" for p in ws.files() if fw.is_test_name(p)}
    plans = []
    for path, group in sorted(by_path.items()):
        source = ws.read(path) or ""
        names = {t.qualname for t in group}
        found = inputs_from_tests(tests, names)
        plan = DifferentialPlan(path, _module_name(path))
        for name in sorted(names):
            effect = static_side_effect(source, name)
            if effect:
                notes.append(f"differential: {path}::{name} skipped: it {effect}")
                continue
            candidates = list(
                dict.fromkeys(found.get(name, []) + inputs_from_doctests(source, name, path))
            )
            plan.functions[name] = [c.to_dict() for c in candidates]
        if plan.functions:
            plans.append(plan)
    return plans


def _key(result: dict[str, object]) -> str:
    return json.dumps([result.get("args"), result.get("kwargs")], sort_keys=True)


def _outcomes(data: dict[str, object], name: str) -> dict[str, str]:
    """input key -> outcome key of one run; {} when the run gave nothing for it."""
    functions = data.get("functions")
    entry = functions.get(name) if isinstance(functions, dict) else None
    if data.get("import_error") or entry is None:
        return {}
    if entry.get("missing"):
        return {"*": "missing"}
    return {_key(r): json.dumps(r["outcome"], sort_keys=True) for r in entry["results"]}


def _describe(outcome: str) -> str:
    """What one side did, for a comment in the test."""
    if outcome == "missing":
        return "the function did not exist"
    data = json.loads(outcome)
    if data.get("kind") == "raises":
        return f"raised {data['type']}"
    if data.get("kind") == "value":
        value = str(data["value"])
        return f"returned {value if len(value) <= 60 else value[:57] + '...'}"
    return str(data.get("kind"))


def _compare(
    name: str, first: dict[str, Any], head: list[dict[str, object]], parent: list[dict[str, object]]
) -> tuple[list[Example], str]:
    """The examples worth writing for ``name`` and a note on how the inputs fared."""
    entry = first["functions"][name]
    head_runs = [_outcomes(d, name) for d in head]
    parent_runs = [_outcomes(d, name) for d in parent]
    changed: list[Example] = []
    agreed: list[Example] = []
    unstable = unusable = 0
    for result in entry["results"]:
        key, outcome = _key(result), result["outcome"]
        ours = {json.dumps(outcome, sort_keys=True), *(r.get(key, "?") for r in head_runs)}
        if outcome["kind"] not in ("value", "raises"):
            unusable += 1
            continue
        if len(ours) > 1:
            unstable += 1
            continue
        theirs = {r.get(key, r.get("*", "missing")) for r in parent_runs}
        if len(theirs) > 1:
            unstable += 1
            continue
        same = theirs == ours or not parent_runs
        example = Example(
            list(result["args"]),
            dict(result["kwargs"]),
            list(result["imports"]),
            outcome,
            not same,
            "" if same else _describe(next(iter(theirs))),
        )
        (agreed if same else changed).append(example)
    note = (
        f"{len(entry['results'])} inputs: {len(changed)} where the parent differs, "
        f"{len(agreed)} where it agrees"
    )
    if unstable:
        note += f", {unstable} non-deterministic (dropped)"
    if unusable:
        note += f", {unusable} unusable (too slow, or a value that does not render)"

    def size(e: Example) -> int:  # the simplest inputs make the most readable tests
        return sum(map(len, e.args)) + sum(len(k) + len(v) for k, v in e.kwargs.items())

    changed.sort(key=size)
    agreed.sort(key=size)
    return changed[:MAX_CHANGED] + agreed[:MAX_AGREED], note


def generate_differential(
    ws: Workspace, fw: Framework, targets: list[Target], parent: str | None
) -> list[str]:
    """Write one regression test file per changed module; return notes on what it did.
    Each of the four runs (head twice, parent twice) probes every module at once."""
    notes: list[str] = []
    plans = _plans(ws, fw, targets, notes)
    if not plans:
        return notes + ["differential: no changed public top-level Python function to test"]
    first = _probe(ws, fw, _plan_json(plans, DRAWN), "head-1", 0)
    if "error" in first:
        return notes + [f"differential: the changed modules could not be probed: {first['error']}"]
    found = _modules(first)
    rendered = [
        DifferentialPlan(
            p.path,
            p.module,
            {
                q: [
                    {"args": r["args"], "kwargs": r["kwargs"], "imports": r["imports"]}
                    for r in entry["results"]
                ]
                for q, entry in found[p.module]["functions"].items()
            },
        )
        for p in plans
        if p.module in found and not found[p.module].get("import_error")
    ]
    again = _plan_json(rendered, 0)
    head = [_modules(_probe(ws, fw, again, "head-2", 1))]
    before: list[dict[str, dict[str, Any]]] = []
    if parent:
        with Workspace(
            ws.repo,
            parent,
            fw,
            bin_dirs=ws.bin_dirs,
            memory_limit=ws.memory_limit,
            isolation=ws.isolation,
            shared=ws.user,
        ) as parent_ws:
            before = [
                _modules(_probe(parent_ws, fw, again, f"parent-{seed}", seed)) for seed in (0, 1)
            ]
    for plan in plans:
        _one_module(
            ws,
            fw,
            plan,
            found.get(plan.module, {}),
            [h.get(plan.module, {}) for h in head],
            [b.get(plan.module, {}) for b in before],
            notes,
        )
    return notes


def _modules(data: dict[str, object]) -> dict[str, dict[str, Any]]:
    modules = data.get("modules")
    return modules if isinstance(modules, dict) else {}


def _one_module(
    ws: Workspace,
    fw: Framework,
    plan: DifferentialPlan,
    first: dict[str, Any],
    head: list[dict[str, Any]],
    parent: list[dict[str, Any]],
    notes: list[str],
) -> None:
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
        chosen, how = _compare(name, first, head, parent)
        notes.append(f"differential: {plan.path}::{name}: {how}")
        if chosen:
            examples[name] = chosen
            params[name] = list(entry.get("params") or [])
    if not examples:
        return
    stem = plan.module.replace(".", "_")
    test_dir = fw.test_dirs[0].strip("/")
    target = f"{test_dir}/test_nova_{stem}.py" if test_dir != "." else f"test_nova_{stem}.py"
    try:
        ws.write_test(target, render_module(plan.module, plan.path, examples, params))
    except WriteRefused as exc:
        notes.append(f"differential: {exc}")
        return
    notes.append(f"differential wrote {target} for {', '.join(sorted(examples))}")
