"""``nova serve``'s configuration errors: one clear line and exit 2, before it listens."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import cli


def serve(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["serve", "--port", "0", *args])
    return result.exit_code, result.output + (result.stderr or "")


def test_help_names_each_flag_and_its_variable() -> None:
    code, out = serve("--help")
    assert code == 0
    for flag, env in (
        ("--port", "NOVA_SERVE_PORT"),
        ("--data-dir", "NOVA_SERVE_DATA_DIR"),
        ("--executor", "NOVA_SERVE_EXECUTOR"),
        ("--max-jobs", "NOVA_SERVE_MAX_JOBS"),
    ):
        assert flag in out and env in out
    assert "NOVA_GITHUB_WEBHOOK_SECRET" in out and "NOVA_HARBORMASTER_AUTH" in out


def test_a_data_dir_that_is_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("x")
    code, out = serve("--data-dir", str(tmp_path / "file"))
    assert code == 2 and "is a file" in out  # the flag: click says so
    monkeypatch.setenv("NOVA_SERVE_DATA_DIR", str(tmp_path / "file"))
    code, out = serve()
    assert code == 2 and "cannot use NOVA_SERVE_DATA_DIR" in out


def test_half_a_github_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOVA_GITHUB_APP_ID", "12")
    code, out = serve("--data-dir", str(tmp_path))
    assert code == 2 and "needs both NOVA_GITHUB_APP_ID and NOVA_GITHUB_APP_PRIVATE_KEY" in out


def test_kubernetes_without_a_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    code, out = serve("--data-dir", str(tmp_path / "d"), "--executor", "kubernetes")
    assert code == 2 and "no Kubernetes configuration" in out


def test_bad_values_name_their_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOVA_SERVE_MAX_JOBS", "0")
    code, out = serve("--data-dir", str(tmp_path))
    assert code == 2 and "NOVA_SERVE_MAX_JOBS" in out
