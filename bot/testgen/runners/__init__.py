"""What the evidence gates need from a test framework, for the ones Nova can check:
pytest (which also runs unittest-style tests) and node:test.

A runner collects a file's tests, runs some of them and says which passed, measures which
lines each test executes, checks that a mutated source still parses, and removes dropped
tests from a generated file. Every run goes through the sandbox. One module per framework:
``python`` (pytest) and ``node`` (node:test); ``base`` holds the interface."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.frameworks import Framework
from bot.testgen.runners.base import Lines, PruneFailed, Runner
from bot.testgen.runners.node import REPORTER, SEPARATOR, NodeTestRunner, _remove_calls
from bot.testgen.runners.python import PytestRunner, prune_python

__all__ = [
    "REPORTER",
    "SEPARATOR",
    "Lines",
    "NodeTestRunner",
    "PruneFailed",
    "PytestRunner",
    "Runner",
    "RunnerUnavailable",
    "_remove_calls",
    "prune_python",
    "runner_for",
]


class RunnerUnavailable(Exception):
    """Nova cannot run and check this framework's tests here; the message says why."""


def runner_for(fw: Framework, test_timeout: float = 20.0, memory_mb: int = 1024) -> Runner:
    if fw.name in ("pytest", "unittest"):
        return PytestRunner(fw, test_timeout, memory_mb)
    if fw.name == "node-test":
        if not Path(fw.run_files[0]).is_absolute():
            raise RunnerUnavailable(
                "node:test was detected but node is not installed: put "
                "Node >= 20 on PATH, or `pip install nova-bot[node]`"
            )
        return NodeTestRunner(fw, test_timeout, memory_mb)
    raise RunnerUnavailable(
        f"{fw.name} was detected; Nova writes and checks tests for "
        "pytest, unittest and node:test, so the matrix is all this run "
        "gives"
    )
