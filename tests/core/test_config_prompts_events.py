"""Settings precedence, the repository file's limits, secrets, prompts and event sinks."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bot.config import SETTINGS, Settings, load_settings
from bot.errors import ConfigError, ModelError, redact, register_secret
from bot.events import EventBus, JsonLinesSink, PlainSink, StepEvent, event_from_dict
from bot.hosts import hosts
from bot.prompts import render_prompt, template_names


def test_flags_beat_env_beat_repo_file(tmp_path: Path) -> None:
    (tmp_path / ".nova.toml").write_text(
        'token_budget = 100\nfail_on = "error"\ndiff_style = "labeled"\n'
    )
    s = load_settings(
        flags={"token_budget": 300},
        env={"NOVA_TOKEN_BUDGET": "200", "NOVA_FAIL_ON": "warning"},
        repo=tmp_path,
    )
    assert (s.token_budget, s.fail_on, s.diff_style) == (300, "warning", "labeled")
    assert s.origins == {
        "token_budget": "flag",
        "fail_on": "NOVA_FAIL_ON",
        "diff_style": ".nova.toml",
    }


def test_repo_file_nova_table_and_errors(tmp_path: Path) -> None:
    (tmp_path / ".nova.toml").write_text('[nova]\nexclude = ["gen/*"]\n')
    assert load_settings(env={}, repo=tmp_path).exclude == ("gen/*",)
    (tmp_path / ".nova.toml").write_text("bogus = 1\n")
    with pytest.raises(ConfigError, match="unknown keys bogus"):
        load_settings(env={}, repo=tmp_path)
    (tmp_path / ".nova.toml").write_text("not toml [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(env={}, repo=tmp_path)
    for key in ("llm_api_key", "llm_base_url", "llm_model"):
        (tmp_path / ".nova.toml").write_text(f'{key} = "x"\n')
        with pytest.raises(ConfigError, match="cannot be set in the repository"):
            load_settings(env={}, repo=tmp_path)


def test_bad_values_name_the_variable() -> None:
    with pytest.raises(ConfigError, match="NOVA_TOKEN_BUDGET: token_budget must be an integer"):
        load_settings(env={"NOVA_TOKEN_BUDGET": "lots"})
    with pytest.raises(ConfigError, match="NOVA_FAIL_ON: fail_on must be one of"):
        load_settings(env={"NOVA_FAIL_ON": "sometimes"})


def test_every_setting_is_a_field_and_has_a_nova_variable() -> None:
    # the repository's [[analyzer]] tables are a .nova.toml table, not a variable
    names = set(Settings.__dataclass_fields__) - {"origins", "declared_analyzers", "fallback_keys"}
    assert {s.name for s in SETTINGS} == names
    # USE_MOCK_CLIENT keeps the name the Task Manager tooling already uses, CI the one every
    # CI system sets; a host's variables keep the names its CI or tools already use
    # (GITHUB_* from Actions, PHABRICATOR_* from arc), declared by the host.
    prefixes = ("NOVA_", *(p for h in hosts() for p in h.env_prefixes))
    assert all(
        (s.env.startswith(prefixes) or s.env in ("USE_MOCK_CLIENT", "CI")) and s.help
        for s in SETTINGS
    )


def test_a_secret_setting_never_shows_in_repr() -> None:
    secrets = [s.name for s in SETTINGS if s.secret]
    assert {"llm_api_key", "github_token", "gitlab_token", "phabricator_token"} <= set(secrets)
    for name in secrets:
        assert "value-77x" not in repr(Settings(**{name: "value-77x"})), name


def test_secrets_are_redacted_everywhere() -> None:
    s = load_settings(env={"NOVA_LLM_MODEL": "openai:x", "NOVA_LLM_API_KEY": "custom-key-42abc"})
    assert "custom-key-42abc" not in repr(s)
    assert redact("key custom-key-42abc leaked") == "key *** leaked"
    fake_token = "ghp_" + "abcdefghijklmnopqrstuvwx1234"  # built, not a literal token
    assert "ghp_" not in redact(f"token {fake_token}")
    assert redact("Authorization: Bearer abc.def-ghi123") == "Authorization: Bearer ***"
    register_secret("another-secret-77")
    assert str(ModelError("failed with another-secret-77")) == "failed with ***"


def test_every_template_renders() -> None:
    from bot.testgen.matrix import Target

    ctx = {
        "style": "compact",
        "has_tools": True,
        "extra_instructions": "x",
        "title": "t",
        "description": "d",
        "batch_index": 1,
        "batch_count": 2,
        "diff": "1 + a\n",
        "findings": [],
        "error": "bad",
        "max_iterations": 3,
        "example": "def test(): ...",
        "mode": "json_schema",
        "example_path": "tests/test_a.py",
        "framework": {
            "name": "pytest",
            "language": "python",
            "test_dirs": ["tests"],
            "name_patterns": ["test_*.py"],
        },
        # the real rows: a field the template uses must exist
        "matrix": [Target("a.py", "f", "modified", [3]).to_dict()],
    }
    names = template_names()
    assert {
        "review/system.j2",
        "review/user.j2",
        "review/repair.j2",
        "testgen/system.j2",
        "testgen/user.j2",
    } <= set(names)
    for name in names:
        assert render_prompt(name, **ctx).strip()
    labeled = render_prompt("review/system.j2", **{**ctx, "style": "labeled", "has_tools": False})
    assert "NEW_LINE_" in labeled and "not available" in labeled
    for name in ("review/system.j2", "review/repair.j2"):
        assert "submit_review" in render_prompt(name, **{**ctx, "mode": "tool"})
        assert "submit_review" not in render_prompt(name, **ctx)
    with pytest.raises(Exception, match="undefined"):
        render_prompt("review/user.j2", title="only this")


def test_sinks(tmp_path: Path) -> None:
    stream = io.StringIO()
    path = tmp_path / "e.jsonl"
    bus = EventBus([PlainSink(stream), JsonLinesSink(str(path))])
    bus.emit(StepEvent(step_name="fetch-change", status="failed", message="token sk-" + "a" * 24))
    bus.close()
    assert stream.getvalue().startswith("[fetch-change] failed: token ***")
    (line,) = path.read_text().splitlines()
    assert event_from_dict(json.loads(line)).step_name == "fetch-change"
    assert "aaaaaaaa" not in line
    with pytest.raises(ValueError, match="unknown event_type"):
        event_from_dict({"event_type": "bogus"})


def test_readme_settings_table_matches_the_code() -> None:
    from bot.config import settings_table

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- settings-table:start -->\n") + len("<!-- settings-table:start -->\n")
    end = readme.index("<!-- settings-table:end -->")
    assert readme[start:end] == settings_table(), "run: python scripts/update_readme_table.py"


def test_terminal_sink_rewrites_one_status_line_and_keeps_finished_steps() -> None:
    from bot.events import DoneEvent, TerminalSink, ToolCallEvent

    stream = io.StringIO()
    sink = TerminalSink(stream)
    sink(StepEvent(step_name="review", status="running"))
    sink(ToolCallEvent(tool_name="read_file", tool_args={"path": "a.py"}))
    sink(StepEvent(step_name="review", status="completed", message="2 comments"))
    sink(DoneEvent(token_usage={"llm_calls": 2, "prompt_tokens": 10, "completion_tokens": 5}))
    screen = stream.getvalue()
    assert screen.count("\r\x1b[2K") == 4  # each update clears the live line
    finished = [line.split("\x1b[2K")[-1] for line in screen.split("\n") if line]
    assert finished == ["[review] completed: 2 comments", "[done] 2 LLM calls, 10+5 tokens"]
