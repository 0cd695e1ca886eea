"""A host that exists only in the tests: what a newcomer writes to add one (its package, its
settings section) and nothing else. ``test_new_host.py`` registers it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bot.errors import UsageError
from bot.hosts.base import Check, HostSession
from bot.sections import Section, setting

if TYPE_CHECKING:
    from bot.config import Settings


@dataclass(frozen=True)
class ToySettings(Section):
    prefix = "toy_"
    env_prefixes = ("TOY_",)

    url: str = setting("TOY_URL", "Base URL of the toy forge.", "https://toy.invalid")
    token: str | None = setting("TOY_TOKEN", "Token for the toy forge.", secret=True)
    max_notes: int = setting(
        "NOVA_TOY_MAX_NOTES", "Most notes per run.", 5, parse=int, repo_ok=True, min=0
    )


class ToyHost:
    name = "toy"
    title = "Toy"
    noun = "toy change"
    references = "toy#12"
    section: type[Section] | None = ToySettings
    publishes = False

    def matches(self, spec: str) -> bool:
        return spec.startswith("toy#")

    def ref_from_ci(self, settings: Settings) -> str | None:
        return None

    def open(
        self, settings: Settings, repo: Path | None, *, stdin: IO[str] | None = None
    ) -> HostSession:
        raise UsageError(f"the toy forge at {settings.section(ToySettings).url} is not real")

    def checks(self, settings: Settings) -> Sequence[Check]:
        toy = settings.section(ToySettings)
        return [Check("toy", toy.url, None if toy.token is None else True, "configured")]


HOST = ToyHost()
