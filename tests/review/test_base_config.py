"""A broken ``.nova.toml`` in the base revision (binary per git, not UTF-8, a bad value) is
always reported, in the summary and the job log; the review runs without it (environment,
flags, defaults); the change never configures its own review; and the change that repairs
the file can pass (issue 27, section 4). Real git repositories, the real CLI."""

from __future__ import annotations

import json

import pytest

from bot.config import load_settings, with_base_config
from tests.conftest import GitRepo, run

BROKEN = {
    "NUL byte": b'fail_on = "never"\n\x00\x01\x02\n',
    "invalid UTF-8": b'extra_instructions = "caf\xe9"\n',
    "not TOML": b"fail_on = [\n",
    "bad value": b'fail_on = "sometimes"\n',
    "refused key": b'llm_base_url = "http://evil.invalid/v1"\n',
}
WHY = {
    "NUL byte": "a binary file",
    "invalid UTF-8": "not UTF-8",
    "not TOML": "not valid TOML",
    "bad value": "fail_on must be",
    "refused key": "cannot be set in the repository",
}


def _base_with(repo: GitRepo, config: bytes) -> None:
    repo.write("pkg/__init__.py", "")
    repo.write(".nova.toml", config)
    repo.commit("base with a broken config")


def _review(repo: GitRepo, *args: str):
    return run("review", "--repo", str(repo.path), "--no-llm", "-o", "json", *args)


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_base_config_is_reported_and_the_review_runs(repo: GitRepo, kind: str) -> None:
    """Before: a binary file was dropped without a word (exit 0); the others exited 2 on
    every change."""
    _base_with(repo, BROKEN[kind])
    repo.write("pkg/a.py", "import os\n")
    repo.commit("a change")
    result = _review(repo)
    assert result.exit_code == 0, result.stderr
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("nova: warning:")]
    assert len(warnings) == 1 and ".nova.toml (base)" in warnings[0] and WHY[kind] in warnings[0]
    data = json.loads(result.stdout)
    assert WHY[kind] in data["summary"] and "Nova's defaults" in data["summary"]
    assert [c["path"] for c in data["comments"]] == ["pkg/a.py"]  # ruff ran, as by default


def test_the_change_that_repairs_it_passes_and_never_configures_itself(repo: GitRepo) -> None:
    _base_with(repo, b'fail_on = "sometimes"\n')
    # the fix also tries to switch its own review off: it is reviewed with the defaults
    repo.write(".nova.toml", 'fail_on = "never"\nanalyzers = "none"\nexclude = ["*"]\n')
    repo.write("pkg/a.py", "import os\n")
    repo.commit("fix the config")
    result = _review(repo, "--fail-on", "warning")
    assert result.exit_code == 1, result.stderr  # the gate held: ruff's finding counts
    data = json.loads(result.stdout)
    assert [c["path"] for c in data["comments"]] == ["pkg/a.py"]
    assert "this change edits .nova.toml" in data["summary"]
    assert "base revision's (none); this change's .nova.toml is valid" in data["summary"]
    clean = _review(repo, "HEAD~0")  # and without findings over the gate, it passes
    assert clean.exit_code == 0
    # once merged, the repaired file configures the next change
    repo.write("pkg/b.py", "import sys\n")
    repo.commit("next change")
    after = _review(repo)
    assert after.exit_code == 0 and "nova: warning:" not in after.stderr
    assert json.loads(after.stdout)["comments"] == []  # analyzers = "none" from the base


def test_a_change_that_would_break_the_config_is_told_before_it_lands(repo: GitRepo) -> None:
    _base_with(repo, b'analyzers = "none"\n')
    repo.write(".nova.toml", b"fail_on = [\n")
    repo.write("pkg/a.py", "import os\n")
    repo.commit("break the config")
    result = _review(repo)
    assert result.exit_code == 0 and "nova: warning:" not in result.stderr
    data = json.loads(result.stdout)
    assert data["comments"] == []  # the base's analyzers = "none" still applies
    assert "this change's .nova.toml: not valid TOML" in data["summary"]
    assert "merged, it would be reported and ignored" in data["summary"]


def test_a_good_base_config_still_applies_without_a_warning(repo: GitRepo) -> None:
    _base_with(repo, b'analyzers = "none"\n')
    repo.write("pkg/a.py", "import os\n")
    repo.commit("a change")
    result = _review(repo)
    assert result.exit_code == 0 and "nova: warning:" not in result.stderr
    assert json.loads(result.stdout)["comments"] == []


def test_with_base_config_keeps_flags_and_environment() -> None:
    settings = load_settings(env={"NOVA_FAIL_ON": "error"})
    for data in BROKEN.values():
        kept, why = with_base_config(settings, data, ".nova.toml (base)")
        assert kept == settings and why.startswith(".nova.toml (base): ")
    used, why = with_base_config(settings, b'analyzers = "none"\n', "base")
    assert why == "" and used.review.analyzers == "none" and used.review.fail_on == "error"
    assert with_base_config(settings, None, "base") == (settings, "")
