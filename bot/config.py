"""One frozen ``Settings``, built once by the CLI from flags > environment > ``.nova.toml``
> defaults, and passed down. No other module reads the environment.

``Settings`` is made of sections (``bot.sections``), one per feature: ``llm``, ``review``,
``testgen``, ``task_manager`` and each host's (``settings.section(GitHubSettings)``), each
declared in its feature's package. A constructor is handed only the section it reads. A
setting is declared once, as a section field made by ``setting(...)``; its flat key (the
``.nova.toml`` key, the flag's name, the key of ``origins``) and its variable stay the same
whatever section holds it. ``all_settings()`` (the CLI options, ``--help``, the README table,
``nova doctor``) is derived from the sections. ``.nova.toml`` lives in the reviewed
repository, which is untrusted (a pull request can edit it), so only settings marked
``repo_ok`` may come from it: never a model endpoint, a key or a token.

Adding a host adds its section through the host registry (``bot.hosts``, ``Host.section``):
nothing here changes.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from bot.conversation.settings import QuestionSettings
from bot.errors import ConfigError, register_secret, register_url_secrets
from bot.llm.settings import LLMSettings, check_model
from bot.review.settings import FAIL_ON, ReviewSettings
from bot.sections import Section, SettingSpec, boolean, setting, specs_of
from bot.serve.settings import ServeSettings
from bot.taskmanager.settings import TaskManagerSettings
from bot.testgen.settings import TestgenSettings

__all__ = [
    "FAIL_ON",
    "Settings",
    "SettingSpec",
    "all_settings",
    "check_repo_config",
    "decode_repo_config",
    "load_settings",
    "parse_repo_config",
    "settings_table",
    "with_base_config",
    "with_repo_config",
]

_S = TypeVar("_S", bound=Section)


@dataclass(frozen=True)
class Settings:
    ci: bool = setting(
        "CI",
        "Set by CI systems: Nova never asks a question then (--confirm).",
        False,
        parse=boolean,
    )
    llm: LLMSettings = field(default_factory=LLMSettings)
    review: ReviewSettings = field(default_factory=ReviewSettings)
    testgen: TestgenSettings = field(default_factory=TestgenSettings)
    task_manager: TaskManagerSettings = field(default_factory=TaskManagerSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    questions: QuestionSettings = field(default_factory=QuestionSettings)
    # the hosts' own sections (``Host.section``); one not here reads as its defaults
    hosts: tuple[Section, ...] = ()
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def section(self, kind: type[_S]) -> _S:
        """A host's section, e.g. ``settings.section(GitHubSettings)``."""
        for section in self.hosts:
            if isinstance(section, kind):
                return section
        return kind()

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm.model) and self.review.llm_review

    @classmethod
    def of(cls, **flat: Any) -> Settings:
        """Settings from flat keys (``github_token=...``): tests, flags, ``.nova.toml``."""
        return cls().with_(**flat)

    def with_(self, **flat: Any) -> Settings:
        """A copy with some settings changed, named by their flat keys."""
        changes: dict[Any, dict[str, Any]] = {}
        for key, value in flat.items():
            owner, name = _owner(key)
            changes.setdefault(owner, {})[name] = value
        root = changes.pop(None, {})
        for owner, values in changes.items():
            if isinstance(owner, str):
                root[owner] = replace(getattr(self, owner), **values)
            else:
                updated = replace(self.section(owner), **values)
                kept = tuple(s for s in root.get("hosts", self.hosts) if type(s) is not owner)
                root["hosts"] = (*kept, updated)
        return replace(self, **root)

    def value(self, key: str) -> Any:
        """A setting's value by its flat key."""
        owner, name = _owner(key)
        if owner is None:
            return getattr(self, name)
        section = getattr(self, owner) if isinstance(owner, str) else self.section(owner)
        return getattr(section, name)


# The core sections, by their attribute on ``Settings``; the hosts' come from their registry.
_CORE: tuple[tuple[str, type[Section]], ...] = (
    ("llm", LLMSettings),
    ("review", ReviewSettings),
    ("testgen", TestgenSettings),
    ("task_manager", TaskManagerSettings),
    ("serve", ServeSettings),
    ("questions", QuestionSettings),
)


@cache
def host_sections() -> tuple[type[Section], ...]:
    from bot.hosts import hosts

    return tuple(h.section for h in hosts() if h.section is not None)


@cache
def _index() -> dict[str, tuple[str | type[Section] | None, SettingSpec]]:
    """Each flat key: where it lives (None: ``Settings`` itself; a core section's attribute;
    a host's section class) and its spec."""
    owners: list[tuple[str | type[Section] | None, type[Any]]] = [*_CORE]
    owners += [*((cls, cls) for cls in host_sections()), (None, Settings)]
    index: dict[str, tuple[str | type[Section] | None, SettingSpec]] = {}
    for owner, cls in owners:
        for spec in specs_of(cls):
            if spec.name in index:
                raise AssertionError(f"setting key {spec.name!r} is declared twice")
            index[spec.name] = (owner, spec)
    # fields of a section that are not settings but are set by name (the base .nova.toml's
    # [[analyzer]] tables)
    index["declared_analyzers"] = (
        "review",
        SettingSpec("declared_analyzers", "", "", (), field="declared_analyzers"),
    )
    index["ignore_rules"] = (
        "review",
        SettingSpec("ignore_rules", "", "", (), field="ignore_rules"),
    )
    return index


def _owner(key: str) -> tuple[str | type[Section] | None, str]:
    try:
        owner, spec = _index()[key]
    except KeyError:
        raise TypeError(f"unknown setting {key!r}") from None
    return owner, spec.field


@cache
def all_settings() -> tuple[SettingSpec, ...]:
    """Every setting, section by section in declaration order."""
    return tuple(spec for spec in (s for _, s in _index().values()) if spec.env)


def _specs() -> dict[str, SettingSpec]:
    return {s.name: s for s in all_settings()}


# settings a .nova.toml may write as a TOML list or table (parsed as their text form)
_TOML_LISTS = ("analyzers", "analyzers_off", "analyzer_severity")


def _coerce(spec: SettingSpec, value: Any, where: str) -> Any:
    if isinstance(value, str):
        try:
            value = spec.parse(value)
        except ValueError as exc:
            why = f" ({exc})" if spec.name in _TOML_LISTS else ""  # the parser names the item
            raise ConfigError(
                f"{where}: {spec.name} must be {_kind(spec)}, got {value!r}{why}"
            ) from exc
    elif isinstance(value, list) and spec.name == "exclude":
        value = tuple(str(v) for v in value)
    elif isinstance(value, list | dict) and spec.name in _TOML_LISTS:  # analyzers = [...]
        items = value.items() if isinstance(value, dict) else enumerate(value)
        text = ",".join(f"{k}={v}" if isinstance(value, dict) else str(v) for k, v in items)
        return _coerce(spec, text, where)
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


def parse_repo_config(text: str, where: str) -> dict[str, Any]:
    """The settings a repository's ``.nova.toml`` may set, validated (untrusted input)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from exc
    declared = data.pop("analyzer", None)
    ignores = data.pop("ignore", None)  # [[ignore]] (bot.conversation.ignore)
    data = data.get("nova", data)
    if declared is None and isinstance(data, dict):
        declared = data.pop("analyzer", None)
    if ignores is None and isinstance(data, dict):
        ignores = data.pop("ignore", None)
    specs = _specs()
    unknown = sorted(k for k in data if k not in specs)
    if unknown:
        raise ConfigError(
            f"{where}: unknown keys {', '.join(unknown)}; known: "
            f"{', '.join(s.name for s in all_settings() if s.repo_ok)}"
        )
    refused = sorted(k for k in data if not specs[k].repo_ok)
    if refused:
        raise ConfigError(
            f"{where}: {', '.join(refused)} cannot be set in the repository (it is untrusted "
            "input); set them in the environment (NOVA_*) or as flags"
        )
    values = {key: _coerce(specs[key], value, where) for key, value in data.items()}
    if declared is not None:
        from bot.analyzers.declared import parse_declared

        values["declared_analyzers"] = parse_declared(declared, where)
    if ignores is not None:
        from bot.conversation.ignore import parse_ignores

        values["ignore_rules"] = parse_ignores(ignores, where)
    return values


def _read_repo_file(repo: Path | None) -> dict[str, Any]:
    if repo is None:
        return {}
    path = repo / ".nova.toml"
    if not path.is_file():
        return {}
    return parse_repo_config(decode_repo_config(path.read_bytes(), str(path)), str(path))


def decode_repo_config(data: bytes, where: str) -> str:
    """A ``.nova.toml``'s bytes as text; ConfigError when git would call it binary (a NUL
    byte) or it is not UTF-8 (TOML is UTF-8)."""
    if b"\x00" in data[:8000]:
        raise ConfigError(f"{where}: a binary file (it holds a NUL byte), not TOML")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{where}: not UTF-8 (byte {exc.start}: {data[exc.start : exc.start + 1]!r}), not TOML"
        ) from exc


def with_base_config(settings: Settings, data: bytes | None, where: str) -> tuple[Settings, str]:
    """``settings`` plus the BASE revision's ``.nova.toml`` (``data``; None: there is none).

    A broken one (binary, not UTF-8, not TOML, a bad or refused value) is never silently
    dropped and never blocks a change, nor lets the change configure its own review: the
    review runs on flags, environment and defaults, and the second item says why (empty
    when the file was used or absent). The change that repairs the file is reviewed the
    same way; its settings apply once it is merged (docs/configuration.md)."""
    if data is None:
        return settings, ""
    try:
        return with_repo_config(settings, decode_repo_config(data, where), where), ""
    except ConfigError as exc:
        return settings, (
            f"{exc} — this review ignored the whole file and used the environment, flags and "
            "Nova's defaults (a change never configures its own review; fix the file on the "
            "base branch, the fixing change is reviewed like this one)"
        )


def check_repo_config(text: str | None, where: str) -> str:
    """Why a ``.nova.toml`` (its text; None: binary) could not be used, '' when it could.
    Only checked, never applied: a change's own file says what it WILL do once merged."""
    try:
        if text is None:
            raise ConfigError(f"{where}: a binary file, not TOML")
        parse_repo_config(text, where)
    except ConfigError as exc:
        return str(exc)
    return ""


def with_repo_config(settings: Settings, text: str, where: str) -> Settings:
    """``settings`` plus a repository's ``.nova.toml`` (read from the change's BASE revision,
    never from the change itself): flags and the environment still win."""
    values = {
        key: value
        for key, value in parse_repo_config(text, where).items()
        if key not in settings.origins
    }
    origins = {**settings.origins, **dict.fromkeys(values, where)}
    return replace(settings.with_(**values), origins=origins)


def load_settings(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    repo: Path | None = None,
) -> Settings:
    """Flags (non-None values) beat the environment, which beats ``.nova.toml``."""
    env = os.environ if env is None else env
    specs = _specs()
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for key, value in _read_repo_file(repo).items():
        values[key] = value
        origins[key] = ".nova.toml"
    for spec in all_settings():
        raw = env.get(spec.env)
        if raw not in (None, ""):
            values[spec.name] = _coerce(spec, raw, spec.env)
            origins[spec.name] = spec.env
    for key, value in (flags or {}).items():
        if value is not None:
            values[key] = _coerce(specs[key], value, f"--{key.replace('_', '-')}")
            origins[key] = "flag"
    settings = replace(Settings.of(**values), origins=origins)
    settings = _resolved(settings, env)
    _register_secrets(settings)
    where = {"flag": "--model"}.get(origins.get("llm_model", ""), "NOVA_LLM_MODEL")
    check_model(settings.llm, where)
    for model in settings.llm.fallback:
        check_model(replace(settings.llm, model=model), "NOVA_LLM_FALLBACK")
    return settings


def _resolved(settings: Settings, env: Mapping[str, str]) -> Settings:
    """Every section as the environment completes it (``Section.resolved``); each host's
    section is present from here on."""
    core = {name: getattr(settings, name).resolved(env) for name, _ in _CORE}
    hosts = tuple(settings.section(cls).resolved(env) for cls in host_sections())
    return replace(settings, **core, hosts=hosts)


def _register_secrets(settings: Settings) -> None:
    """Every secret setting, and the credentials in every URL setting, are redacted from
    then on (logs, events, prompts, comments, exceptions)."""
    for spec in all_settings():
        value = settings.value(spec.name)
        if spec.secret:
            register_secret(value)
        elif spec.name.endswith("url"):
            register_url_secrets(value)
    for key in settings.llm.fallback_keys.values():
        register_secret(key)


def settings_table() -> str:
    """The Markdown table of every setting, as README.md shows it (a test keeps it in step)."""
    rows = ["| Variable | `.nova.toml` key | Default | Meaning |", "|---|---|---|---|"]
    for s in all_settings():
        default = ", ".join(s.default) if isinstance(s.default, tuple) else s.default
        default = "—" if default in (None, "") else f"`{default}`"
        key = f"`{s.name}`" if s.repo_ok else "— (not from the repo)"
        choices = f" One of: {', '.join(s.choices)}." if s.choices else ""
        limits = f" {s.range_text()}" if s.range_text() else ""
        rows.append(f"| `{s.env}` | {key} | {default} | {s.help}{choices}{limits} |")
    return "\n".join(rows) + "\n"
