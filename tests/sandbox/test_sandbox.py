"""The sandbox generated tests run in, on every isolation this machine allows: processes a
run leaves are named and killed, writes outside the workspace are named, HOME and TMPDIR
are fresh per run and removed, no token is seen; the checks that what is proposed is what
was checked; Nova's own git refuses a repository whose hooks or config changed."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bot.errors import ConfigError, ServiceError, SourceError
from bot.sandbox.run import (
    ISOLATIONS,
    Isolation,
    View,
    choose_isolation,
    run_sandboxed,
)
from bot.testgen import gates
from bot.testgen.frameworks import detect_framework, node_binary
from bot.testgen.gitstore import Store, UserRepo
from bot.testgen.runners import NodeTestRunner, PytestRunner
from bot.testgen.workspace import Workspace
from tests.conftest import GitRepo


def _available() -> list[str]:
    out = []
    for name in ISOLATIONS[1:]:
        try:
            out.append(choose_isolation(name).name)
        except ConfigError:
            continue
    return out


AVAILABLE = _available()  # "none" always works: the list is never empty

LEAVER = (
    "import os, pathlib, subprocess, sys\n"
    "for _ in range(5):\n"
    "    subprocess.Popen(['sleep', sys.argv[1]], start_new_session=True)\n"
    "pathlib.Path(os.environ['HOME'], '.bashrc').write_text('x')\n"
    "pathlib.Path(os.environ['TMPDIR'], 'scratch').write_text('fine')\n"
    "cache = pathlib.Path(os.environ['XDG_CACHE_HOME'], 'lib')\n"
    "cache.mkdir(parents=True)\n"
    "(cache / 'fonts.json').write_text('fine too')\n"
    "print(os.environ['HOME'], os.environ['TMPDIR'], sorted(os.environ))\n"
)


def alive(marker: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                state = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(cmdline.parent.name))
        except (OSError, IndexError):
            continue
    return found


@pytest.mark.parametrize("name", AVAILABLE)
def test_every_isolation_names_and_ends_what_a_run_left(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-sandboxsecret000001")
    marker = f"31{os.getpid() % 1000:03d}.{AVAILABLE.index(name)}"
    iso = choose_isolation(name)
    run = run_sandboxed([sys.executable, "-c", LEAVER, marker], tmp_path, isolation=iso, timeout=60)
    assert run.passed, run.output
    assert run.left_count == 5 and run.left[0] == f"sleep {marker}"
    assert alive(marker) == []
    assert run.outside == ("~/.bashrc",)  # TMPDIR is the run's own: writing there is fine
    escape = run.escape()
    assert escape and "left 5 process(es)" in escape and "~/.bashrc" in escape
    home, tmpdir, names = run.output.split(" ", 2)
    assert "GITLAB_TOKEN" not in names and "NOVA" not in names
    assert not Path(home).exists() and not Path(tmpdir).exists()  # removed after the run
    again = run_sandboxed([sys.executable, "-c", LEAVER, marker], tmp_path, isolation=iso)
    assert again.output.split(" ", 1)[0] != home  # fresh per run
    if name == "none":  # no PID namespace: Nova's /proc/<pid>/environ becomes root's
        import ctypes

        assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE


@pytest.mark.parametrize("name", AVAILABLE)
def test_a_timeout_ends_even_detached_processes(name: str, tmp_path: Path) -> None:
    marker = f"32{os.getpid() % 1000:03d}.{AVAILABLE.index(name)}"
    script = (
        "import subprocess, sys, time\n"
        "subprocess.Popen(['sleep', sys.argv[1]], start_new_session=True)\n"
        "time.sleep(60)\n"
    )
    run = run_sandboxed(
        [sys.executable, "-c", script, marker],
        tmp_path,
        isolation=choose_isolation(name),
        timeout=1,
    )
    assert run.timed_out and alive(marker) == []


def test_bubblewrap_confines_the_filesystem_or_says_it_cannot(tmp_path: Path) -> None:
    """Under bubblewrap the root is read-only, a hidden path is an empty directory whose
    writes are named, /tmp is looked into, and there is no network."""
    if "bubblewrap" not in AVAILABLE:
        with pytest.raises(ConfigError, match="does not work on this machine"):
            choose_isolation("bubblewrap")
        assert choose_isolation().name == AVAILABLE[0]
        return
    secret = tmp_path / "checkout"
    (secret / ".git").mkdir(parents=True)
    (secret / ".git" / "config").write_text("token = s3cret\n")
    work = tmp_path / "work"
    work.mkdir()
    script = (
        "import os, pathlib, socket\n"
        "out = []\n"
        "git = pathlib.Path(os.sys.argv[1]) / '.git'\n"
        "out.append('config-visible' if (git / 'config').exists() else 'config-hidden')\n"
        "(git / 'hooks').mkdir(parents=True)\n"
        "(git / 'hooks' / 'pre-push').write_text('x')\n"
        "pathlib.Path('/tmp/pwned').write_text('x')\n"
        "try:\n"
        "    pathlib.Path('/usr/pwned').write_text('x')\n"
        "except OSError as exc:\n"
        "    out.append(type(exc).__name__)\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 80), timeout=2)\n"
        "except OSError:\n"
        "    out.append('no-network')\n"
        "pathlib.Path('made-here').write_text('ok')\n"
        "print(' '.join(out))\n"
    )
    run = run_sandboxed(
        [sys.executable, "-c", script, str(secret)],
        work,
        isolation=choose_isolation("bubblewrap"),
        view=View(hidden=(secret,), writable=(work,)),
    )
    assert run.output.split() == ["config-hidden", "OSError", "no-network"], run.output
    assert set(run.outside) == {"/tmp/pwned", f"{secret}/.git/hooks/pre-push"}
    assert not (secret / ".git" / "hooks").exists()  # the real checkout is untouched
    assert (work / "made-here").read_text() == "ok"


def test_isolation_names_are_checked() -> None:
    with pytest.raises(ConfigError, match="one of auto, bubblewrap, unshare, none"):
        choose_isolation("docker")
    assert choose_isolation("none") == Isolation("none", choose_isolation("none").why)
    assert choose_isolation("none").to_dict()["why"].startswith("none: ")


# -- what is proposed is what was checked, and who did what --------------------------------
SELF = (
    "import pathlib\n\n\ndef test_me():\n    pathlib.Path(__file__).write_text('# mine now\\n')\n"
)
TWO = (
    "import subprocess, sys\n\n\n"
    "def test_clean():\n    assert 1 + 1 == 2\n\n\n"
    "def test_leaves():\n"
    "    subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
)


@pytest.fixture
def ws(repo: GitRepo):
    repo.write("pyproject.toml", "[tool.pytest.ini_options]\n")
    repo.write("m.py", "X = 1\n")
    repo.commit("base")
    with Workspace(repo.path, "HEAD", detect_framework(repo.path)) as ws:
        yield ws


@pytest.mark.slow
def test_a_test_file_that_changes_while_it_runs_is_dropped(ws: Workspace) -> None:
    assert not (ws.root / ".git").exists()  # nothing in the tree leads to the checkout
    rel = ws.write_test("tests/test_self.py", SELF)
    run = ws.run([*ws.framework.run_files, rel])  # type: ignore[union-attr]
    assert run.passed, run.output
    assert "changed while tests ran (run 1)" in ws.tampered[rel]
    assert ws.read(rel) == SELF  # Nova's text is back for the runs after
    cases = [gates.TestCase(rel, "test_me")]
    ws.distrust(rel, cases)
    assert cases[0].reason and cases[0].reason.startswith("the test file changed")
    ws.write_test(rel, "def test_me():\n    pass\n")  # new text is checked anew
    assert rel not in ws.tampered


@pytest.mark.slow
def test_the_test_that_left_processes_is_the_one_dropped(ws: Workspace) -> None:
    marker = f"33{os.getpid() % 1000:03d}.1"
    rel = ws.write_test("tests/test_two.py", TWO.replace("{marker}", marker))
    runner = PytestRunner(ws.framework)  # type: ignore[arg-type]
    out = runner.outcomes(ws, rel, ["test_clean", "test_leaves"])
    assert out == {"test_clean": True, "test_leaves": False}
    assert f"sleep {marker}" in ws.escapes[f"{rel}::test_leaves"]
    assert f"{rel}::test_clean" not in ws.escapes and alive(marker) == []


@pytest.mark.slow
def test_a_test_that_plants_a_conftest_is_dropped_and_the_file_removed(ws: Workspace) -> None:
    body = (
        "import pathlib\n\n\n"
        "def test_plants():\n"
        "    here = pathlib.Path(__file__).parent\n"
        "    (here / 'conftest.py').write_text('import pytest\\n')\n\n\n"
        "def test_fine():\n    assert True\n"
    )
    rel = ws.write_test("tests/test_plant.py", body)
    runner = PytestRunner(ws.framework)  # type: ignore[arg-type]
    assert runner.outcomes(ws, rel, ["test_plants", "test_fine"]) == {
        "test_plants": False,
        "test_fine": True,
    }
    assert "changed how tests run: wrote tests/conftest.py" in ws.escapes[f"{rel}::test_plants"]
    assert not (ws.root / "tests" / "conftest.py").exists()
    with ws.replaced({"pyproject.toml": "[tool.pytest.ini_options]\n# the parent's\n"}):
        assert ws.run([sys.executable, "-c", "pass"]).planted == ()  # Nova's own change


@pytest.mark.slow
@pytest.mark.skipif(node_binary() is None, reason="node is not installed")
def test_node_tests_that_misbehave_are_dropped_too(repo: GitRepo) -> None:
    repo.write("package.json", '{"name": "p", "scripts": {"test": "node --test"}}\n')
    repo.write("test/a.test.js", 'require("node:test")("a", () => {});\n')
    repo.commit("base")
    marker = f"34{os.getpid() % 1000:03d}.1"
    body = (
        'const test = require("node:test");\n'
        'const fs = require("node:fs");\n'
        'const os = require("node:os");\n'
        'const { spawn } = require("node:child_process");\n'
        'test("clean", () => {});\n'
        'test("leaves", () => {\n'
        f'  spawn("sleep", ["{marker}"], {{ detached: true, stdio: "ignore" }}).unref();\n'
        "});\n"
        'test("writes home", () => {\n'
        '  fs.writeFileSync(os.homedir() + "/.npmrc", "//registry/:_authToken=x");\n'
        "});\n"
    )
    selfish = (
        'require("node:test")("me", () => {\n'
        '  require("node:fs").appendFileSync(__filename, "//");\n'
        "});\n"
    )
    with Workspace(repo.path, "HEAD", detect_framework(repo.path)) as ws:
        rel = ws.write_test("test/b.test.js", body)
        runner = NodeTestRunner(ws.framework)  # type: ignore[arg-type]
        assert runner.outcomes(ws, rel, ["clean", "leaves", "writes home"]) == {
            "clean": True,
            "leaves": False,
            "writes home": False,
        }
        assert "left 1 process(es)" in ws.escapes[f"{rel}::leaves"]
        assert "~/.npmrc" in ws.escapes[f"{rel}::writes home"]
        assert f"{rel}::clean" not in ws.escapes and alive(marker) == []
        other = ws.write_test("test/c.test.js", selfish)
        assert runner.outcomes(ws, other, ["me"]) == {"me": True}
        assert "changed while tests ran" in ws.tampered[other]


# -- Nova's own git ------------------------------------------------------------------------
def test_nova_runs_no_git_in_a_repository_whose_hooks_changed(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("a.py", "A = 1\n")
    head = repo.commit("base")
    user = UserRepo.open(repo.path)
    assert user.show(head, "a.py") == "A = 1\n"
    hook = repo.path / ".git" / "hooks" / "reference-transaction"
    hook.write_text("#!/bin/sh\ntouch " + str(repo.path / "ran") + "\n")
    hook.chmod(0o755)
    with pytest.raises(SourceError, match="changed while generated tests ran"):
        user.show(head, "a.py")
    mine = tmp_path / "tmp"
    mine.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(mine))
    with pytest.raises(SourceError, match="changed while generated tests ran"):
        Store(user)
    assert list(mine.iterdir()) == []  # a refused store leaves nothing behind
    assert not (repo.path / "ran").exists()


def test_the_proposal_is_made_from_the_checked_bytes_in_a_fresh_store(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write("a.py", "A = 1\n")
    head = repo.commit("base")
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\ntouch " + str(repo.path / "ran") + "\n")
    hook.chmod(0o755)
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    user = UserRepo.open(repo.path)  # the hook is the user's own: it is fingerprinted
    store = Store(user)
    try:
        sha = store.commit(head, {"tests/test_a.py": b"def test_a(): pass\n"}, "nova/t", "m")
        assert "+def test_a(): pass" in store.patch(sha)
        store.branch_into_user_repo("nova/t")
        store.push(str(origin), "nova/t")
    finally:
        store.remove()
    assert repo.git("show", "nova/t:tests/test_a.py") == "def test_a(): pass\n"
    pushed = subprocess.run(
        ["git", "-C", str(origin), "rev-parse", "nova/t"], capture_output=True, text=True
    )
    assert pushed.stdout.strip() == sha
    assert not (repo.path / "ran").exists()  # no hook ran
    assert repo.git("status", "--porcelain") == "" and "nova" not in repo.git(
        "rev-parse", "--abbrev-ref", "HEAD"
    )


def test_a_push_sends_the_token_as_a_header_and_never_shows_it(
    repo: GitRepo, tmp_path: Path
) -> None:
    """Against a local HTTP server that records git's requests and refuses them."""
    import base64
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[tuple[str, str | None]] = []

    class Refuse(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append((self.path, self.headers.get("Authorization")))
            self.send_response(403)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    repo.write("a.py", "A = 1\n")
    head = repo.commit("base")
    token = "glpat-pushsecret000000001"
    url = f"http://oauth2:stale-job-token@127.0.0.1:{server.server_port}/a/b.git"
    repo.git("remote", "add", "origin", url)
    repo.write("tests/test_a.py", "def test_a():\n    pass\n")
    with Workspace(repo.path, head, detect_framework(repo.path)) as ws:
        assert ws.user.origin == url
        ws.write_test("tests/test_a.py", "def test_a():\n    assert True\n")
        ws.commit("nova/t", "m")
        with pytest.raises(ServiceError) as failed:
            ws.push(url, "nova/t", ("oauth2", token))
    server.shutdown()
    server.server_close()
    basic = "Basic " + base64.b64encode(f"oauth2:{token}".encode()).decode()
    assert seen and seen[0][0].endswith("/info/refs?service=git-receive-pack")
    assert {auth for _, auth in seen} == {basic}  # the URL's stale credentials are not sent
    assert token not in str(failed.value) and "stale-job-token" not in str(failed.value)


@pytest.mark.parametrize(
    ("remote", "pushed"),
    [
        ("git@github.com:acme/shop.git", "https://github.com/acme/shop.git"),
        ("ssh://git@gitlab.example:2222/g/p.git", "https://gitlab.example/g/p.git"),
        ("https://gitlab-ci-token:job@gitlab.example/g/p.git", "https://gitlab.example/g/p.git"),
        ("https://github.com/acme/shop", "https://github.com/acme/shop"),
        ("/srv/git/shop.git", None),
    ],
)
def test_a_token_pushes_over_https_without_the_urls_credentials(
    remote: str, pushed: str | None
) -> None:
    from bot.testgen.workspace import token_url

    assert token_url(remote) == pushed
