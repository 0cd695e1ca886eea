"""action.yml and the ci/ templates stay in step with the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from bot.cli.review import review

ROOT = Path(__file__).resolve().parents[1]
# Inputs that are not `nova review` options, and why.
NOT_OPTIONS = {"github-token": "GITHUB_TOKEN", "api-key": "NOVA_LLM_API_KEY",
               "python-version": "setup-python", "mode": "review only for now"}
# `nova review` options an action does not expose, and why.
NOT_INPUTS = {"repo": "the workspace", "publish": "always github", "output-file": "stdout",
              "events-file": "local use", "quiet": "logs wanted", "no-llm": "empty model",
              "staged": "a pull request", "help": "-",
              "harbormaster-target": "Phabricator only"}


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_action_inputs_map_one_to_one_onto_review_options() -> None:
    inputs = set(_action()["inputs"])
    options = {opt.lstrip("-") for p in review.params for opt in p.opts if opt.startswith("--")}
    assert inputs - set(NOT_OPTIONS) == options - set(NOT_INPUTS)


def test_every_input_reaches_the_script_through_env_only() -> None:
    steps = _action()["runs"]["steps"]
    nova = next(s for s in steps if s.get("id") == "nova")
    env_values = " ".join(nova["env"].values())
    for name in _action()["inputs"]:
        if name != "python-version":
            assert f"inputs.{name}" in env_values, name
    assert "${{" not in nova["run"]  # no expression is interpolated into shell
    for name in set(_action()["inputs"]) - set(NOT_OPTIONS):
        assert f"--{name}" in nova["run"], name


def test_templates_parse_and_use_minimal_permissions() -> None:
    for path in (ROOT / "ci").rglob("*.yml"):
        doc = yaml.safe_load(path.read_text())
        assert isinstance(doc, dict), path
    workflow = yaml.safe_load((ROOT / "ci" / "github" / "nova-review.yml").read_text())
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert "pull_request" in workflow[True] and "pull_request_target" not in workflow[True]
    text = (ROOT / "ci" / "github" / "nova-review.yml").read_text()
    assert re.search(r"fetch-depth: 0", text)
