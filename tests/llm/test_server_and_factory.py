"""The local OpenAI-compatible server, through the real langchain client, and the factory."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from bot.config import load_settings
from bot.errors import ConfigError
from bot.llm.factory import aclose_model, make_chat_model, model_error, provider_errors
from tests.servers.openai_server import FakeOpenAI, error, text, tool_call

pytestmark = pytest.mark.slow  # every test here takes seconds: not in the fast lane


def _model(server: FakeOpenAI, **extra):
    settings = load_settings(
        env={
            "NOVA_LLM_MODEL": "openai:scripted",
            "NOVA_LLM_BASE_URL": server.base_url,
            "NOVA_LLM_MAX_RETRIES": "0",
        }
    )
    return make_chat_model(settings.llm), settings.llm


def _ask(model, prompt, runnable=None):
    async def go():
        try:
            return await (runnable or model).ainvoke(prompt)
        finally:
            await aclose_model(model)

    return asyncio.run(go())


def test_plain_reply_and_usage(llm: FakeOpenAI) -> None:
    model, _ = _model(llm)
    llm.enqueue(text("hello there"))
    msg = _ask(model, "hi")
    assert msg.content == "hello there"
    assert msg.usage_metadata["input_tokens"] > 0
    assert llm.requests[0]["model"] == "scripted"
    assert llm.headers[0]["authorization"] == "Bearer nova-no-key"


def test_streamed_reply_with_tool_call(llm: FakeOpenAI) -> None:
    model, _ = _model(llm)
    model = model.model_copy(update={"streaming": True})
    llm.enqueue(
        text("a fairly long streamed answer, in chunks"), tool_call("read_file", {"path": "a.py"})
    )
    assert _ask(model, "hi").content == "a fairly long streamed answer, in chunks"
    assert llm.requests[0]["stream"] is True
    model = _model(llm)[0].model_copy(update={"streaming": True})
    bound = model.bind_tools(
        [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                },
            }
        ]
    )
    msg = _ask(model, "read it", bound)
    assert [(c["name"], c["args"]) for c in msg.tool_calls] == [("read_file", {"path": "a.py"})]


def test_json_schema_structured_output(llm: FakeOpenAI) -> None:
    class Verdict(BaseModel):
        ok: bool
        reason: str

    model, _ = _model(llm)
    llm.enqueue(text('{"ok": false, "reason": "division by zero"}'))
    structured = model.with_structured_output(Verdict, method="json_schema")
    verdict = _ask(model, "judge", structured)
    assert verdict == Verdict(ok=False, reason="division by zero")
    assert llm.requests[0]["response_format"]["type"] == "json_schema"


def test_errors_map_to_clear_messages(llm: FakeOpenAI) -> None:
    model, settings = _model(llm)
    llm.enqueue(error(429, "slow down"))
    with pytest.raises(provider_errors()) as info:
        _ask(model, "hi")
    message = str(model_error(info.value, settings))
    assert "HTTP 429" in message and llm.base_url in message


def test_factory_validation() -> None:
    with pytest.raises(ConfigError, match="unknown model provider 'nope'"):
        make_chat_model(load_settings(env={"NOVA_LLM_MODEL": "nope:x"}).llm)
    with pytest.raises(ConfigError, match="no key is set"):
        make_chat_model(load_settings(env={"NOVA_LLM_MODEL": "openai:gpt-4o-mini"}).llm)
    with pytest.raises(ConfigError, match="Anthropic but no key"):
        make_chat_model(load_settings(env={"NOVA_LLM_MODEL": "anthropic:claude"}).llm)
    anthropic = make_chat_model(
        load_settings(
            env={"NOVA_LLM_MODEL": "anthropic:claude-x", "ANTHROPIC_API_KEY": "sk-ant-abcdefgh"}
        ).llm
    )
    assert anthropic.model == "claude-x"
    openai_model = make_chat_model(
        load_settings(env={"NOVA_LLM_MODEL": "openai:gpt-x", "OPENAI_API_KEY": "sk-abcdefgh"}).llm
    )
    assert openai_model.model_name == "gpt-x"
