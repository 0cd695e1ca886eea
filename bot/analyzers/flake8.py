"""The project's own flake8, as the project configured it: when the repository configures
flake8 (``.flake8``, or a ``[flake8]`` section in ``setup.cfg`` or ``tox.ini``) and has it
in its own virtualenv (``.venv/bin/flake8`` or ``venv/bin/flake8``), it checks the changed
Python files with the project's plugins and options. Plugins are code, so it runs inside
``bot.sandbox`` with no token in its environment.

It runs beside ruff, not instead: ruff reimplements pyflakes and pycodestyle, not the
project's flake8 plugins. A finding both report (the same file, line and code, F401 say)
is kept once, as ruff's (``bot.analyzers.collect``)."""

from __future__ import annotations

import re
from pathlib import Path

from bot.analyzers.base import Linter
from bot.analyzers.project import has_section, installed
from bot.analyzers.report import Finding, clip
from bot.analyzers.ruff import rule_severity

__all__ = ["ANALYZER", "locate", "parse"]

# the options the output is read with win over the project's (format, show-source);
# --count ends the report with the number of findings, so an empty output is a failure
ARGS = ("--format=default", "--no-show-source", "--exit-zero", "--count")
_LINE = re.compile(
    rb"^(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>[A-Z]+[0-9]+) (?P<text>.*)$"
)


def _configured(root: Path) -> bool:
    return (root / ".flake8").is_file() or any(
        has_section(root / name, "flake8") for name in ("setup.cfg", "tox.ini")
    )


def locate(root: Path | None) -> str | None:
    """The flake8 of the checkout's virtualenv, when the checkout configures flake8."""
    for venv in (".venv", "venv"):
        found = installed(root, f"{venv}/bin/flake8", _configured)
        if found is not None:
            return found
    return None


def parse(data: bytes) -> list[Finding]:
    """``path:row:col: CODE text`` lines, then the count (``--count``)."""
    lines = data.splitlines()
    if not lines or not lines[-1].strip().isdigit():
        raise ValueError("flake8 printed no report (did its configuration or a plugin fail?)")
    found = []
    for line in lines[:-1]:
        m = _LINE.match(line)
        if m is None:
            continue  # --statistics, --benchmark: the project's options may add lines
        code = m["code"].decode()
        found.append(
            Finding(
                path=m["path"].decode("utf-8", "replace"),
                line=int(m["row"]) or None,
                message=clip(m["text"].decode("utf-8", "replace")),
                severity=rule_severity(code),
                rule=code,
            )
        )
    return found


ANALYZER = Linter(
    name="flake8",
    wants=lambda path, tags: path.endswith(".py"),
    program="flake8",
    args=ARGS,
    parse=parse,
    package="the project's own (pip install flake8 in its .venv)",
    locate=locate,
    project=True,
    sandboxed=True,
)
