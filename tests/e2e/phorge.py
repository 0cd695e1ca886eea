"""A real local Phorge for the end-to-end tests: set up by scripts/phorge/setup.sh.

``Phorge.up()`` runs the (idempotent) setup script and reads the seed it wrote: the URL,
users with API tokens (``author`` alice, ``bot`` nova-bot, ``reader`` bob, ``admin``).
``call(role, method, **params)`` is Conduit as that user; ``sql`` reads the database the
server renders from (lint rows and drafts have no Conduit read method).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "phorge" / "setup.sh"
EXTENSION = (
    ROOT / "ci" / "phabricator" / "extension" / "NovaDifferentialPublishConduitAPIMethod.php"
)
D1_DIFF = ROOT / "scripts" / "phorge" / "d1.diff"


class SetupImpossible(Exception):
    """The machine cannot run Phorge (the script said so with exit code 2)."""


@dataclass
class Revision:
    id: int
    phid: str
    diff_id: int
    diff_phid: str
    target: str | None = None


@dataclass
class Phorge:
    state: Path
    seed: dict[str, Any] = field(default_factory=dict)
    started: bool = False

    @classmethod
    def up(cls, source: str) -> Phorge:
        state = Path(os.environ.get("PHORGE_STATE") or "/tmp/nova-phorge")
        env = {**os.environ, "PHORGE_SOURCE": source, "PHORGE_STATE": str(state)}
        was_running = (state / "web.pid").is_file()
        proc = subprocess.run(
            ["bash", str(SETUP), "up"], env=env, capture_output=True, text=True, timeout=900
        )
        if proc.returncode == 2:
            raise SetupImpossible(proc.stderr.strip().splitlines()[-1])
        if proc.returncode != 0:
            raise RuntimeError(f"setup.sh failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        seed = json.loads(Path(proc.stdout.strip().splitlines()[-1]).read_text())
        return cls(state=state, seed=seed, started=not was_running)

    def down(self) -> None:
        subprocess.run(
            ["bash", str(SETUP), "down"],
            env={**os.environ, "PHORGE_STATE": str(self.state)},
            capture_output=True,
            timeout=120,
        )

    @property
    def url(self) -> str:
        return str(self.seed["url"])

    def token(self, role: str) -> str:
        return str(self.seed["users"][role]["token"])

    def phid(self, role: str) -> str:
        return str(self.seed["users"][role]["phid"])

    # -- Conduit as a user ---------------------------------------------------------------
    def call(self, role: str, method: str, **params: Any) -> Any:
        import requests

        params["__conduit__"] = {"token": self.token(role)}
        answer = requests.post(
            f"{self.url}/api/{method}",
            params={"__conduit__": "1"},
            data={"params": json.dumps(params), "output": "json"},
            timeout=60,
        ).json()
        if answer.get("error_code"):
            raise RuntimeError(f"{method}: {answer['error_code']}: {answer['error_info']}")
        return answer["result"]

    def new_revision(self, title: str) -> Revision:
        """A revision by alice from d1.diff; Herald starts the Nova build plan on it."""
        diff = self.call("author", "differential.createrawdiff", diff=D1_DIFF.read_text())
        edit = self.call(
            "author",
            "differential.revision.edit",
            transactions=[
                {"type": "update", "value": diff["phid"]},
                {"type": "title", "value": title},
                {"type": "summary", "value": "Adds tax."},
                {"type": "testPlan", "value": "Ran it."},
            ],
        )
        return Revision(
            id=int(edit["object"]["id"]),
            phid=edit["object"]["phid"],
            diff_id=int(diff["id"]),
            diff_phid=diff["phid"],
        )

    def wait_for_target(
        self, rev: Revision, status: str = "target/waiting", seconds: float = 120
    ) -> str:
        """The PHID of the revision's build target once it has ``status`` (the daemons
        run the build: this polls, bounded)."""
        deadline = time.monotonic() + seconds
        while True:
            target = self._target(rev)
            if target and target[1] == status:
                return target[0]
            if time.monotonic() > deadline:
                raise TimeoutError(f"D{rev.id}: no build target in {status} ({target})")
            time.sleep(0.5)

    def _target(self, rev: Revision) -> tuple[str, str] | None:
        buildables = self.call(
            "admin", "harbormaster.buildable.search", constraints={"objectPHIDs": [rev.diff_phid]}
        )["data"]
        if not buildables:
            return None
        builds = self.call(
            "admin",
            "harbormaster.build.search",
            constraints={"buildables": [buildables[0]["phid"]]},
        )["data"]
        if not builds:
            return None
        targets = self.call(
            "admin", "harbormaster.target.search", constraints={"buildPHIDs": [builds[0]["phid"]]}
        )["data"]
        if not targets:
            return None
        return targets[0]["phid"], targets[0]["fields"]["status"]["value"]

    # -- what the database holds ------------------------------------------------------------
    def sql(self, query: str) -> list[list[str]]:
        out = subprocess.run(
            [
                "mariadb",
                "--no-defaults",
                f"--socket={self.state / 'mysql.sock'}",
                "-u",
                "root",
                "-N",
                "-B",
                "-e",
                query,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return [line.split("\t") for line in out.splitlines() if line]

    def lint_rows(self, target: str) -> list[tuple[str, int]]:
        rows = self.sql(
            "SELECT path, line FROM nova_harbormaster.harbormaster_buildlintmessage"
            f" WHERE buildTargetPHID = '{target}'"
        )
        return [(path, int(line)) for path, line in rows]

    def drafts(self, rev: Revision, role: str = "bot") -> int:
        """Unpublished inline comments by ``role`` on ``rev``: nobody else ever sees them."""
        rows = self.sql(
            "SELECT COUNT(*) FROM nova_differential.differential_transaction_comment "
            f"WHERE revisionPHID = '{rev.phid}' AND authorPHID = '{self.phid(role)}' "
            "AND transactionPHID IS NULL AND isDeleted = 0"
        )
        return int(rows[0][0])

    # -- Nova's extension ----------------------------------------------------------------
    def install_extension(self, *, broken: str = "") -> None:
        """Copy the extension into src/extensions/ (PHP's server reads it on each request).
        ``broken="rollback"``: a variant that fails inside Differential's editor after it
        has saved the inline comments (their reply-to is never attached), to prove the
        rollback; ``broken="php-error"``: the call the old extension crashed on, a PHP
        ``Error`` that Phorge renders as HTML unless the request says ``__conduit__``."""
        text = EXTENSION.read_text()
        if broken == "rollback":
            text = text.replace("->attachReplyToComment(null);", ";")
        elif broken == "php-error":
            text = text.replace("->setIsSilent(", "->setDisableEmail(")
        assert text != EXTENSION.read_text() or not broken
        (self.state / "phorge" / "src" / "extensions" / EXTENSION.name).write_text(text)

    def remove_extension(self) -> None:
        (self.state / "phorge" / "src" / "extensions" / EXTENSION.name).unlink(missing_ok=True)

    def process_build(self, target: str) -> str:
        """Let the daemons take Nova's message: wait until the target leaves 'waiting'."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = self.call(
                "admin", "harbormaster.target.search", constraints={"phids": [target]}
            )["data"]
            status = str(found[0]["fields"]["status"]["value"])
            if status != "target/waiting":
                return status
            time.sleep(0.5)
        raise TimeoutError(f"{target} still waiting")


def phorge_source() -> str | None:
    """PHORGE_SOURCE when it is a Phorge checkout and the tools to run it may exist."""
    source = os.environ.get("PHORGE_SOURCE")
    if not source or not (Path(source) / "webroot" / "index.php").is_file():
        return None
    if shutil.which("bash") is None:
        return None
    return source
