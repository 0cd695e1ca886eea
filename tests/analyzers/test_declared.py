"""Analyzers declared in .nova.toml: how they are read and how a runaway is stopped (the
end-to-end runs, timeouts and failures are in test_analyzers_review.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_repo_config_declares_analyzers_under_nova_or_at_the_top() -> None:
    from bot.config import Settings, parse_repo_config, with_repo_config

    top = parse_repo_config('filter_mode = "file"\n[[analyzer]]\nname = "a"\ncommand = "x"\n', "t")
    nested = parse_repo_config(
        '[nova]\nfail_on = "error"\n[[nova.analyzer]]\nname = "a"\n'
        'command = ["x", "y"]\nextensions = ["ts", ".TSX"]\n',
        "t",
    )
    assert top["filter_mode"] == "file" and top["declared_analyzers"][0].command == "x"
    (declared,) = nested["declared_analyzers"]
    assert declared.command == ("x", "y") and declared.extensions == (".ts", ".tsx")
    settings = with_repo_config(Settings(), '[[analyzer]]\nname = "a"\ncommand = "x"\n', "t")
    assert [a.name for a in settings.review.declared_analyzers] == ["a"]


def test_a_runaway_analyzer_is_stopped_at_the_output_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.analyzers import declared
    from bot.analyzers.declared import DeclaredAnalyzer, run_declared

    monkeypatch.setattr(declared, "OUTPUT_CAP", 4 * 2**20)  # 64 MiB in production
    (run,) = run_declared([DeclaredAnalyzer("flood", "cat /dev/zero", timeout=60)], tmp_path)
    assert run.failure == "printed more than 4 MiB"
    assert run.output == b""
