"""Nova listens on a REAL Phorge (issue 30): ``nova.differential.respond`` checked live.

Skipped unless ``PHORGE_SOURCE`` is set (see tests/e2e/test_phorge.py, whose ``phorge``
fixture this module shares). Each test makes a fresh revision by alice with bob as its
reviewer, installs both of Nova's Conduit extensions, and runs ``nova review`` /
``nova respond`` as the bot in a subprocess with a scripted model. A person's threaded
reply under Nova's inline needs Nova's extension too (stock Conduit only saves drafts
that nobody else sees): bob writes his replies through ``nova.differential.respond``,
exactly as Phorge's web UI would store them (``replyToCommentPHID`` set, published).
What everyone sees is read back as bob with ``transaction.search``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.phorge import D1_DIFF, ROOT, Phorge, Revision
from tests.e2e.test_phorge import phorge  # noqa: F401  (the shared module fixture)
from tests.servers.openai_server import FakeOpenAI, text

pytestmark = pytest.mark.slow

RESPOND = ROOT / "ci" / "phabricator" / "extension" / "NovaDifferentialRespondConduitAPIMethod.php"

# app/fmt.py of d1.diff: line 1 "import os", line 9 "    return eval(text)"
EVAL = {"path": "app/fmt.py", "line": 9, "code": "    return eval(text)", "severity": "error"}
UNUSED = {"path": "app/fmt.py", "line": 1, "code": "import os", "severity": "warning"}
BODIES = {"error": "E1 eval of untrusted input", "warning": "W1 unused import os"}

# d1.diff with the unused import gone: the eval line is now line 6 of app/fmt.py
FMT_OLD = """\
@@ -0,0 +1,9 @@
+import os
+
+
+def money(value):"""
FMT_NEW = """\
@@ -0,0 +1,6 @@
+def money(value):"""


def findings(*which: dict[str, Any]) -> str:
    return json.dumps(
        {
            "summary": "Tax and money formatting.",
            "comments": [{**w, "body": BODIES[str(w["severity"])]} for w in which],
        }
    )


def nova(server: Phorge, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    checkout = tmp_path / "no-checkout"
    checkout.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PHABRICATOR_URL": server.url,
        "PHABRICATOR_API_TOKEN": server.token("bot"),
    }
    return subprocess.run(
        [sys.executable, "-m", "bot", args[0], *args[1:2], "--repo", str(checkout), "-q"]
        + list(args[2:]),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def review(
    server: Phorge, llm: FakeOpenAI, rev: Revision, tmp_path: Path, answer: str
) -> subprocess.CompletedProcess[str]:
    llm.enqueue(text(answer))
    return nova(
        server, tmp_path, "review", f"D{rev.id}", "--publish", "phabricator", "--fail-on", "error"
    )


def install_both(server: Phorge) -> None:
    server.install_extension()
    (server.state / "phorge" / "src" / "extensions" / RESPOND.name).write_text(RESPOND.read_text())


def reviewed_revision(server: Phorge, llm: FakeOpenAI, tmp_path: Path, title: str) -> Revision:
    """A revision with bob as reviewer, reviewed once by Nova: the gate is shut (exit 1)."""
    install_both(server)
    rev = server.new_revision(title)
    server.call(
        "author",
        "differential.revision.edit",
        objectIdentifier=f"D{rev.id}",
        transactions=[{"type": "reviewers.add", "value": [server.phid("reader")]}],
    )
    first = review(server, llm, rev, tmp_path, findings(EVAL, UNUSED))
    assert first.returncode == 1, first.stderr
    return rev


def inlines(server: Phorge, rev: Revision) -> list[dict[str, Any]]:
    """Every published inline comment, oldest first, as bob reads them."""
    found: list[dict[str, Any]] = []
    after = None
    while True:
        params: dict[str, Any] = {"objectIdentifier": f"D{rev.id}", "limit": 100}
        if after:
            params["after"] = after
        page = server.call("reader", "transaction.search", **params)
        for tx in page["data"]:
            if tx["type"] != "inline":
                continue
            comment = tx["comments"][0]
            found.append(
                {
                    "id": comment["id"],
                    "phid": comment["phid"],
                    "author": tx["authorPHID"],
                    "raw": comment["content"]["raw"],
                    **tx["fields"],
                }
            )
        after = page["cursor"]["after"]
        if not after:
            break
    return sorted(found, key=lambda i: int(i["id"]))


def comments(server: Phorge, rev: Revision) -> list[str]:
    page = server.call("reader", "transaction.search", objectIdentifier=f"D{rev.id}", limit=100)
    return [
        tx["comments"][0]["content"]["raw"]
        for tx in page["data"]
        if tx["type"] == "comment" and tx["authorPHID"] == server.phid("bot")
    ]


def novas(server: Phorge, rev: Revision, body: str) -> dict[str, Any]:
    (found,) = [
        i
        for i in inlines(server, rev)
        if i["author"] == server.phid("bot") and not i["replyToCommentPHID"] and body in i["raw"]
    ]
    return found


def replies_under(server: Phorge, rev: Revision, parent: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        i
        for i in inlines(server, rev)
        if i["author"] == server.phid("bot") and i["replyToCommentPHID"] == parent["phid"]
    ]


def bob_replies(server: Phorge, rev: Revision, parent: dict[str, Any], body: str) -> str:
    made = server.call(
        "reader",
        "nova.differential.respond",
        revisionID=rev.id,
        replies=[{"replyTo": parent["phid"], "content": body}],
    )
    return str(made["replies"][0]["phid"])


def test_a_reviewers_dismissal_opens_the_gate_on_phorge(
    phorge: Phorge,  # noqa: F811
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    rev = reviewed_revision(phorge, llm_env, tmp_path, "conversation: dismiss")
    error = novas(phorge, rev, BODIES["error"])
    bob_replies(phorge, rev, error, "@nova dismiss not a bug")
    second = review(phorge, llm_env, rev, tmp_path, findings(EVAL, UNUSED))
    assert second.returncode == 0, second.stderr
    assert any(
        "dismissed" in line and "bob" in line and "not a bug" in line
        for summary in comments(phorge, rev)
        for line in summary.splitlines()
    ), comments(phorge, rev)[0][-1500:]
    (ack,) = replies_under(phorge, rev, error)  # Nova says so under the inline, once
    assert "//nova:re:" in ack["raw"]
    third = review(phorge, llm_env, rev, tmp_path, findings(EVAL, UNUSED))
    assert third.returncode == 0, third.stderr
    assert len(replies_under(phorge, rev, error)) == 1


def test_a_fixed_inline_is_marked_done_on_phorge(
    phorge: Phorge,  # noqa: F811
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    rev = reviewed_revision(phorge, llm_env, tmp_path, "conversation: fixed")
    assert FMT_OLD in D1_DIFF.read_text()
    new = phorge.call(
        "author",
        "differential.createrawdiff",
        diff=D1_DIFF.read_text().replace(FMT_OLD, FMT_NEW),
    )
    phorge.call(
        "author",
        "differential.revision.edit",
        objectIdentifier=f"D{rev.id}",
        transactions=[{"type": "update", "value": new["phid"]}],
    )
    moved = {**EVAL, "line": 6}
    again = review(phorge, llm_env, rev, tmp_path, findings(moved))
    assert again.returncode == 1, again.stderr  # the eval still stands
    warning, error = novas(phorge, rev, BODIES["warning"]), novas(phorge, rev, BODIES["error"])
    assert warning["isDone"] is True and error["isDone"] is False
    (fixed,) = replies_under(phorge, rev, warning)
    assert fixed["raw"].startswith("Fixed in")
    assert replies_under(phorge, rev, error) == []


def test_a_question_gets_exactly_one_threaded_answer_on_phorge(
    phorge: Phorge,  # noqa: F811
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    rev = reviewed_revision(phorge, llm_env, tmp_path, "conversation: question")
    error = novas(phorge, rev, BODIES["error"])
    question = bob_replies(phorge, rev, error, "@nova why is eval a problem here?")
    llm_env.enqueue(text("eval runs any code in the text: use ast.literal_eval or float()."))
    first = nova(phorge, tmp_path, "respond", f"D{rev.id}", "--comment", question)
    assert first.returncode == 0, first.stderr
    again = nova(phorge, tmp_path, "respond", f"D{rev.id}")  # every pending command: none
    assert again.returncode == 0, again.stderr
    (answer,) = replies_under(phorge, rev, error)
    assert "literal_eval" in answer["raw"]
    assert f"//nova:re:{question}//" in answer["raw"]
    assert answer["path"] == "app/fmt.py" and answer["line"] == 9


def test_a_reviewer_added_after_novas_comment_cannot_dismiss_on_phorge(
    phorge: Phorge,  # noqa: F811
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    """The author adds an accomplice as a reviewer after Nova's comment: Phorge's own
    reviewer transactions (transaction.search) tell Nova, and the dismissal is refused."""
    install_both(phorge)
    rev = phorge.new_revision("conversation: accomplice")
    first = review(phorge, llm_env, rev, tmp_path, findings(EVAL, UNUSED))
    assert first.returncode == 1, first.stderr
    phorge.call(
        "author",
        "differential.revision.edit",
        objectIdentifier=f"D{rev.id}",
        transactions=[{"type": "reviewers.add", "value": [phorge.phid("reader")]}],
    )
    error = novas(phorge, rev, BODIES["error"])
    bob_replies(phorge, rev, error, "@nova dismiss not a bug")
    second = review(phorge, llm_env, rev, tmp_path, findings(EVAL, UNUSED))
    assert second.returncode == 1, second.stderr  # the finding still counts
    (refusal,) = replies_under(phorge, rev, error)
    assert "a reviewer only since Nova's comment" in refusal["raw"]
