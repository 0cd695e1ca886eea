"""Candidate inputs for the differential generator, read (never run) from the repository:
the arguments of each call of a function in the existing tests, with the rows of a
``pytest.mark.parametrize`` followed into ``f(*args)`` / ``f(x)``, and the calls in the
function's doctest examples. An input is expression source plus the import lines of the file
it came from; the side-runner evaluates it in the sandbox and keeps it only when it is a
plain value that renders back to Python."""

from __future__ import annotations

import ast
import copy
import io
import itertools
import re
import textwrap
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from bot.testgen.pyversion import dead_branches, grown, loops
from bot.testgen.tables import rows_of, spread

__all__ = [
    "Candidate",
    "assignments",
    "doc_examples",
    "inline",
    "is_doc",
    "inputs_from_doctests",
    "inputs_from_tests",
    "literal_pool",
    "steer",
    "steering_literals",
]

MAX_PER_FUNCTION = 60
_PLAIN = (
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.UnaryOp,
    ast.BinOp,
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.keyword,
    ast.Load,
    ast.operator,
    ast.unaryop,
    ast.Starred,
)
_BUILTINS = {
    "float",
    "int",
    "str",
    "bytes",
    "complex",
    "frozenset",
    "set",
    "tuple",
    "list",
    "dict",
    "bool",
    "range",
    "True",
    "False",
    "None",
}
_PROMPT = re.compile(r"^\s*>>> (.*)$")


@dataclass(frozen=True)
class Candidate:
    """One call to try: argument sources (None: a value that is not plain data, given
    for an optional parameter, which then keeps its default); for a member of a class,
    the constructor call and the steps the tests took on the instance before it."""

    args: tuple[str | None, ...]
    kwargs: tuple[tuple[str, str | None], ...] = ()
    imports: tuple[str, ...] = field(default=(), compare=False)
    origin: str = field(default="", compare=False)
    ctor: tuple[tuple[str | None, ...], tuple[tuple[str, str | None], ...]] | None = None
    steps: tuple[str, ...] = ()
    receiver: str = field(default="", compare=False)  # the class ``ctor`` builds
    factory: str = ""  # ``ctor`` calls this class method (``Spec.from_lines``), not the class

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "args": list(self.args),
            "kwargs": dict(self.kwargs),
            "imports": list(self.imports),
            "origin": "doctest"
            if "doctest" in self.origin
            else "typed"
            if "(typed)" in self.origin
            else "tests",
        }
        if self.ctor is not None:
            out["ctor"] = {"args": list(self.ctor[0]), "kwargs": dict(self.ctor[1])}
            if self.factory:
                out["ctor"]["factory"] = self.factory  # type: ignore[index]
            out["steps"] = list(self.steps)
        return out


def _plain(node: ast.AST, bound: set[str]) -> bool:
    """An expression made of literals, operators and calls of imported names only."""
    for sub in ast.walk(node):
        if not isinstance(sub, _PLAIN):
            return False
        if isinstance(sub, ast.Name) and sub.id not in bound | _BUILTINS:
            return False
    return True


def _imports(tree: ast.Module) -> tuple[list[str], set[str]]:
    """The file's import lines, the ones inside its tests too (``import datetime as dt``
    in a test body), and the names they bind. Relative imports are left out: the
    side-runner cannot resolve them."""
    lines, bound = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and node.level:
                continue
            line = ast.unparse(node)
            if line not in lines:
                lines.append(line)
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
    return lines, bound


SELF = "self__"  # ``self.x`` of a test class, read as the name ``self__x``
_SET_UPS = ("setUp", "setup_method", "setup")


class _SelfNames(ast.NodeTransformer):
    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return ast.copy_location(ast.Name(id=f"{SELF}{node.attr}", ctx=node.ctx), node)
        self.generic_visit(node)
        return node


def test_bodies(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The file's functions as the reader sees them: in a test class, ``setUp``'s
    statements first, and ``self.x`` as a plain name, so what the tests bind to names
    (on ``self`` or not) and then pass on is followed like any other name."""
    out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    done: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        methods = [f for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
        setup = [s for f in methods if f.name in _SET_UPS for s in f.body]
        for f in methods:
            done.add(id(f))
            if f.name in _SET_UPS:
                continue
            copied = copy.deepcopy(f)
            copied.body = [*copy.deepcopy(setup), *copied.body]
            out.append(_SelfNames().visit(copied))
    out += [
        f
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and id(f) not in done
    ]
    return out


def _parametrize(
    func: ast.FunctionDef | ast.AsyncFunctionDef, env: dict[str, ast.expr] | None = None
) -> list[dict[str, ast.expr]]:
    """The rows of the function's ``parametrize`` decorators (their product), each a
    mapping of argument name to its expression (cases bound to a name: ``tables``)."""
    tables: list[list[dict[str, ast.expr]]] = []
    for deco in func.decorator_list:
        if not (
            isinstance(deco, ast.Call)
            and isinstance(deco.func, ast.Attribute)
            and deco.func.attr == "parametrize"
            and len(deco.args) >= 2
        ):
            continue
        names_node, rows_node = deco.args[0], rows_of(deco.args[1], env)
        if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
            names = [n.strip() for n in names_node.value.split(",") if n.strip()]
            whole = len(names) == 1  # pytest: one name in a string, each row is the value
        elif isinstance(names_node, ast.List | ast.Tuple):
            names = [
                e.value
                for e in names_node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            whole = False
        else:
            continue
        if not isinstance(rows_node, ast.List | ast.Tuple):
            continue
        table = []
        for row in rows_node.elts:
            if (
                isinstance(row, ast.Call)
                and isinstance(row.func, ast.Attribute)
                and row.func.attr == "param"
            ):
                values = list(row.args)
            elif whole:
                values = [row]
            elif isinstance(row, ast.Tuple | ast.List):
                values = list(row.elts)
            else:
                continue
            if len(values) == len(names):
                table.append(dict(zip(names, values, strict=True)))
        tables.append(table)
    rows: list[dict[str, ast.expr]] = []
    for combo in itertools.islice(itertools.product(*tables), 200) if tables else []:
        merged: dict[str, ast.expr] = {}
        for part in combo:
            merged.update(part)
        rows.append(merged)
    return rows


def _expand(
    call: ast.Call, row: dict[str, ast.expr], env: dict[str, ast.expr] | None = None
) -> tuple[list[ast.expr], list[ast.keyword]] | None:
    """The call's arguments with the row's values put in for the test's parameters,
    also inside an argument (a stream made of the row's text)."""
    args: list[ast.expr] = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            inner = row.get(arg.value.id) if isinstance(arg.value, ast.Name) else None
            if not isinstance(inner, ast.List | ast.Tuple):
                return None
            args += inner.elts
        elif isinstance(arg, ast.Name) and arg.id in row:
            args.append(row[arg.id])
        else:  # the row's values inside it too: ``parse(io.StringIO(text))``
            args.append(inline(arg, row))
    keywords = []
    for kw in call.keywords:
        if kw.arg is None:  # ``**kwargs``: a dict literal of the row's, or bound (tables)
            given = spread(inline(kw.value, {**(env or {}), **row}))
            if given is None:
                return None
            keywords += given
            continue
        keywords.append(ast.keyword(arg=kw.arg, value=inline(kw.value, row)))
    return args, keywords


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def mapped_calls(call: ast.Call, env: dict[str, ast.expr]) -> list[ast.Call]:
    """``filter(f, xs)`` / ``map(f, xs)`` over a list the test wrote (or bound to a
    name): one call ``f(x)`` per item."""
    if not (
        isinstance(call.func, ast.Name)
        and call.func.id in ("filter", "map")
        and len(call.args) == 2
        and not call.keywords
    ):
        return []
    items = inline(call.args[1], env)
    if not isinstance(items, ast.List | ast.Tuple | ast.Set):
        return []
    return [
        ast.copy_location(ast.Call(func=call.args[0], args=[item], keywords=[]), call)
        for item in items.elts[:20]
        if not isinstance(item, ast.Starred)
    ]


def _calls_of(
    node: ast.AST, names: set[str], env: dict[str, ast.expr] | None = None
) -> list[tuple[str, ast.Call]]:
    """Calls of the names, ``assertRaises(E, f, *args)`` / ``pytest.raises(E, f,
    *args)`` read as the call ``f(*args)``, and ``filter(f, xs)`` as ``f(x)`` for each."""
    found = []
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        callee = _callee(sub)
        for each in mapped_calls(sub, env or {}):
            mapped = _callee(each)
            if mapped in names:
                found.append((mapped, each))
        if callee in names:
            found.append((callee, sub))
        elif callee in ("assertRaises", "raises", "assertRaisesRegex") and len(sub.args) >= 2:
            skip = 2 if callee == "assertRaisesRegex" else 1
            inner = sub.args[skip] if len(sub.args) > skip else None
            name = (
                inner.id
                if isinstance(inner, ast.Name)
                else inner.attr
                if isinstance(inner, ast.Attribute)
                else None
            )
            if inner is not None and name in names:
                call = ast.Call(func=inner, args=sub.args[skip + 1 :], keywords=[])
                found.append((name, ast.copy_location(call, sub)))
    return found


class _Inline(ast.NodeTransformer):
    """Names bound to plain values (a table at the top of the test file, a local
    ``table = [...]``) put in place of the name."""

    def __init__(self, env: dict[str, ast.expr], depth: int = 0) -> None:
        self.env, self.depth = env, depth

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.env.get(node.id)
        if value is None or self.depth > 3:
            return node
        out: ast.AST = _Inline(self.env, self.depth + 1).visit(copy.deepcopy(value))
        return out


def inline(expr: ast.expr, env: dict[str, ast.expr]) -> ast.expr:
    if not env:
        return expr
    out = _Inline(env).visit(copy.deepcopy(expr))
    assert isinstance(out, ast.expr)
    return out


def assignments(body: list[ast.stmt], bound: set[str], env: dict[str, ast.expr]) -> None:
    """Add ``name = plain value`` statements of ``body`` (names assigned once) to env."""
    seen: dict[str, int] = {}
    found: dict[str, ast.expr] = {}
    dead = dead_branches(body)  # another Python version's branch (pyversion.py)
    looped = {id(n) for loop in loops(body) for n in ast.walk(loop)}
    for node in body:
        for sub in ast.walk(node) if not isinstance(node, ast.FunctionDef) else [node]:
            if id(sub) in dead:
                continue
            if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
                name = sub.target.id  # ``x += b"!" * (8 - len(x) % 8)`` once, on a plain x
                tail = inline(sub.value, {**env, **found})  # literals only (no object's +=)
                if name in found and id(sub) not in looped and _plain(tail, {"len"}):
                    found[name] = grown(ast.BinOp(found[name], sub.op, tail))
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                target = sub.targets[0]
                if isinstance(target, ast.Name):
                    seen[target.id] = seen.get(target.id, 0) + 1
                    # copied only when it names a value bound before (env's values are
                    # copied where they are put in): a copy of every big literal was most
                    # of a job's time on test files full of them
                    value = sub.value
                    names = [n.id for n in ast.walk(value) if isinstance(n, ast.Name)]
                    if any(n in env or n in found for n in names):
                        value = inline(value, {**env, **found})
                    if _plain(value, bound) and len(ast.unparse(value)) <= 2000:
                        found[target.id] = value
    env.update({k: v for k, v in found.items() if seen[k] == 1})


def _bind(target: ast.expr, value: ast.expr, row: dict[str, ast.expr]) -> bool:
    if isinstance(target, ast.Name):
        row[target.id] = value
        return True
    if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
        if len(target.elts) != len(value.elts):
            return False
        return all(_bind(t, v, row) for t, v in zip(target.elts, value.elts, strict=True))
    return False


def _loop_rows(
    func: ast.AST, env: dict[str, ast.expr]
) -> list[tuple[set[int], list[dict[str, ast.expr]]]]:
    """Table-driven tests: ``for a, b in [(1, 2), ...]:`` (or a table bound to a name, or
    ``table.items()``): the ids of the nodes in the loop's body and the table's rows."""
    out = []
    for loop in ast.walk(func):
        if not isinstance(loop, ast.For):
            continue
        source = loop.iter
        items = False
        if (
            isinstance(source, ast.Call)
            and isinstance(source.func, ast.Attribute)
            and source.func.attr == "items"
            and not source.args
        ):
            source, items = source.func.value, True
        table = inline(source, env)
        if items and isinstance(table, ast.Dict):
            elts: list[ast.expr] = [
                ast.Tuple(elts=[k, v], ctx=ast.Load())
                for k, v in zip(table.keys, table.values, strict=True)
                if k is not None
            ]
        elif not items and isinstance(table, ast.List | ast.Tuple | ast.Set):
            elts = list(table.elts)
        else:
            continue
        rows = []
        for elt in elts[:200]:
            row: dict[str, ast.expr] = {}
            if _bind(loop.target, elt, row):
                rows.append(row)
        if rows:
            inside = {id(n) for stmt in loop.body for n in ast.walk(stmt)}
            out.append((inside, rows))
    return out


def _candidate(
    call: ast.Call,
    row: dict[str, ast.expr],
    env: dict[str, ast.expr],
    bound: set[str],
    imports: list[str],
    origin: str,
) -> Candidate | None:
    expanded = _expand(call, row, env)
    if expanded is None:
        return None
    args, keywords = expanded
    args = [inline(a, env) for a in args]
    if not all(_plain(a, bound) for a in args):
        return None
    named: list[tuple[str, str | None]] = []
    for k in keywords:
        value = inline(k.value, env)
        named.append((str(k.arg), ast.unparse(value) if _plain(value, bound) else None))
    return Candidate(tuple(ast.unparse(a) for a in args), tuple(named), tuple(imports), origin)


def _on_instance(
    found: Candidate,
    call: ast.Call,
    row: dict[str, ast.expr],
    env: dict[str, ast.expr],
    bound: set[str],
) -> Candidate:
    """``Cls(a).member(b)``: the member's call on an instance built in place; the
    constructor's arguments go with it (with the same table row put in)."""
    inner = call.func.value if isinstance(call.func, ast.Attribute) else None
    if not isinstance(inner, ast.Call):
        return found
    name = _callee(inner)
    built = _candidate(inner, row, env, bound, list(found.imports), found.origin)
    if built is None or not name:
        return found
    factory = ""
    maker = inner.func
    if isinstance(maker, ast.Attribute) and name[:1].islower():
        # ``Version.parse("1.2.3").replace(...)``: built by a class method
        owner = maker.value
        cls = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
        if cls[:1].isupper():
            name, factory = cls, maker.attr
    return Candidate(
        found.args,
        found.kwargs,
        found.imports,
        found.origin,
        (built.args, built.kwargs),
        (),
        name,
        factory,
    )


def inputs_from_tests(files: dict[str, str], names: set[str]) -> dict[str, list[Candidate]]:
    """Each function name's candidate inputs from the test files (path -> source): its
    calls, with parametrize rows and table loops followed into them, and names bound to
    plain values (in the file or the test) put in place."""
    out: dict[str, list[Candidate]] = {n: [] for n in names}
    for path, text in sorted(files.items()):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        imports, bound = _imports(tree)
        module_env: dict[str, ast.expr] = {}
        assignments(tree.body, bound, module_env)
        for func in test_bodies(tree):
            env = dict(module_env)
            assignments(func.body, bound, env)
            calls = _calls_of(func, names, env)
            if not calls:
                continue
            rows = _parametrize(func, env) or [{}]
            loops = _loop_rows(func, env)
            for callee, call in calls:
                here = rows
                for inside, table in loops:
                    if id(call) in inside or any(id(a) in inside for a in call.args):
                        here = [{**r, **t} for r in here for t in table][:200]
                for row in here:
                    found = _candidate(call, row, env, bound, imports, f"{path}:{call.lineno}")
                    if found is not None:
                        out[callee].append(_on_instance(found, call, row, env, bound))
    return {n: list(dict.fromkeys(c))[:MAX_PER_FUNCTION] for n, c in out.items()}


def parsed_mentioning(
    files: dict[str, str], pattern: re.Pattern[str]
) -> Iterator[tuple[str, ast.Module]]:
    """(path, tree) of each file, in path order, whose text matches ``pattern`` and
    parses (a file is parsed only when it may hold what is looked for)."""
    for path, text in sorted(files.items()):
        if not pattern.search(text):
            continue
        try:
            yield path, ast.parse(text)
        except SyntaxError:
            continue


def literal_pool(files: dict[str, str], name: str, limit: int = 30) -> list[Candidate]:
    """Single-argument inputs for a one-parameter function the tests never call with
    plain values: the string and number literals of the test files that mention it."""
    found: list[Candidate] = []
    for path, tree in parsed_mentioning(files, re.compile(rf"\b{re.escape(name)}\b")):
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and type(node.value) in (str, int, float)
                and not (
                    isinstance(node.value, str) and ("\n" in node.value or len(node.value) > 60)
                )
            ):
                found.append(Candidate((repr(node.value),), (), (), f"{path} (literal)"))
    return list(dict.fromkeys(found))[:limit]


def inputs_from_doctests(source: str, name: str, path: str) -> list[Candidate]:
    """The calls of ``name`` in its docstring's ``>>>`` examples (with the examples'
    own import lines)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: list[Candidate] = []
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name):
            continue
        lines = [
            m.group(1)
            for m in map(_PROMPT.match, (ast.get_docstring(node) or "").splitlines())
            if m
        ]
        imports: list[str] = []
        bound: set[str] = set()
        for line in lines:
            try:
                parsed = ast.parse(line)
            except SyntaxError:
                continue
            more, names = _imports(parsed)
            imports += more
            bound |= names
            for _, call in _calls_of(parsed, {name}):
                if (
                    all(_plain(a, bound) for a in [*call.args, *(k.value for k in call.keywords)])
                    and all(k.arg for k in call.keywords)
                    and not any(isinstance(a, ast.Starred) for a in call.args)
                ):
                    found.append(
                        Candidate(
                            tuple(ast.unparse(a) for a in call.args),
                            tuple((str(k.arg), ast.unparse(k.value)) for k in call.keywords),
                            tuple(imports),
                            f"{path} (doctest)",
                        )
                    )
    return list(dict.fromkeys(found))


_DOC_SUFFIXES = (".rst", ".md", ".txt")
_CONTINUED = re.compile(r"^\s*\.\.\. ?(.*)$")
MAX_DOC_FILES = 40


# a fenced Python block of Markdown, and the body of an rST code directive
_FENCED = re.compile(
    r"^(`{3,}|~{3,})[ \t]*(?:python3?|py|pycon)?[ \t]*\n(.*?)^\1[ \t]*$", re.M | re.S
)
_DIRECTIVE = re.compile(
    r"^([ \t]*)\.\. (?:code-block|code|sourcecode):: *(?:python3?|py)[ \t]*\n"
    r"(?:\1[ \t]+:[^\n]*\n)*((?:[ \t]*\n|\1[ \t]+[^\n]*\n)+)",
    re.M,
)


def _code_blocks(text: str) -> list[list[str]]:
    """The Python code blocks of a documentation file that hold no ``>>>`` prompt (those
    are read as examples already): Markdown's fenced blocks and rST's ``code-block``
    directives, each as its lines, dedented; a block that does not parse is left out."""
    found = [m.group(2) for m in _FENCED.finditer(text)]
    found += [m.group(2) for m in _DIRECTIVE.finditer(text)]
    out = []
    for block in found:
        code = textwrap.dedent(block)
        if ">>>" in code or not code.strip():
            continue
        try:
            ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        out.append([row for row in code.splitlines() if row.strip()])
    return out


def doc_examples(files: dict[str, str]) -> dict[str, str]:
    """The ``>>>`` examples of the project's documentation (README, docs/), each block of
    consecutive prompts as the body of one function, so the readers of the tests read how
    the docs build objects and call them; then its Python code blocks (a README's usage
    section: ``icon_svg("play")`` in a fenced block) the same way. path -> Python source."""
    out: dict[str, str] = {}
    for path, text in sorted(files.items())[:MAX_DOC_FILES]:
        blocks: list[list[str]] = []
        current: list[str] = []
        for row in text.splitlines():
            prompt, more = _PROMPT.match(row), _CONTINUED.match(row)
            if prompt:
                current.append(prompt.group(1))
            elif more and current:
                current.append(more.group(1))
            elif current:
                blocks.append(current)
                current = []
        if current:
            blocks.append(current)
        blocks += _code_blocks(text)
        functions = []
        # the file's examples are one session (an import at the top serves them all);
        # when that does not parse, each block alone
        for n, block in enumerate([[row for b in blocks for row in b], *blocks]):
            body = "\n".join(f"    {line}" for line in block)
            source = f"def doc_example_{n}():\n{body}\n"
            try:
                ast.parse(source)
            except SyntaxError:
                continue
            functions.append(source)
            if n == 0:
                break
        if functions:
            out[f"{path} (docs)"] = "\n\n".join(functions)
    return out


def is_doc(path: str) -> bool:
    """A documentation file whose examples are read: the README, files under docs/."""
    top = path.split("/", 1)[0].lower()
    name = path.rsplit("/", 1)[-1].lower()
    return path.endswith(_DOC_SUFFIXES) and (
        top in ("doc", "docs") or ("/" not in path and name.startswith("readme"))
    )


def literal_strings(rows: Iterable[str]) -> Iterator[str | bytes]:
    """The values of the string and bytes literals of source ``rows``, each row read
    alone (a row that does not tokenize is skipped)."""
    for row in rows:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(row.strip() + "\n").readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            continue
        for tok in tokens:
            if tok.type != tokenize.STRING:
                continue
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, str | bytes):
                yield value


MAX_STEERED = 24  # inputs made from the changed lines' literals, per function


def class_at(tree: ast.Module, qualname: str) -> ast.ClassDef | None:
    """The class of a dotted qualname (``Outer.Inner``) in a module, or None."""
    body: list[ast.stmt] = tree.body
    found: ast.ClassDef | None = None
    for part in qualname.split("."):
        found = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if found is None:
            return None
        body = found.body
    return found


_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})


def member_values(name: str, source: str, lines: list[int]) -> list[Candidate]:
    """For the constructor of an enum (``Permission.__init__``): a call with the value of
    each member the changed lines add or change (``ADMIN = "ADMIN"`` gives
    ``Permission('ADMIN')``), which is how a value from outside is looked up."""
    try:
        found = class_at(ast.parse(source), name.removesuffix(".__init__"))
    except SyntaxError:
        return []
    bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in found.bases} if found else set()
    if found is None or not bases & _ENUM_BASES:
        return []
    out = []
    for node in found.body:
        if (
            isinstance(node, ast.Assign)
            and node.lineno in lines
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str | int)
            and not isinstance(node.value.value, bool)
        ):
            out.append(Candidate((repr(node.value.value),), origin="a changed member's value"))
    return out[:8]


def steering_literals(source: str, lines: list[int]) -> tuple[list[str], list[int]]:
    """The string and integer literals of the changed lines (``if "," in text``,
    ``if len(path) >= depth + 1``): what the changed code tests for, so inputs can be
    made that reach it."""
    rows = source.split("\n")
    strings: list[str] = []
    numbers: list[int] = []
    for n in lines:
        if not 0 < n <= len(rows):
            continue
        code = rows[n - 1]
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(code.strip() + "\n").readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            tokens = []
        for tok in tokens:
            try:
                value = (
                    ast.literal_eval(tok.string)
                    if tok.type in (tokenize.STRING, tokenize.NUMBER)
                    else None
                )
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, str) and 0 < len(value) <= 20 and value not in strings:
                strings.append(value)
            elif type(value) is int and abs(value) < 10**6 and value not in numbers:
                numbers.append(value)
    return strings[:6], numbers[:6]


def steer(candidates: list[Candidate], strings: list[str], numbers: list[int]) -> list[Candidate]:
    """Inputs of the tests changed towards what the changed lines test: each string
    argument with a changed string literal put at its end, inside it and in its place;
    each integer argument replaced by a changed number and its neighbours."""
    out: list[Candidate] = []
    if not strings and not numbers:
        return out
    for c in candidates[:12]:
        origin = f"{c.origin} (steered)"
        for i, source in enumerate(c.args):
            for value in _steered_values(source, strings, numbers):
                args = (*c.args[:i], value, *c.args[i + 1 :])
                out.append(replace(c, args=args, origin=origin))
        for j, (key, source) in enumerate(c.kwargs):
            for value in _steered_values(source, strings, numbers):
                kwargs = (*c.kwargs[:j], (key, value), *c.kwargs[j + 1 :])
                out.append(replace(c, kwargs=kwargs, origin=origin))
    return list(dict.fromkeys(out))[:MAX_STEERED]


def _steered_values(source: str | None, strings: list[str], numbers: list[int]) -> list[str]:
    try:
        value = ast.literal_eval(source) if source else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    out: list[str] = []
    if isinstance(value, str):
        for s in strings:
            if s in value:
                continue
            middle = len(value) // 2
            out += [repr(value + s), repr(value[:middle] + s + value[middle:]), repr(s)]
    elif type(value) is int:
        out += [repr(v) for n in numbers for v in (n, n + 1, n - 1) if v != value]
    elif isinstance(value, list | tuple | dict):
        # a table of the tests (``[("alpha", [...])]``): its first string changed
        for s in strings:
            changed = _first_string(value, s)
            if changed is not None and changed != value:
                out.append(repr(changed))
    return list(dict.fromkeys(out))


def _first_string(value: object, tail: str, depth: int = 0) -> object | None:
    """``value`` with ``tail`` put at the end of its first string (depth first); None when
    it has none."""
    if isinstance(value, str):
        return value + tail
    if depth > 8:
        return None
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            new = _first_string(item, tail, depth + 1)
            if new is not None:
                out = [*value[:i], new, *value[i + 1 :]]
                return out if isinstance(value, list) else tuple(out)
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            new = _first_string(item, tail, depth + 1)
            if new is not None:
                return {**value, key: new}
    return None
