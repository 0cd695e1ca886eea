"""Model output can never notify people or forge Nova's markers once published."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.report.untrusted import clean_suggestion, clean_text

pieces = st.sampled_from(
    [
        "@",
        "admin",
        "<!--",
        "-->",
        "nova:",
        "head:",
        "fp:",
        "diff:",
        " ",
        "`",
        "a@b.com",
        "@org/team",
        "NOVA:FP",
        "x",
        "\n",
        "sk-",
    ]
)
texts = st.lists(pieces | st.text(max_size=5), max_size=12).map("".join)


@pytest.mark.slow
@given(text=texts)
def test_clean_text_is_inert(text: str) -> None:
    out = clean_text(text)
    assert "<!--" not in out
    assert not re.search(r"nova:(fp|head|diff|line|summary)", out, re.IGNORECASE)
    assert not re.search(r"(?<![\w@`])@[A-Za-z0-9_-]", out)


def test_emails_and_code_stay_readable() -> None:
    assert clean_text("mail a@b.com") == "mail a@b.com"
    assert clean_text("ping @alice") == "ping @\u200balice"


def test_suggestions_stay_exact_or_go() -> None:
    assert clean_suggestion("@decorator\ndef f(): pass") == "@decorator\ndef f(): pass"
    assert clean_suggestion("x = 1\n```\n@everyone") is None
    assert clean_suggestion(None) is None


def test_a_rule_links_to_its_documentation_only_through_a_plain_url() -> None:
    from bot.report.untrusted import rule_label

    assert rule_label(None, "https://x.test/r") == ""
    assert rule_label("F401", "https://docs.astral.sh/ruff/rules/unused-import/") == (
        " ([F401](https://docs.astral.sh/ruff/rules/unused-import/))"
    )
    assert rule_label("F401", None) == " (F401)"
    # a URL that could leave the link, or is no web address, is dropped; the rule stays
    for url in (
        "javascript:alert(1)",
        "https://x.test/a) [b](https://evil.test",
        "https://x.test/<!-- nova:fp:abc -->",
        "https://x.test/nova:head:abc",
    ):
        assert rule_label("R1", url) == " (R1)", url
    # the rule text itself is cleaned and cannot close the link text
    label = rule_label("x] <!-- nova:fp:deadbeef --> @org/team", "https://x.test/r")
    assert "<!--" not in label and "nova:fp" not in label and "@org" not in label
    assert label.startswith(" ([x\\]")


@given(
    st.text(max_size=60), st.sampled_from(["", "https://", "http://x.test/"]), st.text(max_size=80)
)
def test_a_rule_label_never_carries_a_marker_or_a_mention(
    rule: str, scheme: str, rest: str
) -> None:
    from bot.report.untrusted import rule_label

    label = rule_label(rule or None, (scheme + rest) or None)
    assert "<!--" not in label
    assert not re.search(r"nova:(fp|head|diff|line|summary)", label, re.IGNORECASE)
    assert not re.search(r"(?<![\w@`])@[A-Za-z0-9_-]", label)
