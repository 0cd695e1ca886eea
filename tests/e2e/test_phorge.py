"""`nova review D<n> --publish phabricator` against a REAL Phorge, read back as another user.

Skipped unless ``PHORGE_SOURCE`` points at a Phorge checkout (with Arcanist beside it, or
``ARCANIST_SOURCE``): scripts/phorge/setup.sh then runs MariaDB, PHP's built-in server and
the daemons on 127.0.0.1 (installing the Debian packages when root). Each test makes a fresh
revision by alice (Herald starts the "Nova review" build plan on it), runs Nova as the bot in
a subprocess with a scripted model, and reads what bob sees: ``transaction.search``,
``differential.getrevisioncomments``, and the lint rows the server stores for the target.
Each test appends its row of the issue's table to ``$PHORGE_STATE/table.jsonl``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.phorge import Phorge, Revision, SetupImpossible, phorge_source
from tests.servers.openai_server import FakeOpenAI, text

pytestmark = pytest.mark.slow

# (path, new line, the line's text, a body nobody else would write)
FINDINGS = [
    ("app/cart.py", 1, "TAX = 0.2", "F1 tax rate is a magic number"),
    ("app/cart.py", 7, "        total += item.price * item.qty", "F2 qty may be missing"),
    ("app/cart.py", 12, "    return subtotal(items) * 1 + TAX", "F3 precedence: adds TAX"),
    ("app/fmt.py", 1, "import os", "F4 unused import"),
    ("app/fmt.py", 5, '    return "%.2f" % value', "F5 rounding of money"),
    ("app/fmt.py", 9, "    return eval(text)", "F6 eval of input"),
]


@pytest.fixture(scope="module")
def phorge() -> Iterator[Phorge]:
    source = phorge_source()
    if source is None:
        pytest.skip(
            "set PHORGE_SOURCE to a Phorge checkout (github phorgeit/phorge, with "
            "phorgeit/arcanist beside it) to run the end-to-end tests"
        )
    try:
        server = Phorge.up(source)
    except SetupImpossible as exc:
        pytest.skip(f"cannot run Phorge here: {exc}")
    yield server
    server.remove_extension()
    if server.started and not os.environ.get("PHORGE_KEEP"):
        server.down()


def answer() -> str:
    return json.dumps(
        {
            "summary": "Tax math changed.",
            "comments": [
                {"path": p, "line": n, "code": code, "body": body, "severity": "warning"}
                for p, n, code, body in FINDINGS
            ],
        }
    )


def nova(
    phorge: Phorge, llm: FakeOpenAI, rev: Revision, tmp_path: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    llm.enqueue(text(answer()))
    checkout = tmp_path / "no-checkout"
    checkout.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PHABRICATOR_URL": phorge.url,
        "PHABRICATOR_API_TOKEN": phorge.token("bot"),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "review",
            f"D{rev.id}",
            "--repo",
            str(checkout),
            "-q",
            "--publish",
            "phabricator",
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def seen_by_reader(phorge: Phorge, rev: Revision) -> dict[str, Any]:
    """What bob sees of the bot's work: inline comments (path, line, text) and comments."""
    bot = phorge.phid("bot")
    inlines, comments, after = [], [], None
    while True:
        params: dict[str, Any] = {"objectIdentifier": f"D{rev.id}", "limit": 100}
        if after:
            params["after"] = after
        page = phorge.call("reader", "transaction.search", **params)
        for tx in page["data"]:
            if tx["authorPHID"] != bot:
                continue
            raw = " ".join(c["content"]["raw"] for c in tx["comments"])
            if tx["type"] == "inline":
                inlines.append((tx["fields"]["path"], tx["fields"]["line"], raw))
            elif tx["type"] == "comment":
                comments.append(raw)
        after = page["cursor"]["after"]
        if not after:
            break
    legacy = phorge.call("reader", "differential.getrevisioncomments", ids=[rev.id], inlines=True)[
        str(rev.id)
    ]
    return {
        "inlines": inlines,
        "comments": comments,
        "legacy": [c["content"] for c in legacy if c["authorPHID"] == bot and c["content"]],
    }


def measure(seen: dict[str, Any]) -> dict[str, int]:
    on_line = sum(
        1
        for p, n, _c, body in FINDINGS
        if any(ip == p and il == n and body in raw for ip, il, raw in seen["inlines"])
    )
    in_summary = sum(1 for *_x, body in FINDINGS if any(body in c for c in seen["comments"]))
    anywhere = sum(
        1
        for *_x, body in FINDINGS
        if any(body in c for c in seen["comments"] + [r for *_y, r in seen["inlines"]])
    )
    return {
        "inline_on_line": on_line,
        "in_summary": in_summary,
        "only_in_summary": in_summary if not on_line else 0,
        "invisible": len(FINDINGS) - anywhere,
    }


def record(
    phorge: Phorge, mode: str, exit_code: int, seen: dict[str, Any], lint: int | None = None
) -> None:
    row = {"mode": mode, "exit": exit_code, **measure(seen), "lint_on_line": lint}
    with (phorge.state / "table.jsonl").open("a") as out:
        out.write(json.dumps(row) + "\n")


def lint_on_line(phorge: Phorge, target: str) -> int:
    rows = phorge.lint_rows(target)
    return sum(1 for p, n, *_ in FINDINGS if (p, n) in rows)


def test_without_the_extension_every_finding_is_in_the_summary(
    phorge: Phorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.remove_extension()
    rev = phorge.new_revision("no extension")
    run = nova(phorge, llm_env, rev, tmp_path)
    assert run.returncode == 0, run.stderr
    seen = seen_by_reader(phorge, rev)
    assert seen["inlines"] == [] and phorge.drafts(rev) == 0
    (summary,) = seen["comments"]
    changesets = {
        c["currentPath"]: c["id"]
        for c in phorge.call("reader", "differential.querydiffs", ids=[rev.diff_id])[
            str(rev.diff_id)
        ]["changes"]
    }
    for path, line, _code, body in FINDINGS:
        assert body in summary
        assert (
            f"{phorge.url}/D{rev.id}?id={rev.diff_id}#C{changesets[path]}NL{line} "
            f"| {path}:{line} ]]" in summary
        )  # the link goes to the finding's line
    assert any("F6 eval of input" in c for c in seen["legacy"])
    record(phorge, "no extension", run.returncode, seen)


def test_without_the_extension_a_build_gets_lint_once(
    phorge: Phorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.remove_extension()
    rev = phorge.new_revision("no extension + target")
    target = phorge.wait_for_target(rev)
    run = nova(phorge, llm_env, rev, tmp_path, "--harbormaster-target", target)
    assert run.returncode == 0, run.stderr
    seen = seen_by_reader(phorge, rev)
    assert all(body in seen["comments"][0] for *_x, body in FINDINGS)
    assert lint_on_line(phorge, target) == len(phorge.lint_rows(target)) == 6
    assert phorge.process_build(target) == "target/passed"
    record(
        phorge,
        "no extension + Harbormaster target",
        run.returncode,
        seen,
        lint_on_line(phorge, target),
    )
    forced = nova(phorge, llm_env, rev, tmp_path, "--harbormaster-target", target, "--force")
    assert forced.returncode == 0, forced.stderr
    assert len(phorge.lint_rows(target)) == 6  # --force on the same target adds no rows
    assert len(seen_by_reader(phorge, rev)["comments"]) == 1  # nothing new to say


def test_with_the_extension_every_finding_is_an_inline_on_its_line(
    phorge: Phorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.install_extension()
    rev = phorge.new_revision("extension")
    run = nova(phorge, llm_env, rev, tmp_path)
    assert run.returncode == 0, run.stderr
    seen = seen_by_reader(phorge, rev)
    assert measure(seen)["inline_on_line"] == 6 and len(seen["inlines"]) == 6
    # the summary lists what is NOT inline (issue 29's digest): here, nothing twice
    assert measure(seen)["in_summary"] == 0
    assert phorge.drafts(rev) == 0
    record(phorge, "extension", run.returncode, seen)


def test_with_the_extension_and_a_target(
    phorge: Phorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.install_extension()
    rev = phorge.new_revision("extension + target")
    target = phorge.wait_for_target(rev)
    run = nova(phorge, llm_env, rev, tmp_path, "--harbormaster-target", target)
    assert run.returncode == 0, run.stderr
    seen = seen_by_reader(phorge, rev)
    assert measure(seen)["inline_on_line"] == 6
    assert lint_on_line(phorge, target) == 6
    assert phorge.process_build(target) == "target/passed"
    record(
        phorge,
        "extension + Harbormaster target",
        run.returncode,
        seen,
        lint_on_line(phorge, target),
    )


def test_a_failing_extension_leaves_the_summary_no_drafts_and_its_message(
    phorge: Phorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.install_extension(broken="rollback")
    rev = phorge.new_revision("broken extension")
    failed = nova(phorge, llm_env, rev, tmp_path)
    assert failed.returncode == 3
    # the server's own message, not "Bad response status: 500"
    assert "getReplyToComment" in failed.stderr and "500" not in failed.stderr
    seen = seen_by_reader(phorge, rev)
    assert seen["inlines"] == [] and phorge.drafts(rev) == 0  # rolled back: nothing left
    (summary,) = seen["comments"]
    assert "inline comments were not posted" in summary
    assert all(body in summary for *_x, body in FINDINGS)
    record(phorge, "extension failing on the server", failed.returncode, seen)
    phorge.install_extension()
    again = nova(phorge, llm_env, rev, tmp_path)  # the failed run was incomplete: no --force
    assert again.returncode == 0, again.stderr
    seen = seen_by_reader(phorge, rev)
    # the repair posts the inline comments the failed run could not, each once (issue 27,
    # section 2); the failed run's summary keeps listing them, as it was written then
    assert measure(seen)["inline_on_line"] == 6 and len(seen["inlines"]) == 6
    inline = [raw for *_x, raw in seen["inlines"]]
    for *_x, body in FINDINGS:
        assert sum(text.count(body) for text in inline) == 1, body
    assert phorge.drafts(rev) == 0


def test_a_php_error_on_the_server_shows_its_message(
    phorge: Phorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.install_extension(broken="php-error")
    rev = phorge.new_revision("php error")
    failed = nova(phorge, llm_env, rev, tmp_path)
    assert failed.returncode == 3
    assert (
        "Error: Call to undefined method DifferentialTransactionEditor::setDisableEmail()"
        in failed.stderr
    )
    seen = seen_by_reader(phorge, rev)
    assert measure(seen)["in_summary"] == 6 and phorge.drafts(rev) == 0
    record(phorge, "extension with a PHP error", failed.returncode, seen)


def test_stale_drafts_are_discarded_never_published(
    phorge: Phorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.install_extension()
    rev = phorge.new_revision("stale drafts")
    for path, line, _code, _body in FINDINGS[:2]:  # what an older Nova left behind
        phorge.call(
            "bot",
            "differential.createinline",
            revisionID=rev.id,
            diffID=rev.diff_id,
            filePath=path,
            isNewFile=True,
            lineNumber=line,
            content="STALE DRAFT",
        )
    assert phorge.drafts(rev) == 2
    run = nova(phorge, llm_env, rev, tmp_path)
    assert run.returncode == 0, run.stderr
    seen = seen_by_reader(phorge, rev)
    assert phorge.drafts(rev) == 0
    assert not any("STALE DRAFT" in raw for *_x, raw in seen["inlines"])
    assert measure(seen)["inline_on_line"] == 6 and len(seen["inlines"]) == 6
