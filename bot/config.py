"""One frozen ``Settings``, built once by the CLI from flags > environment > ``.nova.toml``
> defaults, and passed down. No other module reads the environment.

Every setting is declared once, as a ``Settings`` field made by ``setting(...)`` (its
environment variable, help, parser, limits); ``SETTINGS`` is derived from those fields, and
``--help``, the README table and ``nova doctor`` are generated from it. ``.nova.toml`` lives
in the reviewed repository, which is untrusted (a pull request can edit it), so only settings
marked ``repo_ok`` may come from it: never a model endpoint, a key or a token.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.errors import ConfigError, register_secret, register_url_secrets

if TYPE_CHECKING:
    from bot.analyzers.declared import DeclaredAnalyzer
    from bot.diff.render import Style

__all__ = [
    "SETTINGS",
    "SettingSpec",
    "Settings",
    "load_settings",
    "parse_repo_config",
    "with_repo_config",
]

FAIL_ON = ("never", "info", "warning", "error")


def _bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


def _globs(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


@dataclass(frozen=True)
class SettingSpec:
    name: str
    env: str
    help: str
    default: Any = None
    parse: Callable[[str], Any] = str
    choices: tuple[str, ...] = ()
    secret: bool = False
    repo_ok: bool = False  # may be set in the reviewed repo's .nova.toml
    min: float | None = None  # numbers: the smallest value allowed
    min_exclusive: bool = False  # numbers: must be above ``min``, not equal to it

    def range_text(self) -> str:
        """The allowed range in words ('' when any value goes), for --help and the README."""
        if self.min is None:
            return ""
        return f"{'More than' if self.min_exclusive else 'At least'} {self.min:g}."


_SPEC = "nova.setting"  # the dataclass field metadata key that holds a setting's spec


def setting(
    env: str,
    help: str,
    default: Any = None,
    *,
    parse: Callable[[str], Any] = str,
    choices: tuple[str, ...] = (),
    secret: bool = False,
    repo_ok: bool = False,
    min: float | None = None,
    min_exclusive: bool = False,
) -> Any:
    """A ``Settings`` field and everything said about it, in one place: its environment
    variable, help (``--help``, the README table), parser and limits. A secret is kept out
    of ``repr``."""
    spec = SettingSpec("", env, help, default, parse, choices, secret, repo_ok, min, min_exclusive)
    return field(default=default, repr=not secret, metadata={_SPEC: spec})


@dataclass(frozen=True)
class Settings:
    llm_model: str | None = setting(
        "NOVA_LLM_MODEL",
        "Model as provider:model (openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, "
        "ollama:qwen2.5-coder, bedrock:…, google_genai:…, mistralai:…, groq:…; each "
        "provider is a pip extra). Unset: the LLM review is off and only the analyzers "
        "run.",
    )
    llm_fallback: tuple[str, ...] = setting(
        "NOVA_LLM_FALLBACK",
        "Comma-separated provider:model list tried in order when the model fails "
        "(5xx, 429 or timeouts after the retries, connection errors, other refusals; "
        "not a refused key): the next one answers for the rest of the run. One of the "
        "same provider keeps NOVA_LLM_BASE_URL and the key; another provider uses its "
        "own key variable and defaults.",
        (),
        parse=_globs,
    )
    llm_base_url: str | None = setting(
        "NOVA_LLM_BASE_URL",
        "Base URL of an OpenAI-compatible server (vLLM, Ollama, LiteLLM), e.g. "
        "http://localhost:8000/v1. Another provider: its endpoint (ollama: "
        "http://localhost:11434, azure_openai: https://NAME.openai.azure.com).",
    )
    llm_api_key: str | None = setting(
        "NOVA_LLM_API_KEY",
        "API key of the model provider; else the provider's own variable "
        "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GROQ_API_KEY, …).",
        secret=True,
    )
    llm_timeout: float = setting(
        "NOVA_LLM_TIMEOUT",
        "Seconds per model request.",
        120.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    llm_max_retries: int = setting(
        "NOVA_LLM_MAX_RETRIES",
        "Retries of a failed model request (timeouts, connection errors, 429, 5xx); "
        "each retry is shown on the progress line.",
        2,
        parse=int,
        min=0,
    )
    review_deadline: float = setting(
        "NOVA_REVIEW_DEADLINE",
        "Seconds the whole LLM review may take (every batch, retries included); then "
        "what was found so far is published and the unfinished batches are named.",
        600.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    tool_timeout: float = setting(
        "NOVA_TOOL_TIMEOUT",
        "Seconds one context-tool call of the review agent (read a file, search the "
        "code, an MCP tool) may take; then the model is told it timed out.",
        30.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    github_actions: bool = setting(
        "GITHUB_ACTIONS",
        "Set by GitHub Actions: untrusted text on stdout is fenced off from workflow "
        "commands (::stop-commands::).",
        False,
        parse=_bool,
    )
    recursion_limit: int = setting(
        "NOVA_RECURSION_LIMIT",
        "Most agent steps (model turns + tool rounds) per batch before it stops.",
        24,
        parse=int,
        min=1,
    )
    token_budget: int = setting(
        "NOVA_TOKEN_BUDGET",
        "Approximate diff tokens per review batch; bigger changes are split by file "
        "into batches that run concurrently.",
        24000,
        parse=int,
        repo_ok=True,
        min=1,
    )
    max_concurrency: int = setting(
        "NOVA_MAX_CONCURRENCY",
        "Model requests in flight at once (every review batch shares them; fewer "
        "for a while when the provider answers 429).",
        16,
        parse=int,
        min=1,
    )
    max_file_tokens: int = setting(
        "NOVA_MAX_FILE_TOKENS",
        "A single file's diff over this many tokens is skipped (listed in the summary).",
        24000,
        parse=int,
        repo_ok=True,
        min=1,
    )
    fail_on: str = setting(
        "NOVA_FAIL_ON",
        "Exit 1 when a placed or unplaced finding has at least this severity.",
        "never",
        parse=str,
        choices=FAIL_ON,
        repo_ok=True,
    )
    diff_style: Style = setting(
        "NOVA_DIFF_STYLE",
        "How the numbered diff is shown to the model.",
        "compact",
        parse=str,
        choices=("compact", "labeled"),
        repo_ok=True,
    )
    extra_instructions: str = setting(
        "NOVA_EXTRA_INSTRUCTIONS",
        "Extra review instructions appended to the prompt (team conventions).",
        "",
        repo_ok=True,
    )
    exclude: tuple[str, ...] = setting(
        "NOVA_EXCLUDE",
        "Comma-separated gitignore-style patterns of files the model and the analyzers "
        "skip, added to the built-in ones (lockfiles, minified, generated, package "
        "metadata, vendored, snapshots, certificates and keys); '!pattern' "
        "re-includes.",
        (),
        parse=_globs,
        repo_ok=True,
    )
    analyzers: str = setting(
        "NOVA_ANALYZERS",
        "Static analyzers to run on changed files: 'ruff' (ruff, and the analyzers "
        "the repository declares as [[analyzer]] in .nova.toml) or 'none'.",
        "ruff",
        parse=str,
        choices=("ruff", "none"),
        repo_ok=True,
    )
    analyzer_results: tuple[str, ...] = setting(
        "NOVA_ANALYZER_RESULTS",
        "Comma-separated linter results files to put on the diff, each FILE or "
        "FILE:FORMAT (sarif, rdjson, rdjsonl, checkstyle, eslint; detected when "
        "omitted).",
        (),
        parse=_globs,
    )
    filter_mode: str = setting(
        "NOVA_FILTER_MODE",
        "Which analyzer findings are kept (as reviewdog's --filter-mode): added lines, "
        "any line of a hunk, anywhere in a changed file (outside the diff: summary "
        "only), or also other files (summary).",
        "added",
        parse=str,
        choices=("added", "diff_context", "file", "nofilter"),
        repo_ok=True,
    )
    llm_review: bool = setting(
        "NOVA_LLM_REVIEW",
        "Set to false to skip the model even when one is configured.",
        True,
        parse=_bool,
    )
    mcp_config: str | None = setting(
        "NOVA_MCP_CONFIG",
        "Path of an mcp.json whose servers lend the review agent extra tools; a server "
        "that fails to start is logged and skipped.",
    )
    task_manager_url: str | None = setting(
        "NOVA_TASK_MANAGER_URL",
        "Base URL of the Task Manager service that mirrors each run's steps.",
    )
    task_manager_token: str | None = setting(
        "NOVA_TASK_MANAGER_TOKEN", "Bearer token for the Task Manager (optional).", secret=True
    )
    execution_id: str | None = setting(
        "NOVA_EXECUTION_ID", "Task Manager execution this run reports to. Unset: no step tracking."
    )
    task_manager_timeout: float = setting(
        "NOVA_TASK_MANAGER_TIMEOUT",
        "Seconds per Task Manager request; an outage costs the job at most about this long, once.",
        5.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    github_token: str | None = setting(
        "GITHUB_TOKEN",
        "Token for GitHub pull requests (in Actions: secrets.GITHUB_TOKEN).",
        secret=True,
    )
    github_api_url: str = setting(
        "GITHUB_API_URL",
        "GitHub API base URL; GitHub Enterprise: https://HOST/api/v3.",
        "https://api.github.com",
    )
    github_event_path: str | None = setting(
        "GITHUB_EVENT_PATH",
        "Set by GitHub Actions: the event payload, read when no CHANGE is given.",
    )
    github_repository: str | None = setting(
        "GITHUB_REPOSITORY", "Set by GitHub Actions: owner/repo of the workflow run."
    )
    github_step_summary: str | None = setting(
        "GITHUB_STEP_SUMMARY",
        "Set by GitHub Actions: the job summary file Nova appends its summary to.",
    )
    github_output: str | None = setting(
        "GITHUB_OUTPUT", "Set by GitHub Actions: the step outputs file (comments, unplaced, ...)."
    )
    request_changes: bool = setting(
        "NOVA_REQUEST_CHANGES",
        "GitHub: submit REQUEST_CHANGES instead of COMMENT when a finding reaches fail_on.",
        False,
        parse=_bool,
        repo_ok=True,
    )
    max_inline_comments: int = setting(
        "NOVA_MAX_INLINE_COMMENTS",
        "Most inline comments per run on GitHub and GitLab, most severe first (GitHub's "
        "abuse detection bites past ~30); the rest go to the summary.",
        30,
        parse=int,
        repo_ok=True,
        min=0,
    )
    github_write_interval: float = setting(
        "NOVA_GITHUB_WRITE_INTERVAL",
        "Seconds between two GitHub writes (keeps under the secondary rate limits of "
        "~80 content writes a minute).",
        1.0,
        parse=float,
        min=0,
    )
    github_timeout: float = setting(
        "NOVA_GITHUB_TIMEOUT",
        "Seconds per GitHub request; a write that times out is read back, never posted twice.",
        30.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    phabricator_url: str | None = setting(
        "PHABRICATOR_URL",
        "Phabricator / Phorge base URL (…/api/ is added); else the host in ~/.arcrc.",
    )
    phabricator_token: str | None = setting(
        "PHABRICATOR_API_TOKEN",
        "Conduit API token (api-…); else the host's token in ~/.arcrc.",
        secret=True,
    )
    harbormaster_target: str | None = setting(
        "NOVA_HARBORMASTER_TARGET",
        "Harbormaster build target PHID (PHID-HMBT-…): Nova reports work/pass/fail "
        "and its findings as lint messages to it.",
    )
    phabricator_timeout: float = setting(
        "NOVA_PHABRICATOR_TIMEOUT",
        "Seconds per Conduit call.",
        30.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    gitlab_token: str | None = setting(
        "GITLAB_TOKEN",
        "GitLab personal, project or group access token (api scope): reads the merge "
        "request and posts Nova's threads and summary note.",
        secret=True,
    )
    gitlab_url: str | None = setting(
        "GITLAB_URL",
        "Base URL of the GitLab server; else CI_SERVER_URL, then the host of a merge "
        "request URL, then the public GitLab. Example: https://gitlab.example.com.",
    )
    gitlab_code_quality: str | None = setting(
        "NOVA_GITLAB_CODE_QUALITY",
        "Path of a GitLab Code Quality report to write every finding to, shown in the "
        "merge request widget; with only CI_JOB_TOKEN one is written anyway. Default "
        "then: gl-code-quality-report.json.",
    )
    gitlab_timeout: float = setting(
        "NOVA_GITLAB_TIMEOUT",
        "Seconds per GitLab request; a write that times out is read back, never posted twice.",
        30.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    ci_job_token: str | None = setting(
        "CI_JOB_TOKEN",
        "Set by GitLab CI: the job's token, used read-only when GITLAB_TOKEN is not "
        "set (findings then go to the job log and the Code Quality report).",
        secret=True,
    )
    ci_server_url: str | None = setting("CI_SERVER_URL", "Set by GitLab CI: the server's base URL.")
    ci_api_v4_url: str | None = setting(
        "CI_API_V4_URL", "Set by GitLab CI: the server's API URL (…/api/v4)."
    )
    ci_merge_request_iid: str | None = setting(
        "CI_MERGE_REQUEST_IID",
        "Set by GitLab CI in merge request pipelines: the merge request reviewed when "
        "no CHANGE is given.",
    )
    ci_merge_request_project_path: str | None = setting(
        "CI_MERGE_REQUEST_PROJECT_PATH",
        "Set by GitLab CI in merge request pipelines: group/project of the merge "
        "request (the target project, also for a fork's merge request).",
    )
    ci_merge_request_diff_base_sha: str | None = setting(
        "CI_MERGE_REQUEST_DIFF_BASE_SHA",
        "Set by GitLab CI in merge request pipelines: the base of the merge request's "
        "diff; with CI_COMMIT_SHA it lets Nova diff the checkout when CI_JOB_TOKEN "
        "cannot read the merge request.",
    )
    ci_commit_sha: str | None = setting(
        "CI_COMMIT_SHA", "Set by GitLab CI: the commit the job runs on."
    )
    ci_project_id: str | None = setting("CI_PROJECT_ID", "Set by GitLab CI: the project's id.")
    ci_project_path: str | None = setting(
        "CI_PROJECT_PATH",
        "Set by GitLab CI: group/project of the pipeline; `nova testgen --publish "
        "gitlab` opens its merge request there.",
    )
    ci: bool = setting(
        "CI", "Set by CI systems: Nova never asks a question then (--confirm).", False, parse=_bool
    )
    test_python: str | None = setting(
        "NOVA_TEST_PYTHON",
        "testgen: the Python that runs the project's tests. Unset: the active "
        "virtualenv, else .venv/ or venv/ in the repository, else python on PATH, "
        "else Nova's own.",
    )
    test_timeout: float = setting(
        "NOVA_TEST_TIMEOUT",
        "testgen: seconds one generated test may run; one that runs longer is dropped.",
        20.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    test_memory_mb: int = setting(
        "NOVA_TEST_MEMORY_MB",
        "testgen: MiB of address space a test run may use (RLIMIT_AS; node: its heap); "
        "a test that needs more is dropped.",
        1024,
        parse=int,
        min=64,
    )
    use_mock_client: bool = setting(
        "USE_MOCK_CLIENT",
        "'true' (any case) selects the in-memory Task Manager client (tests, demos).",
        False,
        parse=lambda v: v.lower() == "true",
    )
    # [[analyzer]] tables of the base revision's .nova.toml (bot.analyzers.declared)
    declared_analyzers: tuple[DeclaredAnalyzer, ...] = ()
    # keys of the NOVA_LLM_FALLBACK models' other providers, from their own variables
    fallback_keys: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def provider(self) -> str | None:
        """``provider`` of ``provider:model``; a bare name: the provider it is shaped like
        (gpt-… OpenAI, claude-… Anthropic), else OpenAI (a compatible server's model)."""
        if not self.llm_model:
            return None
        bare = _infer_provider(self.llm_model)
        if bare is not None or ":" not in self.llm_model:
            return bare or "openai"
        return self.llm_model.split(":", 1)[0]

    @property
    def model_name(self) -> str | None:
        if not self.llm_model:
            return None
        if _infer_provider(self.llm_model) is not None or ":" not in self.llm_model:
            return self.llm_model
        return self.llm_model.split(":", 1)[1]

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_model) and self.llm_review

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)


# Every setting, in declaration order, named after its field.
SETTINGS: tuple[SettingSpec, ...] = tuple(
    replace(f.metadata[_SPEC], name=f.name) for f in fields(Settings) if _SPEC in f.metadata
)
_SPECS = {s.name: s for s in SETTINGS}


def _coerce(spec: SettingSpec, value: Any, where: str) -> Any:
    if isinstance(value, str):
        try:
            value = spec.parse(value)
        except ValueError as exc:
            raise ConfigError(f"{where}: {spec.name} must be {_kind(spec)}, got {value!r}") from exc
    elif isinstance(value, list) and spec.name == "exclude":
        value = tuple(str(v) for v in value)
    if spec.choices and value not in spec.choices:
        raise ConfigError(
            f"{where}: {spec.name} must be one of {', '.join(spec.choices)}, got {value!r}"
        )
    if spec.parse in (int, float):
        _check_number(spec, value, where)
    return value


def _kind(spec: SettingSpec) -> str:
    return {"int": "an integer", "float": "a number"}.get(spec.parse.__name__, "valid")


def _check_number(spec: SettingSpec, value: Any, where: str) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (spec.parse is int and not isinstance(value, int))
    ):
        raise ConfigError(f"{where}: {spec.name} must be {_kind(spec)}, got {value!r}")
    if spec.min is None:
        return
    if value < spec.min or (spec.min_exclusive and value == spec.min):
        bound = "more than" if spec.min_exclusive else "at least"
        raise ConfigError(f"{where}: {spec.name} must be {bound} {spec.min:g}, got {value!r}")


# A model named without its provider: taken as OpenAI's or Anthropic's when it is shaped like
# one of their names; anything else needs ``provider:`` (or an OpenAI-compatible server).
_BARE_MODELS = (
    ("openai", re.compile(r"(gpt-|chatgpt-|o[1-9]|text-|davinci|babbage|ft:)")),
    ("anthropic", re.compile(r"claude-")),
)
_PROVIDER = re.compile(r"[a-z][a-z0-9_.\-]*")


def _infer_provider(model: str) -> str | None:
    return next((name for name, shape in _BARE_MODELS if shape.match(model)), None)


def _check_model(settings: Settings) -> None:
    """Reject a malformed NOVA_LLM_MODEL at once, before anything is fetched."""
    model = settings.llm_model
    if not model:
        return
    from bot.llm.providers import PROVIDERS, known_provider

    where = settings.origins.get("llm_model", "NOVA_LLM_MODEL")
    where = {"flag": "--model"}.get(where, where)
    example = "e.g. openai:gpt-4o-mini or anthropic:claude-sonnet-4-5"
    if any(c.isspace() for c in model):
        raise ConfigError(
            f"{where}: the model {model!r} is malformed: expected provider:model ({example})"
        )
    provider, sep, name = model.partition(":")
    if sep and _infer_provider(model) is None:
        if not _PROVIDER.fullmatch(provider) or not name:
            raise ConfigError(
                f"{where}: the model {model!r} is malformed: expected provider:model ({example})"
            )
        if not known_provider(provider):
            raise ConfigError(
                f"unknown model provider {provider!r} in {where}",
                hint=f"use one of: {', '.join(sorted(PROVIDERS))} (any "
                "OpenAI-compatible server: openai:<model> + "
                "NOVA_LLM_BASE_URL)",
            )
    elif not sep and settings.llm_base_url is None and _infer_provider(model) is None:
        raise ConfigError(
            f"{where}: the model {model!r} is malformed: expected provider:model ({example}); "
            "a name alone is taken only when it is an OpenAI (gpt-…, o1…) or Anthropic "
            "(claude-…) model, or when NOVA_LLM_BASE_URL names an OpenAI-compatible server"
        )


def parse_repo_config(text: str, where: str) -> dict[str, Any]:
    """The settings a repository's ``.nova.toml`` may set, validated (untrusted input)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from exc
    declared = data.pop("analyzer", None)
    data = data.get("nova", data)
    if declared is None and isinstance(data, dict):
        declared = data.pop("analyzer", None)
    unknown = sorted(k for k in data if k not in _SPECS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown keys {', '.join(unknown)}; known: "
            f"{', '.join(s.name for s in SETTINGS if s.repo_ok)}"
        )
    refused = sorted(k for k in data if not _SPECS[k].repo_ok)
    if refused:
        raise ConfigError(
            f"{where}: {', '.join(refused)} cannot be set in the repository (it is untrusted "
            "input); set them in the environment (NOVA_*) or as flags"
        )
    values = {key: _coerce(_SPECS[key], value, where) for key, value in data.items()}
    if declared is not None:
        from bot.analyzers.declared import parse_declared

        values["declared_analyzers"] = parse_declared(declared, where)
    return values


def _read_repo_file(repo: Path | None) -> dict[str, Any]:
    if repo is None:
        return {}
    path = repo / ".nova.toml"
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return parse_repo_config(text, str(path))


def with_repo_config(settings: Settings, text: str, where: str) -> Settings:
    """``settings`` plus a repository's ``.nova.toml`` (read from the change's BASE revision,
    never from the change itself): flags and the environment still win."""
    values = {
        key: value
        for key, value in parse_repo_config(text, where).items()
        if key not in settings.origins
    }
    origins = {**settings.origins, **dict.fromkeys(values, where)}
    return replace(settings, **values, origins=origins)


def load_settings(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    repo: Path | None = None,
) -> Settings:
    """Flags (non-None values) beat the environment, which beats ``.nova.toml``."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for key, value in _read_repo_file(repo).items():
        values[key] = value
        origins[key] = ".nova.toml"
    for spec in SETTINGS:
        raw = env.get(spec.env)
        if raw not in (None, ""):
            values[spec.name] = _coerce(spec, raw, spec.env)
            origins[spec.name] = spec.env
    for key, value in (flags or {}).items():
        if value is not None:
            values[key] = _coerce(_SPECS[key], value, f"--{key.replace('_', '-')}")
            origins[key] = "flag"
    settings = Settings(**values, origins=origins)
    settings = _provider_keys(settings, env)
    settings = _arcrc_fallback(settings, env)
    register_url_secrets(
        settings.llm_base_url,
        settings.task_manager_url,
        settings.github_api_url,
        settings.phabricator_url,
    )
    _check_model(settings)
    for model in settings.llm_fallback:
        _check_model(settings.with_(llm_model=model, origins={"llm_model": "NOVA_LLM_FALLBACK"}))
    register_secret(settings.llm_api_key)
    for key in settings.fallback_keys.values():
        register_secret(key)
    register_secret(settings.task_manager_token)
    register_secret(settings.github_token)
    register_secret(settings.phabricator_token)
    register_secret(settings.gitlab_token)
    register_secret(settings.ci_job_token)
    return settings


def _provider_keys(settings: Settings, env: Mapping[str, str]) -> Settings:
    """The model's key from its provider's own variable when NOVA_LLM_API_KEY is unset, and
    the keys of the fallback models' other providers."""
    from bot.llm.providers import key_envs

    def key_of(provider: str | None) -> str | None:
        return next((env[name] for name in key_envs(provider) if env.get(name)), None)

    if settings.llm_model and not settings.llm_api_key:
        settings = settings.with_(llm_api_key=key_of(settings.provider))
    keys = {}
    for model in settings.llm_fallback:
        provider = settings.with_(llm_model=model).provider
        key = key_of(provider)
        if provider and provider != settings.provider and key:
            keys[provider] = key
    return settings.with_(fallback_keys=keys) if keys else settings


def _arcrc_fallback(settings: Settings, env: Mapping[str, str]) -> Settings:
    """Fill the Phabricator URL/token from ~/.arcrc the way arc does, when not set."""
    if settings.phabricator_url and settings.phabricator_token:
        return settings
    home = env.get("HOME")
    path = Path(home) / ".arcrc" if home else None
    if path is None or not path.is_file():
        return settings
    try:
        hosts = json.loads(path.read_text(encoding="utf-8")).get("hosts") or {}
    except (OSError, ValueError, AttributeError):
        return settings
    wanted = (settings.phabricator_url or "").rstrip("/").removesuffix("/api")
    for host, entry in hosts.items():
        if not isinstance(entry, dict):
            continue
        base = host.rstrip("/").removesuffix("/api")
        if wanted and base != wanted:
            continue
        if not wanted and len(hosts) > 1:
            break  # several hosts and no PHABRICATOR_URL: ambiguous, use none
        return settings.with_(
            phabricator_url=settings.phabricator_url or host,
            phabricator_token=settings.phabricator_token or entry.get("token"),
        )
    return settings


def settings_table() -> str:
    """The Markdown table of every setting, as README.md shows it (a test keeps it in step)."""
    rows = ["| Variable | `.nova.toml` key | Default | Meaning |", "|---|---|---|---|"]
    for s in SETTINGS:
        default = ", ".join(s.default) if isinstance(s.default, tuple) else s.default
        default = "—" if default in (None, "") else f"`{default}`"
        key = f"`{s.name}`" if s.repo_ok else "— (not from the repo)"
        choices = f" One of: {', '.join(s.choices)}." if s.choices else ""
        limits = f" {s.range_text()}" if s.range_text() else ""
        rows.append(f"| `{s.env}` | {key} | {default} | {s.help}{choices}{limits} |")
    return "\n".join(rows) + "\n"
