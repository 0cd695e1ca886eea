"""An input variant swaps a word the test gives for another word the changed lines name
beside it (a new choice of an option, a new mode), before any other variant."""

from __future__ import annotations

from bot.testgen.amplify_inputs import add_variants, steer_from_change

CLI_OLD = """import click


@click.command()
@click.option("--format", type=click.Choice(["csv", "tsv"]))
def cli(format):
    click.echo(format)
"""
CLI_NEW = CLI_OLD.replace('["csv", "tsv"]', '["csv", "tsv", "json"]')

TESTS = """from click.testing import CliRunner

from tool import cli


def test_tsv():
    result = CliRunner().invoke(cli.cli, ["--format", "tsv", "--verbose"])
    assert result.exit_code == 0
"""


def test_a_choice_the_test_gives_is_swapped_for_the_new_one_first() -> None:
    steer = steer_from_change(CLI_NEW, CLI_OLD, {5})
    assert "json" in steer.strings
    _, made = add_variants(TESTS, "test_tsv", steer, 3)
    assert made[0].description.endswith("\"tsv\" -> 'json'"), [v.description for v in made]


def test_a_word_the_changed_lines_do_not_name_is_not_swapped() -> None:
    steer = steer_from_change(CLI_NEW, CLI_OLD, {5})
    _, made = add_variants(TESTS.replace('"tsv"', '"xml"'), "test_tsv", steer, 12)
    assert not any(v.description.endswith("-> 'json'") and '"xml"' in v.description for v in made)
    assert not any("'csv'" in v.description.split("->")[-1] for v in made)
