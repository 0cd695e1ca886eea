"""The final answer through the provider's structured output, and the text fallback when a
server refuses it: the real OpenAI client against the local OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.agent.graph import build_graph
from bot.cli import cli
from bot.events import EventBus, TextEvent
from bot.llm.factory import aclose_model, make_chat_model
from bot.llm.settings import LLMSettings
from bot.llm.usage import Stats
from bot.review.agent.answer import ANSWER_SCHEMA, ANSWER_TOOL, AnswerFormat, repair_prompt
from bot.review.agent.output import parse_answer
from tests.conftest import GitRepo
from tests.servers.openai_server import FakeOpenAI, text, tool_call

pytestmark = pytest.mark.slow  # every test here takes seconds: not in the fast lane

GOOD = {
    "summary": "Adds div.",
    "comments": [
        {
            "path": "pkg/calc.py",
            "line": 9,
            "code": "    return a / b",
            "body": "b == 0 raises",
            "severity": "error",
            "end_line": None,
            "suggestion": None,
        }
    ],
}


def _change(repo: GitRepo) -> None:
    repo.write("pkg/calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.write(
        "pkg/calc.py",
        "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n",
    )
    repo.commit("Add div")


def _review(repo: GitRepo, events: Path):
    return CliRunner().invoke(
        cli,
        ["review", "--repo", str(repo.path), "-o", "json", "-q", "--events-file", str(events)],
        catch_exceptions=False,
    )


def _modes(events: Path) -> list[str]:
    lines = [json.loads(ln) for ln in events.read_text().splitlines()]
    return [
        e["content"]
        for e in lines
        if e["event_type"] == "text" and e["content"].startswith("model call answered")
    ]


def test_openai_compatible_servers_get_the_json_schema(
    repo: GitRepo, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    _change(repo)
    llm_env.enqueue(tool_call("read_file", {"path": "pkg/calc.py"}), text(json.dumps(GOOD)))
    result = _review(repo, tmp_path / "e.jsonl")
    assert result.exit_code == 0, result.stderr
    for body in llm_env.requests:  # with the tools, on every call
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["schema"] == ANSWER_SCHEMA and body["tools"]
    data = json.loads(result.stdout)
    assert [(c["line"], c["origin"]) for c in data["comments"] if c["origin"] == "llm"] == [
        (9, "llm")
    ]
    assert _modes(tmp_path / "e.jsonl") == ["model call answered in json_schema mode"] * 2


def test_a_server_that_refuses_the_schema_gets_text_answers(
    repo: GitRepo, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    _change(repo)
    llm_env.refuse_response_format = True
    llm_env.enqueue(
        tool_call("read_file", {"path": "pkg/calc.py"}),
        text("Here it is:\n```json\n" + json.dumps(GOOD) + "\n```"),
    )
    result = _review(repo, tmp_path / "e.jsonl")
    assert result.exit_code == 0, result.stderr
    asked = ["response_format" in body for body in llm_env.requests]
    assert asked == [True, False, False]  # refused once, then text for the rest of the run
    data = json.loads(result.stdout)
    assert any(c["origin"] == "llm" and c["line"] == 9 for c in data["comments"])
    assert "the model server refused json_schema structured output" in data["summary"]
    assert "response_format of type 'json_schema' is not supported" in data["summary"]
    assert _modes(tmp_path / "e.jsonl") == ["model call answered in text mode"] * 2


def _graph_run(server: FakeOpenAI, mode: str) -> tuple[object, EventBus]:
    async def go():
        bus = EventBus()
        model = make_chat_model(
            LLMSettings(
                model="openai:test-model",
                api_key="sk-x",
                base_url=server.base_url,
                max_retries=0,
            )
        )
        try:
            graph = build_graph(
                model,
                [],
                bus,
                Stats(),
                parse_answer,
                answer=AnswerFormat(mode, bus),
                repair=repair_prompt,
            )
            from langchain_core.messages import HumanMessage, SystemMessage

            state = {
                "messages": [SystemMessage(content="s"), HumanMessage(content="u")],
                "repairs": 0,
                "answer": None,
                "failure": None,
            }
            return await graph.ainvoke(state), bus
        finally:
            await aclose_model(model)

    return asyncio.run(go())


def test_tool_mode_reads_the_submit_call_and_repairs_through_a_tool_message(
    llm: FakeOpenAI,
) -> None:
    """Anthropic's mode (tool calling), driven through the OpenAI wire format."""
    assert AnswerFormat.for_provider("anthropic") == "tool"
    llm.enqueue(
        tool_call(ANSWER_TOOL, {"summary": "s", "comments": "not a list"}),
        tool_call(ANSWER_TOOL, GOOD),
    )
    final, bus = _graph_run(llm, "tool")
    assert final["answer"].summary == "Adds div." and final["answer"].comments[0].line == 9
    first, second = llm.requests
    assert first["tool_choice"] == "required" and "response_format" not in first
    assert [t["function"]["name"] for t in first["tools"]] == [ANSWER_TOOL]
    repair = second["messages"][-1]
    assert repair["role"] == "tool" and "'comments' must be a list" in repair["content"]
    assert ANSWER_TOOL in repair["content"]
    assert [e.content for e in bus.history if isinstance(e, TextEvent)] == [
        "model call answered in tool mode"
    ] * 2


def test_tool_mode_still_reads_a_plain_text_answer(llm: FakeOpenAI) -> None:
    """A server that ignores tool_choice answers in text: the tolerant parser reads it."""
    llm.enqueue(text(json.dumps(GOOD)))
    final, _ = _graph_run(llm, "tool")
    assert final["answer"].comments[0].body == "b == 0 raises"
