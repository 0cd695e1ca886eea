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


def test_a_port_in_use(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        result = CliRunner().invoke(cli, ["serve", "--port", port, "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in result.output


def test_old_job_logs_are_pruned_at_start(tmp_path: Path) -> None:
    import os
    import time

    from bot.serve.executors.local import LocalExecutor
    from bot.serve.queue import RETENTION

    logs = tmp_path / "logs"
    logs.mkdir()
    old, new = logs / "1.log", logs / "2.log"
    old.write_text("old")
    new.write_text("new")
    past = time.time() - RETENTION - 60
    os.utime(old, (past, past))
    LocalExecutor(tmp_path, 10.0)
    assert not old.exists() and new.exists()
