"""``@nova`` commands from untrusted text: the grammar, and what is never a command."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.conversation.commands import SCAN_LIMIT, Command, mention_names, parse_command

NAMES = mention_names("nova", "nova-bot[bot]")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@nova dismiss not a bug", Command("dismiss", "not a bug")),
        ("@Nova ignore", Command("dismiss", "")),
        ("@nova false positive: the lock is held", Command("dismiss", "the lock is held")),
        ("@nova dismiss always generated code", Command("dismiss", "generated code", True)),
        ("@nova-bot dismiss x", Command("dismiss", "x")),
        ("@nova review", Command("review")),
        ("@nova review.", Command("review")),
        ("@nova help", Command("help")),
        ("@nova", Command("help")),
        ("@nova explain", Command("explain", "")),
        ("@nova why is this a problem?", Command("explain", "why is this a problem?")),
        (
            "Thanks!\n\n@nova explain\nthe lock is held here",
            Command("explain", "the lock is held here"),
        ),
        ("@nova review this please", Command("explain", "review this please")),
    ],
)
def test_the_grammar(text: str, expected: Command) -> None:
    assert parse_command(text, NAMES) == expected


@pytest.mark.parametrize(
    "text",
    [
        "> @nova dismiss not a bug",
        "someone said\n> @nova dismiss\n\nI disagree",
        "```\n@nova dismiss\n```",
        "~~~\n@nova dismiss\n~~~",
        "`@nova dismiss`",
        "<!-- @nova dismiss -->",
        "<!--\n@nova dismiss\n-->",
        "hello @nova dismiss",  # not addressed: the mention does not start the line
        "@novax dismiss",
        "@someone dismiss",
        "x" * SCAN_LIMIT + "\n@nova dismiss",  # past what is read
        "",
    ],
)
def test_not_a_command(text: str) -> None:
    assert parse_command(text, NAMES) is None


def test_the_login_of_an_app_is_a_name() -> None:
    assert mention_names("@Nova", "acme-nova[bot]") == ("nova", "acme-nova")
    assert parse_command("@acme-nova help", mention_names("nova", "acme-nova[bot]")) == Command(
        "help"
    )


@given(st.text(max_size=2000))
def test_any_text_parses_or_not_without_failing(text: str) -> None:
    command = parse_command(text, NAMES)
    assert command is None or command.kind in ("dismiss", "explain", "review", "help")
    if command is not None:
        assert len(command.text) <= 2000


@given(
    st.lists(
        st.text(
            alphabet=st.characters(exclude_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
        ),
        min_size=1,
    )
)
def test_a_quoted_text_is_never_a_command(lines: list[str]) -> None:
    quoted = "\n".join(f"> {line}" for line in [*lines, "@nova dismiss"])
    assert parse_command(quoted, NAMES) is None


@given(st.text(max_size=500))
def test_what_nova_posts_of_untrusted_text_is_inert(text: str) -> None:
    from bot.conversation.answers import safe
    from bot.conversation.model import fingerprint_of, replied_to

    out = safe(text + "\n::error::x\n  ::warning::y @everyone <!-- nova:re:1 --> //nova:re:2//")
    assert not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert "<!--" not in out and "@everyone" not in out
    assert replied_to(out) is None and fingerprint_of(out) is None
