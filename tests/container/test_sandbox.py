"""Hostile generated tests in the image, as uid 10001 on a read-only root: none is kept,
the good one is, no secret reaches the patch, the branch or the output, the checkout's work
tree, config and hooks are as they were, and the report names the isolation the container
allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.container.conftest import Image, open_to_all
from tests.container.test_image import model_env
from tests.sandbox.test_sandbox_hostile import (
    SECRETS,
    SELF_MODIFYING,
    hostile_tests,
    snapshot,
)
from tests.servers.openai_server import FakeOpenAI, text, tool_call
from tests.testgen.test_testgen import GOOD, HEADER, build_python_sample

pytestmark = pytest.mark.container


def test_hostile_tests_are_dropped_in_the_container(
    image: Image, repo: GitRepo, llm: FakeOpenAI, shared: Path
) -> None:
    build_python_sample(repo)
    repo.git("remote", "add", "origin", "https://oauth2:fake-gl-token-box-0001@gl.invalid/a/b")
    open_to_all(repo.path)
    before = snapshot(repo.path)
    llm.enqueue(
        tool_call("write_test_file", {"path": "tests/test_nova_good.py", "content": HEADER + GOOD}),
        tool_call(
            "write_test_file",
            {
                "path": "tests/test_nova_hostile.py",
                "content": hostile_tests(Path("/tmp/nova-loot"), [], "3099.5"),
            },
        ),
        tool_call(
            "write_test_file", {"path": "tests/test_nova_self.py", "content": SELF_MODIFYING}
        ),
        text('{"summary": "tests"}'),
    )
    result = image.run(
        "testgen",
        "HEAD",
        "--repo",
        "/src",
        "-q",
        "-o",
        "json",
        "--runs",
        "1",
        "--patch-dir",
        "/out",
        env={**model_env(llm), **SECRETS},
        mounts={repo.path: "/src", shared: "/out"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["isolation"]["name"] in ("bubblewrap", "unshare", "none")
    print("isolation in the container:", data["isolation"])
    reasons = {c["name"]: c["reason"] for c in data["dropped"]}
    print("dropped:", json.dumps(reasons, indent=1))
    assert [c["name"] for c in data["kept"]] == ["test_good"]
    assert "left 40 process(es)" in reasons["test_leaves_processes"]
    assert "~/.bashrc" in reasons["test_writes_home"]
    assert "changed while tests ran" in reasons["test_rewrites_itself"]
    patch = Path(data["patch"].replace("/out", str(shared), 1)).read_text()
    branch = repo.git("log", "-p", "-1", data["branch"])
    written = [f for f in shared.rglob("*") if f.is_file() and not f.is_relative_to(repo.path)]
    loot = [f.read_text(errors="replace") for f in written]
    for where in (patch, branch, result.stdout, result.stderr, *loot):
        for secret in [*SECRETS.values(), "fake-gl-token-box-0001", "sk-container-secret"]:
            assert secret not in where and secret.encode().hex() not in where
    assert snapshot(repo.path) == before
