"""bench/check.py, CI's slowdown check: its generated diff, its verdict, its import check.
(No timing here: the times themselves are measured by the script, in CI.)"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from bot.diff import parse_diff, render_files

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_check", ROOT / "bench" / "check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_check"] = module
    spec.loader.exec_module(module)
    return module


def test_the_generated_diff_is_fixed_and_parses_whole(check: ModuleType) -> None:
    text = check.generated_diff(files=60)
    assert text == check.generated_diff(files=60)
    files = parse_diff(text)
    assert len(files) == 60
    assert {f.status for f in files} == {"added", "deleted", "modified"}
    body = [
        row
        for row in text.split("\n")
        if row[:1] in (" ", "+", "-") and not row.startswith(("+++ ", "--- "))
    ]
    assert sum(len(h.lines) for f in files for h in f.hunks) == len(body)
    assert render_files(files).count("\n") > len(files)


def test_the_recorded_baseline_is_for_this_diff(check: ModuleType) -> None:
    baseline = json.loads((ROOT / "bench" / "baseline.json").read_text())
    assert baseline["diff_lines"] == check.generated_diff().count("\n")
    assert baseline["parse_render_ratio"] > 0 and baseline["cold_start_ratio"] > 0


def test_only_a_ratio_past_baseline_times_margin_fails(check: ModuleType) -> None:
    baseline = {"parse_render_ratio": 2.5, "cold_start_ratio": 5.0}
    assert check.over({"parse_render_ratio": 5.0, "cold_start_ratio": 10.0}, baseline, 2.0) == []
    slow = check.over({"parse_render_ratio": 5.01, "cold_start_ratio": 1.0}, baseline, 2.0)
    assert len(slow) == 1 and slow[0].startswith("parse+render took 5.01x")
    slow = check.over({"parse_render_ratio": 1.0, "cold_start_ratio": 10.5}, baseline, 2.0)
    assert len(slow) == 1 and slow[0].startswith("nova --help took 10.50x")


def test_nova_help_imports_no_heavy_module(check: ModuleType) -> None:
    assert "jinja2" in check.heavy_imports(("-c", "import jinja2"))  # it sees them
    assert check.heavy_imports() == []
