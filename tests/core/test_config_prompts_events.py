"""Settings precedence, the repository file's limits, secrets, prompts and event sinks."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import hypothesis
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.config import Settings, all_settings, load_settings
from bot.conversation.settings import QuestionSettings
from bot.errors import ConfigError, ModelError, redact, register_secret
from bot.events import EventBus, JsonLinesSink, PlainSink, StepEvent, event_from_dict
from bot.hosts import hosts
from bot.hosts.github.settings import GitHubSettings
from bot.hosts.gitlab.settings import GitLabSettings
from bot.hosts.phabricator.settings import PhabricatorSettings
from bot.llm.settings import LLMSettings
from bot.prompts import render_prompt, template_names
from bot.review.settings import ReviewSettings
from bot.sections import SettingSpec, specs_of
from bot.serve.settings import ServeSettings
from bot.taskmanager.settings import TaskManagerSettings
from bot.testgen.settings import TestgenSettings


def test_flags_beat_env_beat_repo_file(tmp_path: Path) -> None:
    (tmp_path / ".nova.toml").write_text(
        'token_budget = 100\nfail_on = "error"\ndiff_style = "labeled"\n'
    )
    s = load_settings(
        flags={"token_budget": 300},
        env={"NOVA_TOKEN_BUDGET": "200", "NOVA_FAIL_ON": "warning"},
        repo=tmp_path,
    )
    assert (s.review.token_budget, s.review.fail_on, s.review.diff_style) == (
        300,
        "warning",
        "labeled",
    )
    assert s.origins == {
        "token_budget": "flag",
        "fail_on": "NOVA_FAIL_ON",
        "diff_style": ".nova.toml",
    }


def test_repo_file_nova_table_and_errors(tmp_path: Path) -> None:
    (tmp_path / ".nova.toml").write_text('[nova]\nexclude = ["gen/*"]\n')
    assert load_settings(env={}, repo=tmp_path).review.exclude == ("gen/*",)
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


def test_every_setting_is_a_section_field_with_one_key_and_a_nova_variable() -> None:
    sections: list[type] = [LLMSettings, ReviewSettings, TestgenSettings, TaskManagerSettings]
    sections.append(ServeSettings)
    sections.append(QuestionSettings)  # bot/conversation/settings.py
    sections += [h.section for h in hosts() if h.section is not None] + [Settings]
    declared = [spec for cls in sections for spec in specs_of(cls)]
    assert [s.name for s in declared] == [s.name for s in all_settings()]
    assert len({s.name for s in declared}) == len(declared), "a flat key is declared twice"
    assert len({s.env for s in declared}) == len(declared), "a variable is declared twice"
    # CI keeps the name every CI system sets; a section's variables may keep the names its
    # tools already use (GITHUB_* from Actions, PHABRICATOR_* from arc, USE_MOCK_CLIENT).
    for cls in sections:
        prefixes = ("NOVA_", *getattr(cls, "env_prefixes", ()))
        for spec in specs_of(cls):
            assert (spec.env.startswith(prefixes) or spec.env == "CI") and spec.help, spec


def test_flat_keys_reach_their_section_and_back() -> None:
    s = Settings.of(
        llm_model="openai:x", max_concurrency=3, fail_on="error", test_timeout=2.0,
        execution_id="e1", github_token="t-1", ci_job_token="j-1", harbormaster_target="P",
    )  # fmt: skip
    assert (s.llm.model, s.llm.max_concurrency, s.review.fail_on) == ("openai:x", 3, "error")
    assert (s.testgen.timeout, s.task_manager.execution_id) == (2.0, "e1")
    assert s.section(GitHubSettings).token == "t-1"
    assert s.section(GitLabSettings).job_token == "j-1"
    assert s.section(PhabricatorSettings).harbormaster_target == "P"
    assert s.value("ci_job_token") == "j-1" and s.value("test_timeout") == 2.0
    changed = s.with_(github_token="t-2", fail_on="never")
    assert changed.section(GitHubSettings).token == "t-2" and changed.review.fail_on == "never"
    assert changed.section(GitLabSettings).job_token == "j-1", "other sections are kept"
    assert s.section(GitHubSettings).token == "t-1", "settings are frozen"
    with pytest.raises(TypeError, match="unknown setting 'bogus'"):
        Settings.of(bogus=1)


@hypothesis.settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_flat_values_read_back_the_same(data: st.DataObject) -> None:
    specs = data.draw(st.lists(st.sampled_from(all_settings()), unique_by=lambda s: s.name))
    values = {spec.name: data.draw(_value_of(spec)) for spec in specs}
    loaded = Settings.of(**values)
    assert {key: loaded.value(key) for key in values} == values
    untouched = [s for s in all_settings() if s.name not in values]
    assert all(loaded.value(s.name) == s.default for s in untouched)


def _value_of(spec: SettingSpec) -> st.SearchStrategy[object]:
    if spec.choices:
        return st.sampled_from(spec.choices)
    if isinstance(spec.default, bool):
        return st.booleans()
    if spec.parse is int:
        return st.integers(min_value=int(spec.min or 0), max_value=10**6)
    if spec.parse is float:
        return st.floats(min_value=(spec.min or 0) + 1, max_value=1e6)
    if isinstance(spec.default, tuple):
        return st.lists(st.text(min_size=1, max_size=8), max_size=3).map(tuple)
    return st.text(max_size=20)


def test_each_feature_is_handed_only_its_section() -> None:
    """The clients and agents are built from their own section, never the whole Settings."""
    from bot.analyzers.collect import analyze
    from bot.hosts.github.client import github_client
    from bot.hosts.gitlab.client import gitlab_client
    from bot.hosts.phabricator.conduit import ConduitClient
    from bot.llm.factory import make_chat_model
    from bot.llm.fallback import ModelChain
    from bot.review.agent.graph import review_change
    from bot.taskmanager.client import create_task_manager_client
    from bot.testgen.agent import generate_with_llm

    expected = {
        github_client: {GitHubSettings},
        gitlab_client: {GitLabSettings},
        ConduitClient.__init__: {PhabricatorSettings},
        make_chat_model: {LLMSettings},
        ModelChain.__init__: {LLMSettings},
        create_task_manager_client: {TaskManagerSettings},
        analyze: {ReviewSettings},
        review_change: {LLMSettings, ReviewSettings},
        generate_with_llm: {LLMSettings, TestgenSettings},
    }
    for func, sections in expected.items():
        annotations = " ".join(str(a) for a in func.__annotations__.values())
        handed = set(re.findall(r"\b\w*Settings\b", annotations))
        assert handed == {cls.__name__ for cls in sections}, func.__qualname__


def test_a_secret_setting_never_shows_in_repr() -> None:
    secrets = [s.name for s in all_settings() if s.secret]
    assert {"llm_api_key", "github_token", "gitlab_token", "phabricator_token"} <= set(secrets)
    for name in secrets:
        assert "value-77x" not in repr(Settings.of(**{name: "value-77x"})), name


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
        # respond/ (bot.conversation.ask)
        "path": "a.py",
        "line": 3,
        "finding": "f",
        "code": "3: x = 1",
        "thread": [{"author": "alice", "body": "why?"}],
        "asker": "alice",
        "question": "why?",
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
