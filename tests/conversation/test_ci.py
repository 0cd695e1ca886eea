"""The respond workflow template and the Action's respond mode; the Actions comment event
read by `nova respond` (a plain issue's comment is ignored)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from bot.hosts.github.conversation import comment_event
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "ci" / "github" / "nova-respond.yml"


def test_the_template_answers_pull_request_comments_and_never_checks_out_code() -> None:
    workflow = yaml.safe_load(TEMPLATE.read_text())
    on = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert on == {
        "issue_comment": {"types": ["created"]},
        "pull_request_review_comment": {"types": ["created"]},
    }
    assert "pull_request_target" not in on
    assert workflow["permissions"] == {"pull-requests": "write", "contents": "read"}
    (job,) = workflow["jobs"].values()
    assert "github.event.issue.pull_request" in job["if"]  # plain issues: no run
    assert "user.type != 'Bot'" in job["if"]
    uses = [s.get("uses", "") for s in job["steps"]]
    assert not any(u.startswith("actions/checkout") for u in uses)
    (nova,) = [s for s in job["steps"] if "nova" in s.get("uses", "")]
    assert nova["with"]["mode"] == "respond"


def _action_run(tmp_path: Path, mode: str) -> tuple[int, str]:
    """The Action's script with a stand-in `nova` that prints its arguments."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "nova")
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "nova").write_text('#!/bin/sh\necho "nova $*"\n')
    (fake / "nova").chmod(0o755)
    env = {
        "PATH": f"{fake}:/usr/bin:/bin",
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "INPUT_MODE": mode,
        "INPUT_MODEL": "openai:gpt-4o-mini",
        "INPUT_FAIL_ON": "error",
        "INPUT_OUTPUT": "text",
    }
    proc = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True, text=True)
    return proc.returncode, proc.stdout


def test_the_action_has_a_respond_mode(tmp_path: Path) -> None:
    code, out = _action_run(tmp_path, "respond")
    assert code == 0
    assert out.startswith("nova respond --repo") and "--model openai:gpt-4o-mini" in out
    assert "--fail-on error" in out and "review" not in out
    code, out = _action_run(tmp_path, "bogus")
    assert code == 2 and "review, testgen or respond" in out


def _event(tmp_path: Path, payload: dict) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return str(path)


def test_comment_events_name_their_pull_request_and_comment(tmp_path: Path) -> None:
    repo = {"full_name": "acme/shop"}
    on_pull = {"issue": {"number": 7, "pull_request": {"url": "x"}}, "comment": {"id": 55}}
    assert comment_event(_event(tmp_path, {**on_pull, "repository": repo}), None) == (
        "acme/shop#7",
        "55",
    )
    review_comment = {"pull_request": {"number": 8}, "comment": {"id": 56}, "repository": repo}
    assert comment_event(_event(tmp_path, review_comment), None) == ("acme/shop#8", "56")
    plain_issue = {"issue": {"number": 9}, "comment": {"id": 57}, "repository": repo}
    assert comment_event(_event(tmp_path, plain_issue), None) == (None, None)
    assert comment_event(_event(tmp_path, {"pull_request": {"number": 1}}), "a/b") == (None, None)


def test_respond_on_a_plain_issue_comment_does_nothing(tmp_path: Path, monkeypatch) -> None:
    plain_issue = {"issue": {"number": 9}, "comment": {"id": 57}}
    monkeypatch.setenv("GITHUB_EVENT_PATH", _event(tmp_path, plain_issue))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = run("respond", "--repo", str(tmp_path))
    assert result.exit_code == 0 and "nothing to do" in result.stderr
