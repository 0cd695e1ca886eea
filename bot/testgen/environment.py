"""Which interpreter runs the project's tests: the project's, not Nova's.

Python: ``--test-python`` / ``NOVA_TEST_PYTHON``, else the active virtualenv
(``VIRTUAL_ENV``), else ``.venv/bin/python`` or ``venv/bin/python`` in the repository, else
``python`` on PATH, else the Python that runs Nova. The chosen one must have pytest and
coverage (the gates need both); when it lacks them, Nova's own runs the tests and one note
says so. Node: ``node_modules/.bin/node`` of the repository, else ``node`` on PATH, else the
one ``nova-bot[node]`` ships. The report says which was used and why.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.errors import ConfigError
from bot.sandbox.run import Isolation, RunResult, run_sandboxed

__all__ = ["TestEnvironment", "import_failures", "python_environment"]

_TOOLS = ("pytest", "coverage")
_PROBE_TOOLS = (
    "import importlib.util, sys; print(' '.join(m for m in sys.argv[1:] "
    "if importlib.util.find_spec(m) is None))"
)
_MARK = "nova-import-check: "  # the answer's line: the modules may print anything at import
_PROBE_IMPORTS = """
import importlib, json, sys
failed = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError as exc:  # a missing install or dependency (PackageNotFoundError too)
        if "partially initialized" not in str(exc):  # a cycle: the side-runner resolves it
            failed[name] = (type(exc).__name__ + ": " + str(exc))[:200]
    except BaseException:  # the module's own code failed: not the environment's fault
        pass
print("\\n" + MARK + json.dumps(failed), flush=True)
""".replace("MARK", repr(_MARK))


@dataclass(frozen=True)
class TestEnvironment:
    """The interpreter that runs the tests, why, and at most one note about it."""

    __test__ = False  # not a pytest class
    python: str
    why: str
    note: str | None = None

    @property
    def bin_dirs(self) -> tuple[str, ...]:
        return (str(Path(self.python).parent),)

    def to_dict(self) -> dict[str, str]:
        return {"python": self.python, "why": self.why}


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _candidates(
    repo: Path, configured: str | None, virtual_env: str | None, on_path: str | None
) -> list[tuple[str, str]]:
    if configured:
        if not _executable(Path(configured)):
            raise ConfigError(
                f"--test-python / NOVA_TEST_PYTHON: {configured} is not an executable file"
            )
        return [(configured, "set with --test-python / NOVA_TEST_PYTHON")]
    found: list[tuple[str, str]] = []
    if virtual_env and _executable(Path(virtual_env) / "bin" / "python"):
        found.append(
            (
                str(Path(virtual_env) / "bin" / "python"),
                f"the active virtualenv (VIRTUAL_ENV={virtual_env})",
            )
        )
    for name in (".venv", "venv"):
        python = repo.resolve() / name / "bin" / "python"
        if _executable(python):
            found.append((str(python), f"the repository's {name}/"))
    if on_path:
        found.append((on_path, "python on PATH"))
    return found


def python_environment(
    repo: Path,
    configured: str | None,
    virtual_env: str | None,
    on_path: str | None,
    isolation: Isolation | None = None,
) -> TestEnvironment:
    """The first candidate (see the module) that has pytest and coverage; else Nova's own
    Python, with a note that names what the first one lacks. The candidate is asked under
    ``isolation``, the one the tests run under (the strongest here when None)."""
    candidates = _candidates(repo, configured, virtual_env, on_path)
    if not candidates:
        return TestEnvironment(sys.executable, "Nova's own (no project Python was found)")
    python, why = candidates[0]
    if python == sys.executable:  # (not resolved: every venv's python links to one binary)
        return TestEnvironment(python, why)
    probe = run_sandboxed(
        [python, "-c", _PROBE_TOOLS, *_TOOLS], repo, timeout=60, isolation=isolation
    )
    missing = probe.output.split() if probe.passed else list(_TOOLS)
    if not missing:
        return TestEnvironment(python, why)
    what = ", ".join(missing) if probe.passed else f"a working interpreter ({probe.output[-120:]})"
    return TestEnvironment(
        sys.executable,
        f"Nova's own: {python} ({why}) lacks {what}",
        f"{python} ({why}) has no {what}, which the checks need: the tests ran with Nova's "
        f"own Python ({sys.executable}) instead. Install them there ({python} -m pip "
        f"install pytest coverage) to test in the project's environment.",
    )


def import_failures(
    run: Callable[..., RunResult], python: str, modules: list[str]
) -> dict[str, str]:
    """Which of ``modules`` fail to import in the workspace for want of something installed
    (an ``ImportError``), with the error of each (``run`` is ``Workspace.run``)."""
    if not modules:
        return {}
    result = run([python, "-c", _PROBE_IMPORTS, *modules], timeout=60)
    answer = [ln for ln in result.output.splitlines() if ln.startswith(_MARK)]
    try:
        failed = json.loads(answer[-1][len(_MARK) :])
    except (json.JSONDecodeError, IndexError):
        return {m: f"the import check failed: {result.output.strip()[-200:]}" for m in modules}
    return {str(k): str(v) for k, v in failed.items()} if isinstance(failed, dict) else {}
