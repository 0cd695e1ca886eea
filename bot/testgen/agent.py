"""The test-writing agent: read → write → run → fix, with ``max_iterations`` test runs."""

from __future__ import annotations

from bot.agent.tools import MAX_CHARS, ContextTool, context_tools
from bot.change import Change
from bot.diff.render import render_files
from bot.errors import ModelError, redact_known
from bot.events import EventBus
from bot.llm.settings import LLMSettings
from bot.llm.usage import Stats
from bot.prompts import render_prompt
from bot.sandbox.run import RunResult
from bot.testgen.frameworks import Framework
from bot.testgen.matrix import Target
from bot.testgen.settings import TestgenSettings
from bot.testgen.workspace import Workspace, WriteRefused

__all__ = ["generate_with_llm", "testgen_tools"]


def testgen_tools(
    ws: Workspace, fw: Framework, max_iterations: int, test_timeout: float = 20.0
) -> list[ContextTool]:
    # the tree as it is now, tests included (it has no .git: Nova runs no git there)
    read = next(t for t in context_tools(ws) if t.name == "read_file")
    runs = {"n": 0}

    def list_files(prefix: str = "") -> str:
        files = [p for p in ws.files() + list(ws.written) if p.startswith(str(prefix))]
        return "\n".join(sorted(set(files))[:500]) or "no files"

    def write_test_file(path: str, content: str) -> str:
        try:
            rel = ws.write_test(str(path), str(content))
        except WriteRefused as exc:
            return f"error: refused: {exc}"
        return f"wrote {rel} ({len(str(content).encode())} bytes)"

    def run_tests(paths: list[str]) -> str:
        if runs["n"] >= max_iterations:
            return (
                f"error: the limit of {max_iterations} test runs is reached; give your "
                "final answer now"
            )
        wanted = [str(p) for p in (paths if isinstance(paths, list) else [paths])]
        allowed = [
            p for p in wanted if p in ws.written or (fw.is_test_name(p) and ws.read(p) is not None)
        ]
        if not allowed:
            return "error: give the paths of test files you wrote"
        runs["n"] += 1
        result = _run_limited(ws, fw, allowed, test_timeout)
        verdict = "passed" if result.passed else "FAILED"
        return (f"run {runs['n']}/{max_iterations}: {verdict}\n{result.output[-8000:]}")[:MAX_CHARS]

    assert read.run is not None
    return [
        ContextTool(
            "read_source_file",
            "Read lines of a file of the repository (NEW line numbers, at most 400 lines a call).",
            read.parameters,
            read.run,
        ),
        ContextTool(
            "list_files",
            "List the repository's files whose path starts with prefix.",
            {"type": "object", "properties": {"prefix": {"type": "string", "default": ""}}},
            list_files,
        ),
        ContextTool(
            "write_test_file",
            "Create a NEW test file (only under the test "
            "directories, with a test file name; the whole content).",
            {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
            write_test_file,
        ),
        ContextTool(
            "run_tests",
            "Run the given test files with the repository's test "
            f"runner (at most {max_iterations} runs in all); returns the output.",
            {
                "type": "object",
                "properties": {"paths": {"type": "array", "items": {"type": "string"}}},
                "required": ["paths"],
            },
            run_tests,
        ),
    ]


def _run_limited(ws: Workspace, fw: Framework, paths: list[str], test_timeout: float) -> RunResult:
    """The agent's test run, with the same limit per test as the checks (the memory limit
    is the workspace's)."""
    if fw.language == "python":
        return ws.run(
            [*fw.run_files, "-p", "nova_limits", *paths],
            timeout=300,
            env={"PYTEST_NOVA_SECONDS": f"{test_timeout:g}"},
        )
    if fw.name == "node-test":
        return ws.run(
            [*fw.run_files, f"--test-timeout={int(test_timeout * 1000)}", *paths],
            timeout=300,
            limit_memory=False,
        )
    return ws.run([*fw.run_files, *paths], timeout=300)


def _example_test(ws: Workspace, fw: Framework, targets: list[Target]) -> tuple[str, str]:
    candidates = [p for t in targets for p in t.existing_tests] or [
        p for p in ws.files() if fw.is_test_name(p)
    ]
    for path in candidates:
        text = ws.read(path)
        if text:
            return path, text[:3000]
    return "", ""


async def generate_with_llm(
    change: Change,
    ws: Workspace,
    fw: Framework,
    targets: list[Target],
    llm: LLMSettings,
    testgen: TestgenSettings,
    bus: EventBus,
    stats: Stats,
    max_iterations: int,
) -> str:
    """Run the agent; return its summary. Raises ``ModelError`` when it cannot finish."""
    from langchain_core.messages import HumanMessage, SystemMessage
    from langgraph.errors import GraphRecursionError

    from bot.agent.graph import AgentState, build_graph
    from bot.llm.factory import model_error, provider_errors
    from bot.llm.fallback import ModelChain

    example_path, example = _example_test(ws, fw, targets)
    system = render_prompt(
        "testgen/system.j2",
        framework=fw.to_dict() | {"test_dirs": fw.test_dirs, "name_patterns": fw.name_patterns},
        max_iterations=max_iterations,
    )
    from bot.analyzers.secrets import Scrubber

    user = Scrubber().scrub(
        render_prompt(  # a committed key never reaches the provider
            "testgen/user.j2",
            title=change.title,
            matrix=[t.to_dict() for t in targets],
            example=example,
            example_path=example_path,
            diff=render_files(change.files),
        )
    )
    chain = ModelChain(llm, bus)
    graph = build_graph(
        chain.model,
        testgen_tools(ws, fw, max_iterations, testgen.timeout),
        bus,
        stats,
        parse_final=lambda text: text.strip() or "done",
        chain=chain,
    )
    state: AgentState = {
        "messages": [SystemMessage(content=system), HumanMessage(content=redact_known(user))],
        "repairs": 0,
        "answer": None,
        "failure": None,
    }
    try:
        final = await graph.ainvoke(
            state, config={"recursion_limit": max(llm.recursion_limit, 4 * max_iterations + 8)}
        )
    except GraphRecursionError as exc:
        raise ModelError(
            "the test-writing agent did not finish within its step limit (NOVA_RECURSION_LIMIT)"
        ) from exc
    except provider_errors() as exc:
        raise model_error(exc, llm) from exc
    finally:
        await chain.aclose()
    return str(final.get("answer") or "")
