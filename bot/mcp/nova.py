"""Nova's own abilities as MCP tools: the review, the static analyzers, what ``nova testgen``
decides before generating, the gates run on an agent's own tests, generation and proposals.

Each tool is the CLI's code path (``bot.review.api``, ``bot.testgen.api``), run in a worker
thread so the server keeps answering; every step the CLI prints on stderr becomes an MCP
progress notification. Tools that write to a code host (``review_change`` with
``publish``, ``propose_tests``) refuse with ``WRITES_DISABLED`` unless the server was
started with ``--allow-writes``. Tokens come from the server's environment only; every
string of a result is redacted before it leaves.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.fastmcp import Context  # FastMCP finds the context by this annotation
from pydantic import BaseModel, Field

from bot.config import Settings
from bot.errors import redact
from bot.hosts import proposal_choices, publish_choices
from bot.taskmanager.client import Envelope, fail, ok
from bot.testgen.api import Interpreter

if TYPE_CHECKING:
    from anyio.lowlevel import EventLoopToken
    from mcp.server.fastmcp import FastMCP

    from bot.events import EventBus
    from bot.review.result import ReviewResult
    from bot.testgen.report import TestgenResult

__all__ = ["ServeOptions", "TestFile", "register_nova_tools"]

WRITES_OFF = (
    "{what} writes to a code host, and this server is read-only: start it with "
    "`nova mcp serve --allow-writes` to allow it"
)


@dataclass(frozen=True)
class ServeOptions:
    """What ``nova mcp serve`` was started with, beyond the settings."""

    allow_writes: bool = False  # --allow-writes: publish reviews, propose tests
    interpreter: Interpreter = field(default_factory=Interpreter)


class TestFile(BaseModel):
    __test__ = False  # not a pytest class

    path: str = Field(description="A new test file's path in the repository, e.g. tests/test_x.py")
    content: str = Field(description="The file's full text")


def _hosts(names: list[str]) -> str:
    return ", ".join(n for n in names if n != "local")


Runs = Annotated[int, Field(ge=1, le=20, description="Runs each test must pass in a row")]
Ref = Annotated[
    str,
    Field(
        description="Change reference: HEAD, a SHA, A..B (in the server's repository), "
        "owner/repo#12 or a pull request URL, group/project!12, D123"
    ),
]
LocalRef = Annotated[
    str, Field(description="A commit of the server's repository: HEAD, a SHA or A..B")
]
Files = Annotated[
    list[TestFile],
    Field(description="Your test files (at most 20): new files under the test directories"),
]
Publish = Annotated[
    str | None,
    Field(
        description="Also post the review to this host, as `nova review --publish` does "
        f"({_hosts(publish_choices())}); needs a server started with --allow-writes"
    ),
]
Proposer = Annotated[
    str,
    Field(description=f"Where to open it: {_hosts(proposal_choices())}"),
]
Force = Annotated[bool, Field(description="Review again a head Nova already reviewed")]


class _ProgressStream:
    """A text stream for the CLI's ``PlainSink``: each line it prints becomes a progress
    notification to the client that asked (none when the request had no progress token).
    Written from the worker thread (and the model's loop thread), sent on the server's."""

    def __init__(self, ctx: Context[Any, Any, Any], token: EventLoopToken) -> None:
        self.ctx, self.token, self.count = ctx, token, 0

    def write(self, text: str) -> int:
        import anyio
        import anyio.from_thread

        if text.strip():
            self.count += 1
            try:
                anyio.from_thread.run(
                    self.ctx.report_progress, self.count, None, text.strip(), token=self.token
                )
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError):
                pass  # the client went away: the work still finishes, nobody to tell
        return len(text)

    def flush(self) -> None:
        return None


def _scrubbed(value: Any) -> Any:
    """Every string of a result redacted: a token in a host's error, a note or a finding
    never reaches the client."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrubbed(v) for v in value]
    return value


async def _long(
    ctx: Context[Any, Any, Any],
    work: Callable[[EventBus], Envelope],
    **arguments: Any,
) -> dict[str, Any]:
    """Run ``work`` in a worker thread behind the MCP edge (bounds, errors as envelopes),
    with the CLI's progress lines sent as notifications."""
    import anyio.lowlevel
    import anyio.to_thread

    from bot.events import EventBus, PlainSink
    from bot.mcp.server import _guard

    bus = EventBus([PlainSink(_ProgressStream(ctx, anyio.lowlevel.current_token()))])  # type: ignore[arg-type]
    envelope = await anyio.to_thread.run_sync(lambda: _guard(lambda: work(bus), **arguments))
    scrubbed: dict[str, Any] = _scrubbed(envelope)
    return scrubbed


def _review_data(result: ReviewResult) -> dict[str, Any]:
    from bot.report.formats import result_to_dict
    from bot.review.result import exit_code_for

    data = result_to_dict(result)  # as `nova review -o json`, plus what each host posted
    data["published"] = [
        {
            "host": r.host,
            "inline_posted": r.inline_posted,
            "summary_posted": r.summary_posted,
            "errors": list(r.errors),
        }
        for r in result.reports
    ]
    data["exit_code"] = exit_code_for(result, result.fail_on)
    return data


def _testgen_head(result: TestgenResult) -> dict[str, Any]:
    return {
        "change": result.change.summary_dict(),
        "framework": result.framework.to_dict() if result.framework else None,
        "environment": result.environment,
        "isolation": result.isolation,
        "notes": result.notes,
        "errors": result.errors,
    }


def _verdicts(result: TestgenResult, runs: int) -> dict[str, Any]:
    from bot.testgen.api import verdict

    tests = [verdict(c, runs) for c in [*result.kept, *result.dropped]]
    return {
        **_testgen_head(result),
        "tests": tests,
        "counts": {
            "kept": len(result.kept),
            "dropped": len(result.dropped),
            "catching": sum(t["catches_change"] for t in tests),
        },
    }


def _given(files: list[TestFile]) -> dict[str, str]:
    return {f.path: f.content for f in files}


def register_nova_tools(
    mcp: FastMCP, repo: Path, settings: Settings, options: ServeOptions
) -> None:
    """Add Nova's review and test tools to ``mcp``."""
    from bot.review.api import review_ref
    from bot.testgen.api import run_stages

    proposers = [h for h in proposal_choices() if h != "local"]

    def stages(bus: EventBus, change: str, **kw: Any) -> TestgenResult:
        return run_stages(settings, change, repo, bus, options.interpreter, **kw)

    @mcp.tool()
    async def review_change(
        ctx: Context[Any, Any, Any],
        change: Ref = "HEAD",
        publish: Publish = None,
        force: Force = False,
    ) -> dict[str, Any]:
        """Review a change as `nova review` does: the static analyzers, then the model when
        the server has one configured. Returns the findings placed on commentable NEW lines
        (`comments`) and those that could not be placed, each with its reason (`unplaced`).
        """

        def work(bus: EventBus) -> Envelope:
            if publish not in (None, "local") and not options.allow_writes:
                return fail(WRITES_OFF.format(what="publish"), error_code="WRITES_DISABLED")
            result = review_ref(settings, change, repo, bus, publish or "local", force)
            return ok(_review_data(result), f"{len(result.placed)} placed")

        return await _long(ctx, work, change=change, publish=publish)

    @mcp.tool()
    async def analyze_change(ctx: Context[Any, Any, Any], change: Ref = "HEAD") -> dict[str, Any]:
        """Run only Nova's static analyzers (no model) on a change: their findings placed on
        commentable NEW lines (`comments`), the rest with the reason (`unplaced`).
        """

        def work(bus: EventBus) -> Envelope:
            result = review_ref(settings.with_(llm_review=False), change, repo, bus)
            return ok(_review_data(result), f"{len(result.placed)} placed")

        return await _long(ctx, work, change=change)

    @mcp.tool()
    async def detect_test_framework(
        ctx: Context[Any, Any, Any], change: LocalRef = "HEAD"
    ) -> dict[str, Any]:
        """The test framework `nova testgen` finds at a local commit, with the evidence it
        was detected from, and the interpreter and sandbox tests would run with.
        """

        def work(bus: EventBus) -> Envelope:
            result = stages(bus, change, until="detect-test-framework")
            name = result.framework.name if result.framework else "none"
            return ok(_testgen_head(result), name)

        return await _long(ctx, work, change=change)

    @mcp.tool()
    async def analyze_test_matrix(
        ctx: Context[Any, Any, Any], change: LocalRef = "HEAD"
    ) -> dict[str, Any]:
        """The test matrix `nova testgen` plans from: each changed function or class
        (`target`) × the existing tests that mention it × its changed lines no test runs.
        """

        def work(bus: EventBus) -> Envelope:
            result = stages(bus, change, until="analyze-test-matrix")
            data = {
                **_testgen_head(result),
                "matrix": [t.to_dict() for t in result.matrix],
                "changed_lines_covered_before": result.coverage_before,
            }
            return ok(data, f"{len(result.matrix)} changed targets")

        return await _long(ctx, work, change=change)

    @mcp.tool()
    async def run_tests(
        ctx: Context[Any, Any, Any],
        files: Files,
        change: LocalRef = "HEAD",
        runs: Runs = 3,
    ) -> dict[str, Any]:
        """Check test files you wrote against a local commit, in Nova's sandbox, through the
        gates `nova testgen` keeps its own tests by: each test's status over `runs` runs
        (passed / failed / flaky), the changed lines it runs, whether it fails on the
        parent commit (`catches_change`: it tells the change apart), and whether it is
        kept, or dropped with the reason. New files under the test directories only.
        """

        def work(bus: EventBus) -> Envelope:
            result = stages(bus, change, until="check-tests", given=_given(files), runs=runs)
            data = _verdicts(result, runs)
            return ok(data, f"{data['counts']['kept']} kept, {data['counts']['catching']} catch")

        return await _long(ctx, work, files=files, change=change)

    @mcp.tool()
    async def generate_tests(
        ctx: Context[Any, Any, Any], change: LocalRef = "HEAD"
    ) -> dict[str, Any]:
        """Nova's own test generation for a local commit (the model when configured, else
        the differential generator): the kept tests with their evidence, the dropped with
        reasons, and the patch of the kept tests. Nothing is pushed; the branch
        nova/tests/<sha> is added to the repository as `nova testgen` does.
        """

        def work(bus: EventBus) -> Envelope:
            with tempfile.TemporaryDirectory(prefix="nova-mcp-") as tmp:
                result = stages(bus, change, patch_dir=Path(tmp))
                data = result.to_dict()
                data["patch"] = Path(result.patch).read_text("utf-8") if result.patch else None
            return ok(data, f"{len(result.kept)} kept")

        return await _long(ctx, work, change=change)

    @mcp.tool()
    async def propose_tests(
        ctx: Context[Any, Any, Any],
        files: Files,
        publish: Proposer,
        change: LocalRef = "HEAD",
    ) -> dict[str, Any]:
        """Open a pull request / merge request / revision with your test files, after the
        same gates as `nova testgen` (runs, changed lines, parent or mutant, the full
        suite): only the tests that pass them are proposed. Needs a server started with
        --allow-writes.
        """

        def work(bus: EventBus) -> Envelope:
            if not options.allow_writes:
                return fail(WRITES_OFF.format(what="propose_tests"), error_code="WRITES_DISABLED")
            if publish not in proposers:
                return fail(
                    f"publish must be one of {', '.join(proposers)}", error_code="UsageError"
                )
            with tempfile.TemporaryDirectory(prefix="nova-mcp-") as tmp:
                result = stages(
                    bus, change, given=_given(files), publish=publish, patch_dir=Path(tmp)
                )
            data = {**_verdicts(result, 3), "branch": result.branch, "url": result.mr_url}
            return ok(data, result.mr_url or "nothing proposed")

        return await _long(ctx, work, files=files, publish=publish, change=change)
