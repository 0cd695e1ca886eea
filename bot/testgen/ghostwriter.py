"""No model configured: Hypothesis' ghostwriter writes property tests for changed Python
functions. It runs in the sandbox (importing the user's module runs their code), with each
function's documented or raised exceptions allowed (``except_``).

Ghostwriter's default tests assert only "does not crash". When it finds a round-trip or
idempotent form (``encode``/``decode``, ``sort``), it writes that stronger test instead.
Every test it writes goes through the same gates as the model's.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import PurePosixPath

from bot.testgen.frameworks import Framework
from bot.testgen.matrix import Target
from bot.testgen.workspace import Workspace, WriteRefused

__all__ = ["documented_exceptions", "generate_with_ghostwriter", "test_kind"]

_DOC_RAISES = re.compile(r"(?::raises\s+|Raises:\s*\n\s*)([A-Z]\w*)")

_SCRIPT = """
import importlib, inspect, json, re, sys, builtins
from hypothesis.extra import ghostwriter
plan = json.loads(sys.argv[1])
module = importlib.import_module(plan["module"])
names = list(plan["functions"])
public = {n for n, f in vars(module).items() if inspect.isfunction(f)
          and f.__module__ == module.__name__ and not n.startswith("_")}
pairs = [("encode", "decode"), ("dumps", "loads"), ("dump", "load"), ("compress", "decompress"),
         ("serialize", "deserialize"), ("encrypt", "decrypt"), ("pack", "unpack"),
         ("to_", "from_")]
for name in list(names):  # a changed half of a round trip brings its partner
    for a, b in pairs:
        for x, y in ((a, b), (b, a)):
            if x in name and name.replace(x, y, 1) in public and name.replace(x, y, 1) not in names:
                names.append(name.replace(x, y, 1))
funcs = [getattr(module, name) for name in names]
excepts = []
for name in plan["excepts"]:
    exc = getattr(module, name, None) or getattr(builtins, name, None)
    if isinstance(exc, type) and issubclass(exc, Exception):
        excepts.append(exc)
print(ghostwriter.magic(*funcs, except_=tuple(excepts) or (), style="pytest"))
"""


def documented_exceptions(source: str, name: str) -> list[str]:
    """Exception names the function raises or documents (``Raises:`` / ``:raises X:``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            found.update(_DOC_RAISES.findall(ast.get_docstring(node) or ""))
            for sub in ast.walk(node):
                if isinstance(sub, ast.Raise) and sub.exc is not None:
                    target = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
                    if isinstance(target, ast.Name):
                        found.add(target.id)
    return sorted(found)


def test_kind(test_source: str) -> str:
    if "roundtrip" in test_source or "round_trip" in test_source:
        return "round-trip"
    if "idempotent" in test_source:
        return "idempotent"
    if "equivalent" in test_source:
        return "equivalent"
    return "does not crash"


def _module_name(path: str) -> str:
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def generate_with_ghostwriter(ws: Workspace, fw: Framework, targets: list[Target]) -> list[str]:
    """Write one ghostwriter test file per changed module; return notes on what it did."""
    notes: list[str] = []
    by_module: dict[str, list[Target]] = {}
    for t in targets:
        if (
            t.path.endswith(".py")
            and "." not in t.qualname
            and not t.qualname.startswith(("<", "_"))
        ):
            by_module.setdefault(t.path, []).append(t)
    if not by_module:
        return ["ghostwriter: no changed public top-level Python function to write for"]
    test_dir = fw.test_dirs[0].strip("/")
    for path, group in sorted(by_module.items()):
        source = ws.read(path) or ""
        names = [t.qualname for t in group]
        excepts = sorted({e for n in names for e in documented_exceptions(source, n)})
        module = _module_name(path)
        plan = {"module": module, "functions": names, "excepts": excepts}
        run = ws.run([fw.run_files[0], "-c", _SCRIPT, json.dumps(plan)], timeout=120)
        if not run.passed:
            last = run.output.strip().splitlines()[-1:] or ["no output"]
            notes.append(f"ghostwriter could not write tests for {path}: {last[0][:200]}")
            continue
        stem = module.replace(".", "_")
        target = f"{test_dir}/{fw.nova_file(stem)}" if test_dir != "." else fw.nova_file(stem)
        try:
            ws.write_test(target, run.output)
        except WriteRefused as exc:
            notes.append(f"ghostwriter: {exc}")
            continue
        allowed = f" (allowed: {', '.join(excepts)})" if excepts else ""
        notes.append(
            f"ghostwriter wrote {target} for {', '.join(names)}{allowed}: "
            f"{test_kind(run.output)} tests"
        )
    return notes
