"""How a feature declares its settings: a ``Section`` (a frozen dataclass) whose fields are
made by ``setting(...)``, each carrying its environment variable, help, parser and limits.

A setting's *key* is its name in ``.nova.toml``, in ``origins`` and for flags: the section's
``prefix`` plus the field's name (``GitHubSettings.token`` is ``github_token``), unless the
field names its own ``key``. Keys and environment variables stay flat and stable whatever
section holds them. ``bot.config`` gathers the sections (the core ones and each host's) into
one ``Settings``; nothing here reads the environment.

Only plain data and the standard library here: every section module imports this one, and
``nova --help`` reads them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields, replace
from typing import Any, ClassVar, Self

__all__ = ["Section", "SettingSpec", "boolean", "globs", "setting", "specs_of"]


def boolean(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


def globs(text: str) -> tuple[str, ...]:
    """A comma-separated list (patterns, models, files)."""
    return tuple(p.strip() for p in text.split(",") if p.strip())


@dataclass(frozen=True)
class SettingSpec:
    name: str  # the flat key: .nova.toml, origins, flags
    env: str
    help: str
    default: Any = None
    parse: Callable[[str], Any] = str
    choices: tuple[str, ...] = ()
    secret: bool = False
    repo_ok: bool = False  # may be set in the reviewed repo's .nova.toml
    min: float | None = None  # numbers: the smallest value allowed
    min_exclusive: bool = False  # numbers: must be above ``min``, not equal to it
    key: str | None = None  # the flat key when it is not the section's prefix + field name
    field: str = ""  # the field's name in its section

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
    key: str | None = None,
) -> Any:
    """A section field and everything said about it, in one place: its environment
    variable, help (``--help``, the README table), parser and limits. A secret is kept out
    of ``repr``."""
    spec = SettingSpec(
        "", env, help, default, parse, choices, secret, repo_ok, min, min_exclusive, key
    )
    return field(default=default, repr=not secret, metadata={_SPEC: spec})


@dataclass(frozen=True)
class Section:
    """A group of settings that one feature reads; subclass as a frozen dataclass.

    ``prefix`` makes the flat keys (``llm_`` + ``model``); ``env_prefixes`` are the
    prefixes its variables may have besides ``NOVA_`` (a host's own: ``GITHUB_``)."""

    prefix: ClassVar[str] = ""
    env_prefixes: ClassVar[tuple[str, ...]] = ()

    def resolved(self, env: Mapping[str, str]) -> Self:
        """Fill what the environment implies beyond the section's own variables (a
        provider's key variable, ~/.arcrc); called once by ``load_settings``."""
        return self


def _spec(section: type[Any], f: Field[Any]) -> SettingSpec:
    spec: SettingSpec = f.metadata[_SPEC]
    prefix: str = getattr(section, "prefix", "")
    return replace(spec, name=spec.key or prefix + f.name, field=f.name)


def specs_of(section: type[Any]) -> tuple[SettingSpec, ...]:
    """The settings a section declares, in declaration order, named by their flat keys."""
    return tuple(_spec(section, f) for f in fields(section) if _SPEC in f.metadata)
