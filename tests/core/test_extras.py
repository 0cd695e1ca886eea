"""The lean install: what is not in the core names its extra in one line (exit 2).

A module is made absent the way Python itself documents: ``sys.modules[name] = None`` makes
both ``import name`` and ``find_spec(name)`` fail as if it were not installed. The real lean
install (a fresh venv without extras) is exercised by .ci/run.
"""

from __future__ import annotations

import sys
import tomllib
from importlib.util import find_spec
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import cli
from bot.config import load_settings
from bot.errors import ConfigError
from bot.llm.factory import make_chat_model
from bot.llm.providers import LANGCHAIN_ONLY, PROVIDERS
from tests.conftest import GitRepo
from tests.testgen.test_testgen import build_python_sample

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _names(reqs: list[str]) -> set[str]:
    return {r.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip().lower() for r in reqs}


def _extras_of(requirement: str) -> set[str]:
    return set(requirement.split("[")[1].rstrip("]").split(","))


def test_the_core_leaves_providers_testgen_and_mcp_to_extras() -> None:
    core = _names(PROJECT["dependencies"])
    assert {"langchain", "ruff", "langgraph"} <= core
    heavy = {
        "langchain-openai",
        "langchain-anthropic",
        "langchain-ollama",
        "hypothesis",
        "coverage",
        "pytest",
        "mcp",
        "black",
    }
    assert not core & heavy
    extras = PROJECT["optional-dependencies"]
    cloud = {"bedrock", "google", "mistral", "groq"}
    # the Kubernetes executor's client (126 MB) is for the servers that use it, not [all]
    assert _extras_of(extras["all"][0]) == set(extras) - {"all", "test", "kubernetes"} - cloud
    assert "nova-bot[all]" in extras["test"]  # CI's `.[test]`: every feature, and ollama
    assert "ollama" in _extras_of(extras["all"][0])
    assert not any(_extras_of(r) & cloud for r in extras["test"] if "nova-bot[" in r)


def test_every_provider_has_its_extra() -> None:
    extras = PROJECT["optional-dependencies"]
    for name, spec in PROVIDERS.items():
        packages = _names(extras[spec.extra])
        assert spec.module.replace("_", "-") in packages, name


def test_langchain_builds_every_provider_nova_names() -> None:
    from langchain.chat_models.base import _BUILTIN_PROVIDERS

    names = {spec.lc_name or name for name, spec in PROVIDERS.items()} | set(LANGCHAIN_ONLY)
    assert names <= set(_BUILTIN_PROVIDERS)
    for name, module in LANGCHAIN_ONLY.items():
        assert _BUILTIN_PROVIDERS[name][0].split(".")[0] == module


@pytest.mark.parametrize(
    ("model", "extra", "module"),
    [
        ("groq:llama-3.3-70b-versatile", "groq", "langchain_groq"),
        ("mistralai:mistral-large-latest", "mistral", "langchain_mistralai"),
        ("bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0", "bedrock", "langchain_aws"),
        ("google_genai:gemini-2.5-flash", "google", "langchain_google_genai"),
    ],
)
def test_a_provider_not_installed_names_its_extra(model: str, extra: str, module: str) -> None:
    # Really absent from the test venv ([test] leaves the cloud providers out): no mock.
    assert find_spec(module) is None
    settings = load_settings({"llm_model": model, "llm_api_key": "k-test"}, env={})
    with pytest.raises(ConfigError) as info:
        make_chat_model(settings.llm)
    assert str(info.value) == (
        f"NOVA_LLM_MODEL={model.split(':')[0]}:... needs {module}, not "
        f'installed in this Python: pip install "nova-bot[{extra}]"'
    )


def test_review_with_groq_not_installed_is_one_line(repo: GitRepo) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit("a")
    result = CliRunner().invoke(
        cli,
        [
            "review",
            "HEAD",
            "--repo",
            str(repo.path),
            "-q",
            "--model",
            "groq:llama-3.3-70b-versatile",
        ],
        env={"GROQ_API_KEY": "gsk-test-key-0000"},
        catch_exceptions=False,
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "nova: error: NOVA_LLM_MODEL=groq:... needs langchain_groq, not installed in this "
        'Python: pip install "nova-bot[groq]"'
    ]
    assert result.stdout == ""  # before anything is fetched or analyzed
    assert "gsk-test-key-0000" not in result.output


def test_a_langchain_only_provider_names_its_package() -> None:
    settings = load_settings({"llm_model": "xai:grok-4", "llm_api_key": "k"}, env={})
    with pytest.raises(ConfigError, match=r"needs langchain_xai, .*: pip install langchain-xai"):
        make_chat_model(settings.llm)


def test_testgen_names_its_extra(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_python_sample(repo)
    monkeypatch.setitem(sys.modules, "coverage", None)
    result = CliRunner().invoke(
        cli,
        ["testgen", "HEAD", "--repo", str(repo.path), "-q", "--patch-dir", str(tmp_path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "nova: error: nova testgen needs coverage, not installed in this Python: "
        'pip install "nova-bot[testgen]"'
    ]
    assert repo.git("branch", "--list", "nova/*") == ""


def test_anthropic_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)
    settings = load_settings({"llm_model": "anthropic:claude-x", "llm_api_key": "k"}, env={})
    with pytest.raises(ConfigError, match=r'pip install "nova-bot\[anthropic\]"'):
        make_chat_model(settings.llm)


def test_mcp_serve_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    result = CliRunner().invoke(cli, ["mcp", "serve"], catch_exceptions=False)
    assert result.exit_code == 2
    assert 'pip install "nova-bot[mcp]"' in result.stderr


def test_a_provider_that_cannot_be_set_up_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # AzureChatOpenAI's own validation (no endpoint): a ConfigError, not a traceback.
    for name in ("AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(
        env={
            "NOVA_LLM_MODEL": "azure_openai:my-deployment",
            "AZURE_OPENAI_API_KEY": "azure-key-0123456789",
        }
    )
    with pytest.raises(ConfigError) as info:
        make_chat_model(settings.llm)
    assert str(info.value).startswith("NOVA_LLM_MODEL=azure_openai:...: the model cannot be set")
    assert "\n" not in str(info.value) and "azure-key-0123456789" not in str(info.value)
    with pytest.raises(ConfigError, match="uses Azure OpenAI but no key is set"):
        make_chat_model(load_settings(env={"NOVA_LLM_MODEL": "azure_openai:my-deployment"}).llm)
