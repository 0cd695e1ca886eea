"""The layout the architecture promises (docs/architecture.md), checked on the imports."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parents[2] / "bot"


def _imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    """The modules a file imports: everywhere (in functions, under TYPE_CHECKING too), or
    only those its import runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


@pytest.mark.parametrize(
    ("package", "other"), [("review", "bot.testgen"), ("testgen", "bot.review")]
)
def test_a_feature_never_imports_the_other(package: str, other: str) -> None:
    crossing = {
        str(path.relative_to(BOT)): sorted(
            n for n in _imports(path) if n == other or n.startswith(other + ".")
        )
        for path in (BOT / package).rglob("*.py")
    }
    assert {module: names for module, names in crossing.items() if names} == {}


def test_settings_sections_import_nothing_heavy() -> None:
    """``nova --help`` and ``load_settings`` read every section: a section module loads no
    client, no model library and not ``bot.config`` (which imports the sections)."""
    sections = [BOT / "sections.py", *BOT.rglob("settings.py")]
    assert len(sections) >= 8  # the core, llm, review, testgen, task manager, three hosts
    heavy = ("langchain", "langgraph", "github", "gitlab", "phabricator", "httpx", "mcp")
    for path in sections:
        loaded = _imports(path, top_level_only=True)
        bad = {n for n in loaded if n.split(".")[0] in heavy or n == "bot.config"}
        assert not bad, (path.relative_to(BOT), bad)


def test_loading_the_settings_loads_only_the_sections() -> None:
    """``bot.config`` runs on every command: importing it (and so each section's package)
    loads the sections and the error tree, nothing else of Nova and no third-party library."""
    code = (
        "import sys; before = set(sys.modules); import bot.config; "
        "print('\\n'.join(sorted(set(sys.modules) - before)))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    core = {"bot.config", "bot.errors", "bot.text", "bot.sections"}
    packages = {
        "bot.conversation",
        "bot.llm",
        "bot.review",
        "bot.serve",
        "bot.taskmanager",
        "bot.testgen",
    }
    extra = [
        m
        for m in loaded
        if m.startswith("bot.") and m not in core | packages and not m.endswith(".settings")
    ]
    assert extra == []
    heavy = ("click", "httpx", "langchain_core", "langgraph", "github", "gitlab", "git")
    assert [m for m in loaded if m.split(".")[0] in heavy] == []


def _session_importers(host: Path) -> list[str]:
    """The modules of a host package that import its session module, however spelled
    (``bot.hosts.h.session``, ``from bot.hosts.h import session``, ``from .session``),
    at run time, under TYPE_CHECKING or in a function."""
    package = f"bot.hosts.{host.name}"
    found = []
    for path in sorted(host.glob("*.py")):
        if path.name in ("__init__.py", "session.py"):  # ``open`` wires the session
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = package if node.level else (node.module or "")
                if node.level and node.module:
                    base = f"{package}.{node.module}"
                names = {base} | {f"{base}.{a.name}" for a in node.names}
            else:
                continue
            if f"{package}.session" in names:
                found.append(path.name)
    return found


@pytest.mark.parametrize("host", ["github", "gitlab", "phabricator"])
def test_no_part_of_a_host_imports_its_session(host: str) -> None:
    """The session wires the source, publisher and conversation to the state they share
    (in ``client.py`` / ``conduit.py``); a part that imported the session back would close
    the import circle STYLE.md names."""
    assert (BOT / "hosts" / host / "session.py").exists()
    assert _session_importers(BOT / "hosts" / host) == []
