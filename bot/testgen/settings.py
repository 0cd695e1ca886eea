"""Test generation's settings: which Python runs the project's tests, a test's limits,
and how generated tests are isolated."""

from __future__ import annotations

from dataclasses import dataclass

from bot.sections import Section, setting

__all__ = ["TestgenSettings"]


@dataclass(frozen=True)
class TestgenSettings(Section):
    __test__ = False  # not a pytest class, whatever its name
    prefix = "test_"

    python: str | None = setting(
        "NOVA_TEST_PYTHON",
        "testgen: the Python that runs the project's tests. Unset: the active "
        "virtualenv, else .venv/ or venv/ in the repository, else python on PATH, "
        "else Nova's own.",
    )
    timeout: float = setting(
        "NOVA_TEST_TIMEOUT",
        "testgen: seconds one generated test may run; one that runs longer is dropped.",
        20.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    job_seconds: float = setting(
        "NOVA_TEST_JOB_SECONDS",
        "testgen: the job's time budget, from its start: each later stage gets what is left "
        "of it (amplification what is left after the share kept for checking the tests and "
        "the full suite); a test the time left could not check is dropped, never kept "
        "unchecked.",
        100.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    suite_timeout: float | None = setting(
        "NOVA_TEST_SUITE_TIMEOUT",
        "testgen: seconds the project's whole suite may run with the kept tests. Unset: "
        "what is left of the job's budget (at least 20; half of it when the test "
        "files that name the changed code may have to run too). A suite that runs longer "
        "is checked on those files instead, as long; when they run longer too, the kept "
        "tests are proposed unchecked by it, and the report says so.",
        parse=float,
        min=0,
        min_exclusive=True,
    )
    memory_mb: int = setting(
        "NOVA_TEST_MEMORY_MB",
        "testgen: MiB of memory a test run may write (RLIMIT_DATA, its address space 16 times "
        "that; node: its heap); "
        "a test that needs more is dropped.",
        1024,
        parse=int,
        min=64,
    )
    isolation: str = setting(
        "NOVA_TEST_ISOLATION",
        "testgen: how generated tests are isolated: auto (the strongest this machine "
        "allows), bubblewrap, unshare or none; a named one that does not work here stops "
        "the run.",
        "auto",
        choices=("auto", "bubblewrap", "unshare", "none"),
    )
