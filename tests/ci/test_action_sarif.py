"""The Action's ``sarif-file`` input/output and the code scanning workflow template."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
FAKE_NOVA = """#!/bin/sh
# stands in for nova: records its arguments, writes the SARIF file it is given, fails
printf '%s\\n' "$@" > "$ARGS_FILE"
while [ $# -gt 0 ]; do
  if [ "$1" = "--sarif-file" ]; then mkdir -p "$(dirname "$2")"; echo '{}' > "$2"; fi
  shift
done
exit 1
"""


def _load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def _run_step(tmp_path: Path, sarif: str) -> tuple[subprocess.CompletedProcess[str], str, str]:
    """The Action's review step, run by bash as GitHub runs a composite step."""
    step = next(s for s in _load(ROOT / "action.yml")["runs"]["steps"] if s.get("id") == "nova")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nova").write_text(FAKE_NOVA)
    (bin_dir / "nova").chmod(0o755)
    outputs, args = tmp_path / "github_output", tmp_path / "args"
    env = {name: "" for name in step["env"]}
    env.update(
        {
            "INPUT_MODE": "review",
            "INPUT_OUTPUT": "text",
            "INPUT_FAIL_ON": "never",
            "INPUT_SARIF_FILE": sarif,
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_WORKSPACE": str(tmp_path),
            "ARGS_FILE": str(args),
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(tmp_path),
        }
    )
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return (
        proc,
        outputs.read_text() if outputs.exists() else "",
        args.read_text() if args.exists() else "",
    )


def test_sarif_file_is_written_and_named_in_the_outputs_even_when_findings_fail(
    tmp_path: Path,
) -> None:
    proc, outputs, args = _run_step(tmp_path, "out/nova.sarif")
    assert proc.returncode == 1, proc.stderr  # nova's exit code is the step's
    assert "--sarif-file\nout/nova.sarif\n" in args and "--publish\ngithub\n" in args
    assert "sarif_file=out/nova.sarif\n" in outputs
    assert (tmp_path / "out" / "nova.sarif").exists()


def test_no_sarif_file_asked_for_none_written(tmp_path: Path) -> None:
    proc, outputs, args = _run_step(tmp_path, "")
    assert proc.returncode == 1 and "--sarif-file" not in args and "sarif_file" not in outputs


def test_action_declares_the_sarif_output() -> None:
    action = _load(ROOT / "action.yml")
    assert action["inputs"]["sarif-file"]["default"] == ""
    assert action["outputs"]["sarif-file"]["value"] == "${{ steps.nova.outputs.sarif_file }}"


def test_code_scanning_workflow_uploads_the_sarif() -> None:
    workflow = _load(ROOT / "ci" / "github" / "nova-code-scanning.yml")
    assert workflow["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "security-events": "write",
    }
    assert "pull_request" in workflow[True] and "pull_request_target" not in workflow[True]
    steps = workflow["jobs"]["review"]["steps"]
    nova = next(s for s in steps if s.get("id") == "nova")
    assert nova["with"]["sarif-file"]
    upload = next(
        s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")
    )
    assert upload["uses"].endswith("@v3") and "always()" in upload["if"]
    assert upload["with"]["sarif_file"] == "${{ steps.nova.outputs.sarif-file }}"
    assert upload["with"]["category"] == "nova"
