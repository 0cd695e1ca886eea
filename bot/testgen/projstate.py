"""The project's own module-level settings a change may read (issue 35).

Besides the standard library's process-wide settings (ambient.py), a library has its
own: a module global that a function of the project chooses (``bitcoin.SelectParams(
'testnet')`` sets ``bitcoin.params``; ``set_mode('strict')`` sets ``MODE``; a registry
filled by ``register(...)``). A change in a branch that runs only under another setting
agrees on every input under the default one. This module finds, statically:

- the settings: module-level names of the project that the changed lines (removed or
  added) read, directly or through a function of the project they call (one level);
- their setters: functions of the project that assign such a name (``global NAME`` and
  an assignment), an attribute or item of it, or fill it (``NAME.append(...)``);
- the setters' arguments: their calls with literal arguments in the project's files and
  docs, the literals the project compares the setting (or the setter's parameter) with,
  the keys of a module-level dict the setter looks its parameter up in, and the
  siblings of the setting's default in a module-level collection.

Each (setter, arguments) becomes a setting of ambient.py (``ambient.project_key``): the
side-runner calls each input again after the setter, on both sides, with the package's
module state saved before and restored after (``ambient.project_setting``).
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from bot.testgen import ambient
from bot.testgen.ghostwriter import _module_name
from bot.testgen.inputs import Candidate

if TYPE_CHECKING:
    from bot.testgen.matrix import Target
    from bot.testgen.workspace import Workspace

MAX_SETTERS = 3  # setters tried per job
MAX_ARGS = 3  # argument tuples tried per setter
MAX_KEYS = 4  # (setter, arguments) tried in all: each calls every input once more
_FILLS = {"append", "add", "update", "setdefault", "extend", "insert", "__setitem__"}
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")
_DOCS = (".md", ".rst", ".txt")


@dataclass
class _Module:
    """What one module of the project binds at its top level."""

    name: str
    tree: ast.Module
    text: str
    top: set[str] = field(default_factory=set)  # names assigned (or classes defined)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)  # a local name -> what it names


@dataclass
class Setter:
    module: str
    name: str
    node: ast.FunctionDef
    sets: set[tuple[str, str]] = field(default_factory=set)  # (module, global)


def _is_test(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return (
        any(p in ("tests", "test", "testing") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name in ("conftest.py", "test.py", "tests.py")
    )


def _modules(sources: dict[str, str]) -> dict[str, _Module]:
    out: dict[str, _Module] = {}
    for path, text in sources.items():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        name = _module_name(path)
        mod = _Module(name, tree, text)
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    mod.top |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
            elif isinstance(node, ast.ClassDef):
                mod.top.add(node.name)
            elif isinstance(node, ast.FunctionDef):
                mod.functions[node.name] = node
            elif isinstance(node, ast.Import):
                for a in node.names:
                    mod.imports[a.asname or a.name.split(".")[0]] = (
                        a.name if a.asname else a.name.split(".")[0]
                    )
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([base] if base else [])])
                for a in node.names:
                    mod.imports[a.asname or a.name] = f"{base}.{a.name}"
        out[name] = mod
    return out


def _resolve(dotted: str, mod: _Module, modules: dict[str, _Module]) -> tuple[str, str] | None:
    """The (module, global) a dotted name in ``mod`` reads: ``MODE``, ``bitcoin.params.NAME``
    (-> bitcoin, params), ``from .conf import MODE`` (-> pkg.conf, MODE)."""
    parts = dotted.split(".")
    if parts[0] in mod.top or parts[0] in mod.functions:
        return (mod.name, parts[0])
    full = mod.imports.get(parts[0])
    if full is None:
        return None
    chain = full.split(".") + parts[1:]
    for cut in range(len(chain) - 1, 0, -1):
        if ".".join(chain[:cut]) in modules:
            return (".".join(chain[:cut]), chain[cut])
    return None


def _reads(text: str, mod: _Module, modules: dict[str, _Module]) -> set[tuple[str, str]]:
    found = set()
    for m in _DOTTED.finditer(text):
        hit = _resolve(re.sub(r"\s+", "", m.group()), mod, modules)
        if hit is not None:
            found.add(hit)
    return found


def _guards(before: str, after: str) -> list[str]:
    """The tests of the ``if``s (and ``while``s) whose body holds a changed line, on
    either side: a branch that runs only under a setting reads it there."""
    old, new = before.splitlines(), after.splitlines()
    spans: tuple[list[int], list[int]] = ([], [])
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag != "equal":
            spans[0].extend(range(i1 + 1, max(i2, i1 + 1) + 1))
            spans[1].extend(range(j1 + 1, max(j2, j1 + 1) + 1))
    out = []
    for text, lines in ((before, spans[0]), (after, spans[1])):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        inner = [
            n
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
            for n in ast.walk(f)
        ]  # (a module-level ``if`` ran once, at import)
        for node in inner:
            if isinstance(node, ast.If | ast.While) and node.body:
                start, end = node.body[0].lineno, node.end_lineno or node.lineno
                if any(start <= n <= end for n in lines):
                    out.append(ast.unparse(node.test))
    return out


def _setters(modules: dict[str, _Module]) -> list[Setter]:
    out = []
    for mod in modules.values():
        for func in mod.functions.values():
            declared = {n for g in ast.walk(func) if isinstance(g, ast.Global) for n in g.names}
            local = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
            found = Setter(mod.name, func.name, func)
            for node in ast.walk(func):
                targets: list[ast.expr] = []
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                    targets = [node.target]
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _FILLS
                ):
                    targets = [ast.Subscript(node.func.value, ast.Constant(0))]
                for t in targets:
                    if isinstance(t, ast.Name):
                        if t.id in declared:
                            found.sets.add((mod.name, t.id))
                        continue
                    dotted = _root(t)
                    if dotted and dotted.split(".")[0] not in local:
                        hit = _resolve(dotted, mod, modules)
                        if hit is not None and hit[1] in modules[hit[0]].top:
                            found.sets.add(hit)
            if found.sets and not _returns_held(func, {n for _, n in found.sets}):
                out.append(found)
    return out


def _returns_held(func: ast.FunctionDef, names: set[str]) -> bool:
    """A getter that fills a cache or makes a singleton returns what it holds
    (``return CACHE[key]``, ``return _instance``): it chooses nothing."""
    for node in ast.walk(func):
        if isinstance(node, ast.Return) and node.value is not None:
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value)):
                return True
    return False


def _root(node: ast.expr) -> str:
    """What ``a.b.c = ...`` / ``a.b[k] = ...`` writes (``a.b.c``; ``a.b``), as a dotted name."""
    while isinstance(node, ast.Subscript):
        node = node.value
    dotted = node
    while isinstance(dotted, ast.Attribute):
        dotted = dotted.value
    return ast.unparse(node) if isinstance(dotted, ast.Name) else ""


def _literal(node: ast.expr) -> list[object]:
    """The literals of a constant or a tuple/list/set of constants."""
    if isinstance(node, ast.Constant) and node.value is not None and node.value is not ...:
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [v for e in node.elts for v in _literal(e) if isinstance(e, ast.Constant)]
    return []


def _compared(tree: ast.AST, mentions: re.Pattern[str]) -> list[object]:
    """The literals compared (``==``, ``!=``, ``in``) with an expression ``mentions`` matches."""
    out: list[object] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or not all(isinstance(o, _EQUALS) for o in node.ops):
            continue
        sides = [node.left, *node.comparators]
        if any(not isinstance(s, ast.Constant) and mentions.search(ast.unparse(s)) for s in sides):
            for s in sides:
                out += _literal(s)
    return out


def _arguments(setter: Setter, modules: dict[str, _Module], files: dict[str, str]) -> list[str]:
    """Argument tuples (as source) to call ``setter`` with, the likeliest first."""
    args = setter.node.args
    params = [a.arg for a in [*args.posonlyargs, *args.args]]
    needed = len(params) - len(args.defaults)
    found: list[tuple[object, ...]] = []
    literal: list[object] = [_NONE] * needed
    for d in args.defaults:
        literal.append(d.value if isinstance(d, ast.Constant) else _NONE)
    calls = re.compile(rf"(?<![\w])(?<!def ){re.escape(setter.name)}\s*\(([^()\n]*)\)")
    for text in files.values():  # its calls with literal arguments, in code and docs
        for m in calls.finditer(text):
            value = _positional(m.group(1), params, literal)
            if value is None or list(value) == literal[: len(value)]:
                continue  # not literal, or every parameter at its default
            if needed <= len(value) <= len(params):
                found.append(value)
    for i, was in enumerate(literal):  # a flag's other value (``strict=False``: True)
        if isinstance(was, bool) and _NONE not in literal[:i]:
            found.append((*literal[:i], not was))
    if params and needed <= 1:
        singles: list[object] = []
        word = re.compile(rf"\b{re.escape(params[0])}\b")
        singles += _compared(setter.node, word)  # `if name == 'testnet'` in the setter
        for module, name in setter.sets:  # `if params.NAME == 'testnet'` anywhere
            said = re.compile(rf"\b{re.escape(name)}\b")
            for mod in modules.values():
                if module == mod.name or name in mod.imports or module in mod.imports.values():
                    singles += _compared(mod.tree, said)
            singles += _siblings(modules[module], name)
        singles += _choices(setter, modules, params[0])
        found += [(v,) for v in singles]
    if not params:
        found.append(())
    out: list[str] = []
    default = {repr((v,)) for v in _defaults(setter, modules, params[:1])}
    for value in found:
        source = repr(value)
        if source not in out and source not in default and _plain(value):
            out.append(source)
    return out[:MAX_ARGS]


_EQUALS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_NONE = object()  # no literal value


def _positional(inside: str, params: list[str], literal: list[object]) -> tuple[object, ...] | None:
    """A call's literal arguments (``'testnet'``, ``strict=True``) as a positional tuple,
    the literal defaults of the parameters it skips filled in; None when not literal."""
    try:
        call = ast.parse(f"f({inside})", mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not isinstance(call, ast.Call):
        return None
    given: list[object] = []
    for a in call.args:
        if not isinstance(a, ast.Constant):
            return None
        given.append(a.value)
    named = {}
    for k in call.keywords:
        if k.arg not in params or not isinstance(k.value, ast.Constant):
            return None
        named[params.index(k.arg)] = k.value.value
    last = max([len(given) - 1, *named])
    out = [*given]
    for i in range(len(given), last + 1):
        value = named.get(i, literal[i] if i < len(literal) else _NONE)
        if value is _NONE:
            return None
        out.append(value)
    return tuple(out)


def _defaults(setter: Setter, modules: dict[str, _Module], params: list[str]) -> list[object]:
    """The argument that chooses what the setting holds already: its module-level value
    is that literal (``MODE = 'lenient'``), or the setter assigns it the same expression
    under a comparison of its parameter with the literal (``if name == 'mainnet':
    params = MainParams()`` beside ``params = MainParams()``)."""
    initial: dict[str, str] = {}
    for module, name in setter.sets:
        for node in modules[module].tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                initial[name] = ast.unparse(node.value)
    out: list[object] = []
    for text in initial.values():
        with contextlib.suppress(ValueError, SyntaxError, MemoryError, RecursionError):
            out.append(ast.literal_eval(text))
    for branch in ast.walk(setter.node):
        if not (isinstance(branch, ast.If) and isinstance(branch.test, ast.Compare) and params):
            continue
        sides = [branch.test.left, *branch.test.comparators]
        if not any(isinstance(x, ast.Name) and x.id == params[0] for x in sides):
            continue
        for step in branch.body:
            if isinstance(step, ast.Assign) and any(
                isinstance(t, ast.Name) and initial.get(t.id) == ast.unparse(step.value)
                for t in step.targets
            ):
                out += [v for x in sides for v in _literal(x) if isinstance(x, ast.Constant)]
    return out


def _assigned(mod: _Module, name: str) -> list[object]:
    """The value to assign a public module-level flag no function sets, which users set
    themselves (``tabulate.PRESERVE_WHITESPACE = True``): its other value. (A name of
    another literal is as often a constant: ``DATE_CENTURY = '%C'``.)"""
    default: object = None
    for node in mod.tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            default = node.value.value if isinstance(node.value, ast.Constant) else None
    public = not name.startswith("_") and name != "TYPE_CHECKING"
    return [not default] if isinstance(default, bool) and public else []


def _plain(value: tuple[object, ...]) -> bool:
    try:
        return bool(ast.literal_eval(repr(value)) == value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False


def _siblings(mod: _Module, name: str) -> list[object]:
    """The other members of a module-level collection that holds the setting's default
    (``MODE = 'lenient'`` beside ``MODES = ('lenient', 'strict')``)."""
    default: list[object] = []
    for node in mod.tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            default = _literal(node.value)[:1] if isinstance(node.value, ast.Constant) else []
    if not default:
        return []
    out: list[object] = []
    for node in mod.tree.body:
        if isinstance(node, ast.Assign):
            value = node.value
            keys = [k for k in value.keys if k is not None] if isinstance(value, ast.Dict) else []
            members = _literal(ast.Tuple(elts=keys, ctx=ast.Load())) if keys else _literal(value)
            if len(members) > 1 and default[0] in members:
                out += [m for m in members if m != default[0]]
    return out


def _choices(setter: Setter, modules: dict[str, _Module], param: str) -> list[object]:
    """The keys of a module-level dict the setter looks its parameter up in."""
    mod = modules[setter.module]
    out: list[object] = []
    for node in ast.walk(setter.node):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Name)
            and node.slice.id == param
        ):
            for top in mod.tree.body:
                if (
                    isinstance(top, ast.Assign)
                    and isinstance(top.value, ast.Dict)
                    and any(isinstance(t, ast.Name) and t.id == node.value.id for t in top.targets)
                ):
                    out += [k.value for k in top.value.keys if isinstance(k, ast.Constant)]
    return out


def settings(
    ws: Workspace, targets: list[Target], parent: str | None, notes: list[str]
) -> list[str]:
    """The project's own settings the change's lines read, as ambient.py's keys (one
    per setter and arguments): every input is also called under each, on both sides."""
    if not parent:
        return []
    files = {p: ws.read(p) or "" for p in ws.files() if p.endswith((".py", *_DOCS))}
    return found_settings(
        files,
        [(p, ws.parent_text(p, parent)) for p in sorted({t.path for t in targets})],
        notes,
    )


def found_settings(
    files: dict[str, str], changed: list[tuple[str, str | None]], notes: list[str]
) -> list[str]:
    """``files``: the head's files (path -> text); ``changed``: the changed modules'
    paths with their parent's text."""
    sources = {p: t for p, t in files.items() if p.endswith(".py") and not _is_test(p)}
    modules = _modules(sources)
    read: set[tuple[str, str]] = set()
    for path, before in changed:
        if path not in sources:
            continue
        mod = modules.get(_module_name(path))
        if mod is None:
            continue
        lines = [ln.split("#", 1)[0] for ln in ambient.changed_lines(before, sources[path])]
        lines += _guards(before or "", sources[path])
        direct = _reads("\n".join(lines), mod, modules)
        read |= direct
        for module, name in direct:  # through a function of the project they call
            func = modules[module].functions.get(name)
            if func is not None:
                body = ast.get_source_segment(modules[module].text, func) or ""
                read |= _reads(body, modules[module], modules)
    keys: list[str] = []
    said: list[str] = []
    setters = _setters(modules)
    for setter in setters:
        hits = sorted(setter.sets & read)
        if not hits or len(said) >= MAX_SETTERS:
            continue
        tried = _arguments(setter, modules, files)[: MAX_KEYS - len(keys)]
        keys += [ambient.project_key(setter.module, setter.name, a) for a in tried]
        if tried:
            what = ", ".join(f"{m}.{n}" for m, n in hits)
            said.append(f"{what} (set by {setter.module}.{setter.name}: {', '.join(tried)})")
    unset = read - {h for s in setters for h in s.sets}
    for module, name in sorted(unset):  # a public flag users assign themselves
        values = _assigned(modules[module], name)[: MAX_KEYS - len(keys)]
        keys += [ambient.project_key(module, f"{name}=", repr((v,))) for v in values]
        if values:
            said.append(f"{module}.{name} (assigned: {', '.join(repr(v) for v in values)})")
    if said:
        notes.append(
            f"differential: the changed lines read the project's own settings: {'; '.join(said)}"
        )
    return keys


def unset_inputs(
    source: str, qualname: str, strings: list[str], module: str, settings: list[str]
) -> list[Candidate]:
    """Inputs of a changed function that needs no argument when the change reads a
    project's own setting: each parameter that defaults to None given by keyword a
    string of the changed lines (or an empty one), the others left at their defaults.
    Code that reads a setting often sits behind ``if x is None`` fallbacks
    (``BaseProxy(btc_conf_file=...)`` reads a cookie file under the network's folder
    only when no URL is given), and the setting's calls go to the first inputs only:
    these come first."""
    node = _function(source, qualname)
    if node is None or not _may_read(ast.get_source_segment(source, node) or "", module, settings):
        return []
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    required = [a.arg for a in positional[: len(positional) - len(args.defaults)]]
    if [r for r in required if r not in ("self", "cls")] or None in args.kw_defaults:
        return []  # a call needs more than one keyword: the fallbacks sit behind those
    pairs = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [
        (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    values = [*dict.fromkeys(repr(s) for s in strings[:2]), "''"]
    out = []
    for arg, default in pairs:
        if isinstance(default, ast.Constant) and default.value is None:
            for v in values:
                out.append(Candidate((), ((arg.arg, v),), (), "a setting's fallback"))
    return out[:UNSET_INPUTS]


UNSET_INPUTS = 24


def _may_read(text: str, module: str, settings: list[str]) -> bool:
    """A function (its source) of ``module`` that may read one of the project's own
    ``settings``: one of the setter's module, or naming that module (``config.MODE``)
    or the name assigned (``PRESERVE_WHITESPACE``)."""
    for key in settings:
        if not key.startswith(ambient.PROJECT):
            continue
        where, setter, _ = json.loads(key.removeprefix(ambient.PROJECT))
        word = setter[:-1] if setter.endswith("=") else where.rsplit(".", 1)[-1]
        if where == module or re.search(rf"\b{re.escape(word)}\b", text):
            return True
    return False


def _function(source: str, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        body: list[ast.stmt] = ast.parse(source).body
    except (SyntaxError, ValueError):
        return None
    found: ast.AST | None = None
    for part in qualname.split("."):
        found = next(
            (n for n in body if isinstance(n, _DEFS) and n.name == part),
            None,
        )
        if found is None:
            return None
        body = found.body
    if isinstance(found, ast.ClassDef):
        return _function(source, f"{qualname}.__init__")
    return found if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) else None


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
