"""``--help`` shows each setting with the first sentence of its description, whole."""

from __future__ import annotations

import re

from click.testing import CliRunner

from bot.cli import cli
from bot.cli.common import env_epilog
from bot.config import all_settings


def _rows() -> dict[str, str]:
    """Setting -> its description, continuation lines joined."""
    rows: dict[str, str] = {}
    env = ""
    for line in env_epilog().splitlines():
        m = re.match(r"^  (\S+)\s+(.*)$", line)
        if m:
            env = m.group(1)
            rows[env] = m.group(2)
        elif line.startswith(" " * 29) and env:
            rows[env] += " " + line.strip()
    return rows


def test_rows_fit_a_terminal() -> None:
    assert max(len(line) for line in env_epilog().splitlines()) <= 88


def test_every_setting_shows_a_whole_first_sentence() -> None:
    rows = _rows()
    assert set(rows) == {s.env for s in all_settings()}
    for spec in all_settings():
        shown = rows[spec.env]
        if spec.range_text():  # the allowed range follows the sentence
            assert shown.endswith(f" {spec.range_text()}"), (spec.env, shown)
            shown = shown.removesuffix(f" {spec.range_text()}")
        assert spec.help.startswith(shown), (spec.env, shown)
        rest = spec.help[len(shown) :]
        # cut only where a sentence ends: the end, or a space and a capital letter
        assert rest == "" or re.match(r"\s+[A-Z]", rest), (spec.env, shown)


def test_no_row_ends_in_a_cut_abbreviation_or_file_name() -> None:
    rows = _rows()
    for env, shown in rows.items():
        assert shown.endswith(".")
        assert not re.search(r"(?:\be\.g|\bi\.e|\be|\bi|\betc|~/|\bmcp)\.$", shown), (env, shown)
    assert "e.g. http://localhost:8000/v1." in rows["NOVA_LLM_BASE_URL"]
    assert "mcp.json" in rows["NOVA_MCP_CONFIG"]
    assert rows["PHABRICATOR_URL"].endswith("~/.arcrc.")


def test_review_help_carries_the_epilog() -> None:
    result = CliRunner().invoke(cli, ["review", "--help"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "e.g. http://localhost:8000/v1." in result.stdout
