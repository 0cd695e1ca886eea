"""Analyzers a repository declares in ``.nova.toml``, the way ``.reviewdog.yml`` does::

    [[analyzer]]
    name = "eslint"
    command = "npx eslint -f json ."   # run by sh -c; or a list: ["eslint", "-f", "json", "."]
    format = "eslint"                  # optional: detected from the output
    workdir = "web"                    # optional: repository-relative, default the root
    timeout = 120                      # optional: seconds, default 120, at most 1800
    extensions = [".js", ".jsx"]       # optional: the files it covers (coverage note)

The declaration is read from the change's BASE revision only (``bot.review.pipeline``): a change
cannot add a command that runs in CI. The command itself may still run the change's code
(an ``eslint.config.js`` is JavaScript), so it gets an environment without Nova's settings
or any token: only ``ENV_KEEP`` is passed on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from bot.errors import ConfigError, redact

__all__ = [
    "DEFAULT_TIMEOUT",
    "ENV_KEEP",
    "DeclaredAnalyzer",
    "Run",
    "analyzer_env",
    "parse_declared",
    "run_declared",
]

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 1800.0
MAX_ANALYZERS = 20
OUTPUT_CAP = 64 * 2**20  # bytes of stdout kept (the results parser refuses more)
# The environment a declared analyzer sees: where tools and their caches are, the locale.
# Not NOVA_*, GITHUB_TOKEN, CI_JOB_TOKEN, cloud credentials, or anything else.
ENV_KEEP = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "NODE_PATH",
    "NVM_DIR",
    "VIRTUAL_ENV",
    "CI",
)
_KEYS = {"name", "command", "format", "workdir", "timeout", "extensions"}


@dataclass(frozen=True)
class DeclaredAnalyzer:
    name: str
    command: str | tuple[str, ...]
    format: str | None = None
    workdir: str = ""  # repository-relative; '' is the root
    timeout: float = DEFAULT_TIMEOUT
    extensions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Run:
    """What one declared analyzer did: its stdout, or why there is none to read."""

    analyzer: DeclaredAnalyzer
    output: bytes = b""
    failure: str | None = None


def _workdir(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: workdir must be a string")
    p = PurePosixPath(value.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts:
        raise ConfigError(
            f"{where}: workdir must be a directory inside the repository, got {value!r}"
        )
    return "" if str(p) == "." else p.as_posix()


def _one(raw: object, where: str) -> DeclaredAnalyzer:
    from bot.analyzers.formats import FORMATS

    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: each [[analyzer]] must be a table")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown [[analyzer]] keys {', '.join(unknown)}; known: "
            f"{', '.join(sorted(_KEYS))}"
        )
    name, command = raw.get("name"), raw.get("command")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: [[analyzer]] needs a name")
    where = f"{where}: analyzer {name!r}"
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        command = tuple(command)
    elif not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where}: command must be a string or a list of strings")
    fmt = raw.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise ConfigError(f"{where}: format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT
    ):
        raise ConfigError(
            f"{where}: timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}], got {timeout!r}"
        )
    extensions = raw.get("extensions", [])
    if not isinstance(extensions, list) or not all(isinstance(e, str) for e in extensions):
        raise ConfigError(f'{where}: extensions must be a list of strings like ".js"')
    return DeclaredAnalyzer(
        name=name.strip(),
        command=command,
        format=fmt,
        workdir=_workdir(raw.get("workdir", ""), where),
        timeout=float(timeout),
        extensions=tuple("." + e.lstrip(".").lower() for e in extensions if e.strip(".")),
    )


def parse_declared(raw: Any, where: str) -> tuple[DeclaredAnalyzer, ...]:
    """The ``[[analyzer]]`` tables of a ``.nova.toml`` (untrusted text: validated)."""
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: analyzers are declared as [[analyzer]] tables")
    if len(raw) > MAX_ANALYZERS:
        raise ConfigError(f"{where}: at most {MAX_ANALYZERS} [[analyzer]] tables")
    found = tuple(_one(item, where) for item in raw)
    names = [a.name for a in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{where}: analyzer names must differ: {', '.join(twice)} twice")
    return found


def analyzer_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in ENV_KEEP}


def _limited(argv: list[str]) -> list[str]:
    """``argv`` run under a file-size limit a little past the cap, set by ``sh`` before it
    execs the analyzer: files it writes (its stdout is one) stop growing there, so a
    runaway cannot fill the disk before its timeout. Set in the child, before anything
    runs: no race with a fast writer, and no ``preexec_fn`` (not safe in threads).
    ``ulimit -f`` counts 512-byte blocks in POSIX shells (1,024 in bash: still bounded)."""
    blocks = (OUTPUT_CAP + 2**20) // 512
    return ["sh", "-c", 'ulimit -f "$0" && exec "$@"', str(blocks), *argv]


def _run_one(analyzer: DeclaredAnalyzer, root: Path) -> Run:
    cwd = (root / analyzer.workdir).resolve()
    if not cwd.is_relative_to(root.resolve()) or not cwd.is_dir():
        return Run(
            analyzer, failure=f"its workdir {analyzer.workdir!r} is not a directory of the checkout"
        )
    argv = (
        ["sh", "-c", analyzer.command]
        if isinstance(analyzer.command, str)
        else list(analyzer.command)
    )
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                _limited(argv),
                cwd=cwd,
                env=analyzer_env(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            return Run(analyzer, failure=f"could not start: {exc.strerror or exc}")
        try:
            code = proc.wait(timeout=analyzer.timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return Run(analyzer, failure=f"timed out after {analyzer.timeout:g}s")
        if out.seek(0, os.SEEK_END) > OUTPUT_CAP:
            return Run(analyzer, failure=f"printed more than {OUTPUT_CAP // 2**20} MiB")
        out.seek(0)
        output = out.read()
        if code not in (0, 1) and not output.strip():  # linters exit 1 when they find things
            err.seek(max(0, err.seek(0, os.SEEK_END) - 2000))
            tail = err.read().decode("utf-8", "replace").strip().splitlines()
            detail = redact(tail[-1][:200]) if tail else "no output"
            return Run(analyzer, failure=f"exited with {code}: {detail}")
        return Run(analyzer, output=output)


def run_declared(analyzers: Sequence[DeclaredAnalyzer], root: Path) -> list[Run]:
    """Run every analyzer at once in the checkout ``root``, each with its timeout."""
    if not analyzers:
        return []
    with ThreadPoolExecutor(max_workers=min(len(analyzers), 4)) as pool:
        return list(pool.map(lambda a: _run_one(a, root), analyzers))
