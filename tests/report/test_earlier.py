"""Earlier findings after an incremental review (bot.report.earlier): what still stands is
never more than the earlier verdict, and only an outdated or re-found comment takes one off."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.change import SEVERITIES, Severity
from bot.report.earlier import OUTDATED, carried, earlier_rows, severities
from bot.review.result import PriorReview

severity = st.sampled_from(SEVERITIES)
comment = st.lists(severity, max_size=3).map(
    lambda found: "\n\n".join(f"🔴 **{s}** text" for s in found)
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(severity, max_size=12), st.lists(comment, max_size=6), st.lists(comment, max_size=6)
)
def test_what_still_stands_is_the_earlier_verdict_less_what_left(
    earlier: list[Severity], outdated: list[str], again: list[str]
) -> None:
    still = Counter(carried(PriorReview("a" * 40, tuple(earlier)), outdated, again))
    before = Counter(earlier)
    assert still <= before  # never more than the earlier verdict
    gone = Counter(s for body in outdated + again for s in severities(body))
    assert still == before - gone  # exactly what left, never below zero
    assert list(carried(PriorReview("a" * 40, tuple(earlier)), (), ())) == sorted(
        earlier, key=SEVERITIES.index
    )
    assert carried(None, outdated, again) == ()


def test_an_outdated_comment_keeps_its_severity_label() -> None:
    body = f"{OUTDATED}.\n\n🔴 **error** None items crash\n\n<!-- nova:fp:0123456789abcdef -->"
    assert severities(body) == ["error"]


def test_earlier_rows_are_the_finding_rows_of_the_listed_sections() -> None:
    body = "\n".join(
        [
            "## Nova review of `abc1234`",
            "- `not/a/finding.py:1` **info** before any section",
            "### Findings not posted inline",
            "- `shop/cart.py:5` **warning** magic",
            "### Not placed on a line",
            "- `shop/cart.py:12` **warning** deleted _(the line was deleted)_",
            "- `shop/cart.py:5` **warning** magic",
            "### Something else",
            "- `x.py:1` **info** other",
        ]
    )
    assert earlier_rows(body) == [
        "- `shop/cart.py:5` **warning** magic",
        "- `shop/cart.py:12` **warning** deleted _(the line was deleted)_",
    ]
