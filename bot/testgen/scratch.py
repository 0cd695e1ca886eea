"""Calls that write files, in a scratch directory of their own (issue 35). The side-runner's
audit hook stops any call that writes a file, so a changed config writer, cache, exporter
or SQLite store was never compared. The side-runner (``probe.py``, which imports a copy of
this module as ``nova_scratch``: standard library only, any Python 3 the project runs)
offers such a function a scratch directory instead:

- a function is probed in scratch mode when the plan says so (an input carries
  ``scratch``: head's first run found it writes) or when a call of it was refused for
  writing, creating, removing or moving files (its inputs are then tried again, all in
  scratch mode, so every input of one side is observed alike);
- each call runs with its current directory a FRESH scratch directory (made before the
  guard is on, removed after); a write, mkdir, remove or rename whose path resolves
  inside it is allowed, anything outside is refused as before (an SQLite database
  created outside it too);
- a parameter named like a path (``path``, ``file``, ``db``, ``output``...) or hinted
  ``Path``/``PathLike`` gets scratch-relative names (``out.txt``, ``data.db``, ``out``),
  of the call or of the instance's constructor, so a call that needs a name reaches its
  write;
- the outcome gains ``files``: what the directory holds after the call, by relative name:
  a small text file's text, else its size and digest; an SQLite file's tables, their
  columns and row counts; a text that names the scratch directory only by its name.

The written test does ``monkeypatch.chdir(tmp_path)``, the call, then asserts the names
under ``tmp_path`` and each file's content (``render_files``): never this machine's paths.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import typing

WANTED = [False]  # the function being probed runs its calls in scratch directories
ACTIVE = [""]  # the current call's scratch directory (real path; "": none)
FILE_KINDS = (
    "writes files",
    "creates directories",
    "removes files",
    "moves files",
    "changes files",
)
# audit events that name paths: the positions of the paths among their arguments
_PATHS = {
    "open": (0,),
    "os.remove": (0,),
    "os.unlink": (0,),
    "os.rmdir": (0,),
    "shutil.rmtree": (0,),
    "os.rename": (0, 1),
    "shutil.move": (1,),
    "os.mkdir": (0,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.utime": (0,),
    "shutil.copyfile": (1,),
    "sqlite3.connect": (0,),
}
# where their directory file descriptors are (a path relative to one cannot be told)
_FDS = {
    "os.remove": (1,),
    "os.unlink": (1,),
    "os.rmdir": (1,),
    "shutil.rmtree": (1,),
    "os.mkdir": (2,),
    "os.chmod": (2,),
    "os.utime": (3,),
    "os.rename": (2, 3),
}
TEXT_CHARS = 2000  # a text file longer than this is compared by size and digest
MAX_FILES = 12  # entries of a directory described (the rest by name)
MAX_ROWS = 100000
_PATH_WORDS = re.compile(
    r"(?:^|_)(path|file|filename|fname|fn|db|database|dir|directory|folder|output|out|dest|"
    r"destination|target|filepath|outfile|outdir|location|store|cache_dir|db_path)(?:$|_)"
)
_DIR_WORDS = re.compile(r"(?:^|_)(dir|directory|folder|outdir|root)(?:$|_)")
_DB_WORDS = re.compile(r"(?:^|_)(db|database|sqlite)(?:$|_)")


def offered(why: str) -> bool:
    """Whether a refusal (``SideEffect``'s text) is one a scratch directory answers."""
    return str(why).startswith(FILE_KINDS)


def wanted(spec: dict[str, typing.Any]) -> bool:
    """Whether the plan's function is probed in scratch mode from its first call."""
    return bool(spec.get("scratch")) or any(
        isinstance(i, dict) and i.get("scratch") for i in spec.get("inputs", [])
    )


def enter() -> str:
    """A fresh scratch directory, made the current one ("" when not in scratch mode)."""
    if not WANTED[0]:
        return ""
    root = os.path.realpath(tempfile.mkdtemp(prefix="nova-scratch-"))
    ACTIVE[0] = root
    _BACK[0] = os.getcwd()
    os.chdir(root)
    return root


_BACK = [""]


def leave(root: str) -> list[list[typing.Any]] | None:
    """Back to the directory before; what ``root`` held (None when empty), then removed."""
    if not root:
        return None
    ACTIVE[0] = ""
    os.chdir(_BACK[0])
    try:
        return held(root) or None
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _as_text(path: object) -> object:
    """A path argument as text (bytes and path objects too); anything else as it is."""
    if hasattr(path, "__fspath__"):
        path = os.fspath(path)
    return os.fsdecode(path) if isinstance(path, bytes) else path


def _within(path: object) -> bool:
    root = ACTIVE[0]
    path = _as_text(path)
    if not isinstance(path, str) or not root or path.startswith("file:"):
        return False
    whole = os.path.realpath(os.path.join(root, path))  # absolute: no getcwd read
    return whole == root or whole.startswith(root + os.sep)


def inside(event: str, args: tuple[object, ...]) -> bool:
    """Whether the audit event acts on paths inside the current scratch directory only
    (a directory file descriptor cannot be told: refused as before)."""
    where = _PATHS.get(event)
    if where is None or not ACTIVE[0]:
        return False
    fds = [args[i] for i in _FDS.get(event, ()) if i < len(args)]
    return all(f is None for f in fds) and all(i < len(args) and _within(args[i]) for i in where)


def creates(event: str, args: tuple[object, ...]) -> str:
    """An SQLite database opened on a file that does not exist yet: the call writes it."""
    if event != "sqlite3.connect" or not args:
        return ""
    name = _as_text(args[0])
    if not isinstance(name, str) or name in ("", ":memory:") or name.startswith("file:"):
        return ""
    return "" if os.path.exists(name) else f"writes files ({name!r})"


def held(root: str) -> list[list[typing.Any]]:
    """[relative name, what it holds] of every entry under ``root``, sorted by name."""
    found: list[str] = []
    for top, dirs, files in os.walk(root):
        dirs.sort()
        for name in [*dirs, *files]:
            found.append(os.path.relpath(os.path.join(top, name), root).replace(os.sep, "/"))
    out = []
    for i, name in enumerate(sorted(found)):
        path = os.path.join(root, name)
        if os.path.isdir(path):
            out.append([name, {"dir": True}])
        elif i < MAX_FILES:
            out.append([name, _described(path, root)])
        else:
            out.append([name, {}])
    return out


def _described(path: str, root: str) -> dict[str, typing.Any]:
    with open(path, "rb") as handle:
        data = handle.read()
    if data.startswith(b"SQLite format 3\x00"):
        tables = _tables(path)
        if tables is not None:
            return {"tables": tables}
    # this run's directories (the scratch one, the project's): a file naming them is
    # told by its name only
    here = [root, os.path.basename(root), *([_BACK[0]] if len(_BACK[0]) > 1 else [])]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # as read_text reads it
        if any(h in text for h in here) or re.search(r"0x[0-9a-f]{6,}", text):
            return {}  # or an address
        if len(text) <= TEXT_CHARS and "\x00" not in text:
            return {"text": text}
    if any(os.fsencode(h) in data for h in here):
        return {}
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _tables(path: str) -> dict[str, typing.Any] | None:
    """table -> [its columns, its row count], or None when it cannot be read."""
    import sqlite3

    try:
        db = sqlite3.connect(path)
        try:
            names = [
                str(r[0])
                for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"
                )
            ]
            out: dict[str, typing.Any] = {}
            for name in names:
                quoted = name.replace('"', '""')
                columns = [str(r[1]) for r in db.execute(f'PRAGMA table_info("{quoted}")')]
                count = db.execute(f'SELECT COUNT(*) FROM "{quoted}"').fetchone()[0]
                out[name] = [columns, int(count)]
            return out
        finally:
            db.close()
    except Exception:  # a file that only starts like a database
        return None


def path_name(param: str) -> str:
    """The scratch-relative value of a path-like parameter (its kind by its name)."""
    if _DB_WORDS.search(param.lower()):
        return "data.db"
    if _DIR_WORDS.search(param.lower()):
        return "out"
    return "out.txt"


def path_like(sig: typing.Any) -> list[str]:
    """The parameters of an ``inspect.Signature`` that name a path: by name, or hinted
    ``Path``/``PathLike``."""
    if sig is None:
        return []
    out = []
    for name, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or name in ("self", "cls"):
            continue
        hint = str(getattr(param.annotation, "__name__", param.annotation))
        if _PATH_WORDS.search(name.lower()) or "Path" in hint:
            out.append(name)
    return out


def with_paths(sig: typing.Any, args: list[object], kwargs: dict[str, object]) -> typing.Any:
    """(args, kwargs) with every path-like parameter given a scratch-relative name, or
    None when there is none (or every one already holds a relative path string)."""
    names = path_like(sig)
    if not names or sig is None:
        return None
    params = list(sig.parameters)
    args, kwargs = list(args), dict(kwargs)
    changed = False
    for name in names:
        value = path_name(name)
        at = params.index(name)
        if at < len(args) and not _relative(args[at]):
            args[at], changed = value, True
        elif at >= len(args) and not _relative(kwargs.get(name)):
            kwargs[name], changed = value, True
    return (args, kwargs) if changed else None


def filled(sig: typing.Any, values: typing.Any, unplain: object) -> typing.Any:
    """A mined call's (args, kwargs) whose value of a path-like parameter was not plain
    (the tests' ``tmp_path / "x.db"``) with a scratch name instead (scratch mode only)."""
    if not WANTED[0] or values is None or sig is None:
        return values
    args, kwargs = list(values[0]), dict(values[1])
    params = list(sig.parameters)
    for name in path_like(sig):
        at = params.index(name)
        if at < len(args) and args[at] is unplain:
            args[at] = path_name(name)
        elif kwargs.get(name) is unplain:
            kwargs[name] = path_name(name)
    return args, kwargs


def _relative(value: object) -> bool:
    return isinstance(value, str) and bool(value) and not os.path.isabs(value)


def offer_paths(
    sig: typing.Any, cases: list[typing.Any], init: typing.Any, make: typing.Any
) -> list[typing.Any]:
    """More cases (``make(case, args, ctor)``) whose path-like parameters (of the call,
    else of the instance's constructor) hold scratch names: on the first few cases."""
    out = []
    for case in cases[:6]:
        if case.ctor is not None:
            ctor = with_paths(init, *case.ctor)
            if ctor is not None:
                out.append(make(case, case.args, ctor))
        call = with_paths(sig, *case.args)
        if call is not None:
            out.append(make(case, call, case.ctor))
    return out


# -- the written test's side (Nova's, not the side-runner's) -------------------------------

LISTED = "sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob('*'))"
_TABLES = (
    "{t: [[c[1] for c in db.execute(f'PRAGMA table_info(\"{t}\")')], "
    "db.execute(f'SELECT COUNT(*) FROM \"{t}\"').fetchone()[0]] for (t,) in db.execute("
    "\"SELECT name FROM sqlite_master WHERE type='table' ORDER BY name\")}"
)


def chdir_needed(outcome: dict[str, typing.Any], parent: object, flagged: bool) -> bool:
    """Whether a written test runs in ``tmp_path``: head's call was probed in scratch
    mode, or either side's call left files."""
    theirs = parent.get("files") if isinstance(parent, dict) else None
    return flagged or bool(outcome.get("files")) or bool(theirs)


def written(body: list[str], outcome: dict[str, typing.Any]) -> list[str]:
    """The test's body in ``tmp_path``, then what head's call left there: the names,
    then each file's text, digest or tables."""
    files = outcome.get("files") or []
    checks = [f"assert {LISTED} == {[name for name, _ in files]!r}"]
    for name, what in files:
        at = f"(tmp_path / {name!r})"
        if "text" in what:
            checks.append(f"assert {at}.read_text(encoding='utf-8') == {what['text']!r}")
        elif "sha256" in what:
            checks.append(
                f"assert hashlib.sha256({at}.read_bytes()).hexdigest() == {what['sha256']!r}"
            )
        elif "tables" in what:
            checks += [
                f"with contextlib.closing(sqlite3.connect(tmp_path / {name!r})) as db:",
                f"    assert {_TABLES} == {what['tables']!r}",
            ]
    return ["    monkeypatch.chdir(tmp_path)", *body, *(f"    {c}" for c in checks)]


def written_imports(outcome: dict[str, typing.Any]) -> list[str]:
    kinds = {k for _, what in outcome.get("files") or [] for k in what}
    out = ["import hashlib"] if "sha256" in kinds else []
    return out + (["import contextlib", "import sqlite3"] if "tables" in kinds else [])


def written_head(outcome: dict[str, typing.Any]) -> str:
    """What head's call left, for the facts of the test."""
    names = [name for name, _ in outcome.get("files") or []]
    return f", leaving files {names}" if names else ", leaving no files"


_WRITES = re.compile(
    r"\bsqlite3\b|\bconnect\(|\.write_(?:text|bytes)\(|json\.dump\(|open\([^)]*['\"][wax+]"
)


def writes(source: str) -> bool:
    """Whether a module's source looks like it writes files somewhere (its functions'
    calls that pass the tests' paths are then mined with scratch names)."""
    return _WRITES.search(source) is not None


def named_paths(tests: dict[str, str], source: str, qualname: str) -> dict[str, str]:
    """The test files whose calls of ``qualname`` (or of its class) pass a path that is not
    plain data (``tmp_path / "s.json"``) to a path-like parameter, with a scratch name
    there instead (``'out.txt'``): the mined call then reaches the write."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    parts = qualname.split(".")
    wanted: dict[str, list[str]] = {}  # callee name -> its parameters (no self)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in parts[:-1]:
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef) and sub.name == "__init__":
                    wanted[node.name] = [a.arg for a in sub.args.args[1:]]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == parts[-1]:
            wanted[node.name] = [a.arg for a in node.args.args if a.arg not in ("self", "cls")]
    out = {}
    for path, text in tests.items():
        try:
            found = ast.parse(text)
        except SyntaxError:
            continue
        changed = False
        for call in ast.walk(found):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            callee = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            params = wanted.get(callee)
            if params is None:
                continue
            for i, arg in enumerate(call.args[: len(params)]):
                if _PATH_WORDS.search(params[i].lower()) and not isinstance(arg, ast.Constant):
                    call.args[i], changed = ast.Constant(path_name(params[i])), True
            for k in call.keywords:
                word = str(k.arg or "").lower()
                if _PATH_WORDS.search(word) and not isinstance(k.value, ast.Constant):
                    k.value, changed = ast.Constant(path_name(word)), True
        if changed:
            out[path] = ast.unparse(found)
    return out
