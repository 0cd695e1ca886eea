"""Smoke tests of the image built from the shipped Dockerfile: run as uid 10001 on a
read-only root with tmpfs /tmp and HOME, against the in-repo servers on the host network."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from bot import __version__
from tests.conftest import GitRepo
from tests.container.conftest import PODMAN, Image, open_to_all
from tests.hosts.github.support import REPO, TOKEN, pull_from_repo
from tests.hosts.github.test_github import model_reply
from tests.servers.github_server import FakeGitHub, commentable_lines
from tests.servers.openai_server import FakeOpenAI, text
from tests.testgen.test_testgen import (
    FIXED,
    GOOD,
    HEADER,
    WRONG,
    build_python_sample,
    write_run_fix,
)

pytestmark = pytest.mark.container

MODEL_KEY = "sk-container-secret-0123456789"
BASE_IMAGE = "docker.io/library/python:3.11-slim"
MAX_LAYERS_MB = 210  # docs/docker.md, Size


def model_env(llm: FakeOpenAI) -> dict[str, str]:
    return {
        "NOVA_LLM_MODEL": "openai:test-model",
        "NOVA_LLM_BASE_URL": llm.base_url,
        "NOVA_LLM_API_KEY": MODEL_KEY,
        "NOVA_LLM_MAX_RETRIES": "0",
        "NO_PROXY": "127.0.0.1,localhost",
    }


def inspect(ref: str) -> dict:
    out = subprocess.run(
        [*PODMAN, "image", "inspect", ref], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)[0]


def test_version_and_doctor(image: Image, llm: FakeOpenAI) -> None:
    version = image.run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"nova, version {__version__}"
    doctor = image.run("doctor", env=model_env(llm))
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert re.search(r"^\s*ok\s+model\s", doctor.stdout, re.M), doctor.stdout
    assert MODEL_KEY not in doctor.stdout + doctor.stderr


def test_non_root_read_only_and_no_secrets_baked_in(image: Image) -> None:
    who = image.run(
        "-c",
        "id -u; touch /opt/nova/x 2>&1 || echo read-only; touch /tmp/x ~/x && echo tmpfs-ok",
        entrypoint="sh",
    )
    assert who.stdout.split() == ["10001", *who.stdout.split()[1:]]
    assert "read-only" in who.stdout and "tmpfs-ok" in who.stdout, who.stdout + who.stderr
    config = inspect(image.tag)["Config"]
    assert config["User"] == "10001" and config["Entrypoint"] == ["nova"]
    names = [e.split("=", 1)[0] for e in config["Env"]]
    assert not [n for n in names if re.search(r"TOKEN|KEY|SECRET|PASSW", n)], names
    history = subprocess.run(
        [*PODMAN, "history", "--no-trunc", "--format", "{{.CreatedBy}}", image.tag],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert not re.search(r"(TOKEN|API_KEY|SECRET|PASSW\w*)=", history), history


def test_nova_layers_stay_small(image: Image) -> None:
    layers = inspect(image.tag)["Size"] - inspect(BASE_IMAGE)["Size"]
    print(f"Nova's layers: {layers / 1e6:.1f} MB")
    assert layers <= MAX_LAYERS_MB * 1e6


def test_review_of_a_mounted_repository(image: Image, repo: GitRepo, llm: FakeOpenAI) -> None:
    repo.write("shop/total.py", "def total(items):\n    return sum(items)\n")
    repo.commit("base")
    repo.write("shop/total.py", "import os\n\n\ndef total(items):\n    return sum(items)\n")
    repo.commit("total imports os")
    llm.enqueue(
        text(
            json.dumps(
                {
                    "summary": "s",
                    "comments": [
                        {
                            "path": "shop/total.py",
                            "line": 5,
                            "code": "    return sum(items)",
                            "body": "None items",
                            "severity": "warning",
                        }
                    ],
                }
            )
        )
    )
    result = image.run(
        "review",
        "HEAD",
        "--repo",
        "/src",
        "-q",
        "-o",
        "json",
        env=model_env(llm),
        mounts={repo.path: "/src"},
    )
    assert result.returncode == 0, result.stderr
    placed = {(c["path"], c["line"], c["origin"]) for c in json.loads(result.stdout)["comments"]}
    assert placed == {("shop/total.py", 5, "llm"), ("shop/total.py", 1, "ruff")}, placed
    assert len(llm.requests) == 1 and MODEL_KEY not in result.stdout + result.stderr


def test_publish_on_github_from_the_container(
    image: Image, repo: GitRepo, llm: FakeOpenAI, tmp_path: Path
) -> None:
    gh = FakeGitHub(TOKEN).start()
    try:
        pr = gh.add_pull(_cart_pull(repo))
        env = {
            **model_env(llm),
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_API_URL": gh.base_url,
            "NOVA_GITHUB_WRITE_INTERVAL": "0",
        }
        llm.enqueue(text(model_reply()))
        first = image.run(
            "review", f"{REPO}#1", "--publish", "github", "--repo", "/tmp", "-q", env=env
        )
        assert first.returncode == 0, first.stderr
        inline = [c for c in gh.review_comments if "nova:fp:" in c["body"]]
        assert {(c["path"], c["line"]) for c in inline} == {
            ("shop/cart.py", 5),
            ("shop/cart.py", 19),
            ("shop/total.py", 5),
            ("shop/new_name.py", 2),
            ("shop/total.py", 1),
        }
        for c in inline:
            patch = next(f["patch"] for f in pr.files if f["filename"] == c["path"])
            assert c["line"] in commentable_lines(patch)
        assert len(gh.reviews) == 1 and len(gh.issue_comments) == 1
        calls, posted = len(llm.requests), len(gh.review_comments)
        again = image.run(
            "review", f"{REPO}#1", "--publish", "github", "--repo", "/tmp", "-q", env=env
        )
        assert again.returncode == 0, again.stderr
        assert len(llm.requests) == calls and len(gh.review_comments) == posted
        assert len(gh.reviews) == 1 and len(gh.issue_comments) == 1
        assert TOKEN not in first.stdout + first.stderr + again.stdout + again.stderr
    finally:
        gh.stop()


def _cart_pull(repo: GitRepo):
    repo.write("shop/cart.py", "".join(f"line_{i} = {i}\n" for i in range(1, 31)))
    repo.write("shop/old_name.py", "def helper():\n    return 1\n")
    base = repo.commit("base")
    repo.write(
        "shop/cart.py",
        "".join(f"line_{i} = {i * 10 if i in (5, 20) else i}\n" for i in range(1, 31) if i != 12),
    )
    repo.git("mv", "shop/old_name.py", "shop/new_name.py")
    repo.write("shop/new_name.py", "def helper():\n    return 2\n")
    repo.write("shop/total.py", "import os\n\n\ndef total(items):\n    return sum(items)\n")
    head = repo.commit("Cart changes")
    return pull_from_repo(repo, base, head, title="Cart changes")


def test_testgen_on_the_python_sample(
    image: Image, repo: GitRepo, llm: FakeOpenAI, shared: Path
) -> None:
    build_python_sample(repo)
    open_to_all(repo.path)
    path = "tests/test_nova_discount.py"
    llm.enqueue(*write_run_fix(path, HEADER + GOOD + WRONG, HEADER + GOOD + FIXED, []))
    result = image.run(
        "testgen",
        "HEAD",
        "--repo",
        "/src",
        "-q",
        "-o",
        "json",
        "--patch-dir",
        "/out",
        env=model_env(llm),
        mounts={repo.path: "/src", shared: "/out"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert {k["name"] for k in data["kept"]} == {"test_good", "test_fixed"}
    for kept in data["kept"]:
        assert kept["evidence"]["runs"] == 3 and kept["evidence"]["changed_lines_covered"]
    committed = repo.git("show", f"{data['branch']}:{path}")
    assert "def test_good" in committed and "def test_fixed" in committed
    assert list(shared.glob("nova-tests-*.patch"))
    assert repo.git("status", "--porcelain") == ""
