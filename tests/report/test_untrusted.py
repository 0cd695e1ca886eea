"""Model output can never notify people or forge Nova's markers once published."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.report.untrusted import clean_suggestion, clean_text

pieces = st.sampled_from(["@", "admin", "<!--", "-->", "nova:", "head:", "fp:", "diff:", " ",
                          "`", "a@b.com", "@org/team", "NOVA:FP", "x", "\n", "sk-"])
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
