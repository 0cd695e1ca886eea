"""Running one declared ``Linter`` on the files it wants: what every linter shares.

A file whose head content is what the checkout holds (CI checks out the change) is checked
in place, so the project's own configuration applies as the project wrote it. Any other
file (a review of an older range, a host with no checkout) is written with the linter's
config files, read from the head, to a temporary copy, and checked there. A linter whose
configuration can run code runs inside ``bot.sandbox`` (no token, no network, a read-only
checkout), writing its report to a file of its own. Every run has the environment of a
declared analyzer (``ENV_KEEP``: no token), and the time left of the analyzers' budget.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bot.analyzers.base import Linter, bin_dirs
from bot.analyzers.declared import analyzer_env
from bot.analyzers.report import Finding, Report
from bot.errors import one_line, redact

__all__ = ["Outcome", "Target", "on_disk", "run_linter"]

BATCH = 200  # file names on one command line
OUTPUT_CAP = 64 * 2**20


@dataclass(frozen=True)
class Target:
    path: str  # repository-relative
    text: str  # the head content


@dataclass
class Outcome:
    """What one linter did: its report, or why there is none."""

    reports: list[Report] = field(default_factory=list)
    failure: str | None = None
    staged: int = 0  # files checked on a copy of the head rather than in the checkout


def on_disk(root: Path | None, target: Target) -> bool:
    if root is None:
        return False
    path = root / target.path
    try:
        return not path.is_symlink() and path.read_bytes() == target.text.encode("utf-8")
    except (OSError, UnicodeEncodeError):
        return False


def run_linter(
    linter: Linter,
    program: str,
    targets: Sequence[Target],
    root: Path | None,
    read_head: Callable[[str], str | None],
    deadline: float,
) -> Outcome:
    """``linter`` (its executable ``program``) on ``targets``; ``read_head(path)`` reads a
    config file at the head for a staged run; ``deadline``: ``time.monotonic()`` value."""
    in_place: list[Target] = []
    staged: list[Target] = []
    for t in targets:
        (in_place if on_disk(root, t) else staged).append(t)
    out = Outcome(staged=len(staged))
    report = Report(tool=linter.name)
    out.reports.append(report)
    try:
        if in_place:
            assert root is not None
            report.findings += _batches(linter, program, in_place, root, deadline)
        if staged:
            with tempfile.TemporaryDirectory(prefix="nova-lint-") as tmp:
                _stage(Path(tmp), staged, linter.configs, read_head)
                report.findings += _batches(linter, program, staged, Path(tmp), deadline)
    except _Failed as exc:
        out.failure = str(exc)
    report.paths.update(t.path for t in targets)
    return out


class _Failed(Exception):
    pass


def _stage(
    tmp: Path,
    targets: Sequence[Target],
    configs: tuple[str, ...],
    read: Callable[[str], str | None],
) -> None:
    """The targets' head content and the linter's config files (at the root and in each
    target's directories) under ``tmp``, at their repository paths."""
    dirs = {PurePosixPath(".")} | {p for t in targets for p in PurePosixPath(t.path).parents}
    wanted = {str(d / name) for d in dirs for name in configs}
    for rel in sorted(wanted):
        text = read(rel)
        if text is not None:
            _write(tmp, PurePosixPath(rel).as_posix(), text)
    for t in targets:
        _write(tmp, t.path, t.text)


def _write(tmp: Path, rel: str, text: str) -> None:
    path = (tmp / rel).resolve()
    if not path.is_relative_to(tmp.resolve()):  # a diff's path is untrusted text
        raise _Failed(f"refused to stage {rel!r}: not inside the repository")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def _batches(
    linter: Linter, program: str, targets: Sequence[Target], cwd: Path, deadline: float
) -> list[Finding]:
    found: list[Finding] = []
    for start in range(0, len(targets), BATCH):
        names = [_arg(t.path) for t in targets[start : start + BATCH]]
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Failed("the analyzers' time budget ran out (NOVA_ANALYZER_TIMEOUT)")
        run = _sandboxed if linter.sandboxed else _plain
        data = run([program, *linter.args, *names], cwd, left)
        try:
            found += linter.parse(data)
        except (ValueError, TypeError, AttributeError) as exc:
            raise _Failed(f"its output could not be read: {one_line(str(exc))[:160]}") from exc
    return found


def _env() -> dict[str, str]:
    env = analyzer_env()
    env["PATH"] = os.pathsep.join([*bin_dirs(), env.get("PATH", os.defpath)])
    return env


def _plain(argv: list[str], cwd: Path, timeout: float) -> bytes:
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env=_env(), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise _Failed(f"timed out after {timeout:.0f}s") from exc
    except OSError as exc:
        raise _Failed(f"could not start: {exc.strerror or exc}") from exc
    _check(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"))
    return proc.stdout


def _check(code: int, output: bytes, errors: str) -> None:
    """Linters exit 1 when they find something; another exit code is a failure, unless
    the report is there."""
    if len(output) > OUTPUT_CAP:
        raise _Failed(f"printed more than {OUTPUT_CAP // 2**20} MiB")
    if code in (0, 1):
        return
    if output.strip():
        with contextlib.suppress(ValueError):
            json.loads(output)
            return
    tail = [ln for ln in errors.strip().splitlines() if ln.strip()]
    detail = redact(tail[-1][:200]) if tail else "no output"
    raise _Failed(f"exited with {code}: {detail}")


def _arg(path: str) -> str:
    """A file name no linter reads as an option."""
    return f"./{path}" if path.startswith("-") else path


def _sandboxed(argv: list[str], cwd: Path, timeout: float) -> bytes:
    from bot.sandbox.run import View, run_sandboxed

    out_dir = Path(tempfile.mkdtemp(prefix="nova-lint-out-"))
    report = out_dir / "report"
    try:
        result = run_sandboxed(
            ["sh", "-c", 'exec "$@" > "$0"', str(report), *argv],
            cwd,
            timeout=timeout,
            bin_dirs=bin_dirs(),
            view=View(writable=(out_dir,)),
        )
        if result.timed_out:
            raise _Failed(f"timed out after {timeout:.0f}s (in the sandbox)")
        data = report.read_bytes()[: OUTPUT_CAP + 1] if report.is_file() else b""
        _check(result.returncode, data, result.output)
        return data
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
