"""Which changed targets amplification runs for after the differential generator, and in
how much time (``pipeline.amplify_plan``)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.testgen.matrix import Target
from bot.testgen.pipeline import PINNED_BY, amplify_plan

TARGETS = [Target("m.py", "pack", "modified", [3]), Target("m.py", "other", "modified", [9])]
PINS_PACK: dict[str, dict[str, list[dict[str, Any]]]] = {
    "tests/test_nova_m.py": {"test_pack": [{"call": "pack(1)", "changed": True, "reaches": []}]}
}


def test_nothing_pinned_amplifies_every_target_in_the_whole_time() -> None:
    facts = {"t.py": {"test_x": [{"call": "pack(1)", "changed": False, "reaches": []}]}}
    targets, seconds, note = amplify_plan(TARGETS, facts, 500.0, 40.0)
    assert [t.qualname for t in targets] == ["pack", "other"] and seconds == 40.0
    assert note is None


def test_a_pinned_change_leaves_the_other_targets_half_the_time_early_in_the_job() -> None:
    targets, seconds, note = amplify_plan(TARGETS, PINS_PACK, PINNED_BY - 1, 40.0)
    assert [t.qualname for t in targets] == ["other"] and seconds == 20.0
    assert note is not None and "1 changed target(s) it pins none of are amplified" in note


def test_a_pinned_change_late_in_the_job_skips_amplification_and_says_what_was_spent() -> None:
    targets, seconds, note = amplify_plan(TARGETS, PINS_PACK, PINNED_BY + 15, 40.0)
    assert targets == [] and seconds == 0.0
    assert note is not None and "skipped" in note and f"{PINNED_BY + 15:.0f} s" in note


def test_every_target_pinned_skips_it_whatever_was_spent() -> None:
    both = [{"call": f"{name}(1)", "changed": True, "reaches": []} for name in ("pack", "other")]
    facts = {"t.py": {"test_both": both}}
    targets, _, note = amplify_plan(TARGETS, facts, 0.0, 40.0)
    assert targets == [] and note is not None and "of every changed target" in note


@settings(max_examples=150, deadline=None)
@given(spent=st.floats(0, 600), pinned=st.booleans())
def test_amplification_runs_late_only_when_nothing_is_pinned(spent: float, pinned: bool) -> None:
    facts = PINS_PACK if pinned else {}
    targets, seconds, _ = amplify_plan(TARGETS, facts, spent, 40.0)
    if not pinned:
        assert len(targets) == 2 and seconds == 40.0
    elif spent > PINNED_BY:
        assert targets == []
    else:
        assert [t.qualname for t in targets] == ["other"] and seconds == 20.0
