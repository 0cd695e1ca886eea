"""Adding a host touches no core module: its package declares its settings, and one registry
entry (``bot.hosts._HOST_MODULES``) makes them flags-, environment- and .nova.toml-ready."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot import config, hosts
from bot.config import all_settings, load_settings, settings_table
from bot.errors import ConfigError, redact
from tests.hosts.toy import ToySettings


def _clear() -> None:
    for cached in (hosts.hosts, config.host_sections, config._index, config.all_settings):
        cached.cache_clear()


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    modules = (*hosts._HOST_MODULES[:-1], "tests.hosts.toy", hosts._HOST_MODULES[-1])
    monkeypatch.setattr(hosts, "_HOST_MODULES", modules)
    _clear()
    yield
    monkeypatch.undo()
    _clear()


def test_a_new_hosts_settings_load_like_any_other(toy_registered: None, tmp_path: Path) -> None:
    assert {"TOY_URL", "TOY_TOKEN", "NOVA_TOY_MAX_NOTES"} <= {s.env for s in all_settings()}
    assert "| `NOVA_TOY_MAX_NOTES` | `toy_max_notes` | `5` |" in settings_table()
    (tmp_path / ".nova.toml").write_text("toy_max_notes = 2\n")
    token = "toy-token-8c1f2e"
    settings = load_settings(
        env={"TOY_URL": "https://forge.test", "TOY_TOKEN": token}, repo=tmp_path
    )
    toy = settings.section(ToySettings)
    assert (toy.url, toy.token, toy.max_notes) == ("https://forge.test", token, 2)
    assert settings.origins["toy_max_notes"] == ".nova.toml"
    assert redact(f"Authorization: {token}") == "Authorization: ***", "secrets are registered"
    assert token not in repr(settings)
    assert hosts.host_named("toy").checks(settings)[0].ok is True
    assert hosts.classify("toy#3") == "toy"


def test_a_new_hosts_secret_cannot_come_from_the_repository(
    toy_registered: None, tmp_path: Path
) -> None:
    (tmp_path / ".nova.toml").write_text('toy_token = "x"\n')
    with pytest.raises(ConfigError, match="toy_token cannot be set in the repository"):
        load_settings(env={}, repo=tmp_path)
    with pytest.raises(ConfigError, match="NOVA_TOY_MAX_NOTES: toy_max_notes must be at least 0"):
        load_settings(env={"NOVA_TOY_MAX_NOTES": "-1"})


def test_without_the_entry_the_host_and_its_settings_are_unknown() -> None:
    assert "TOY_URL" not in {s.env for s in all_settings()}
    assert "toy" not in [h.name for h in hosts.hosts()]
