"""An exception whose message is long (issue 35): a path, a list of choices or the
configuration it read is in it, and that part is what a release changes (a cookie file
looked for under ``testnet3``, not ``testnet``), while the type stays the same. Messages
over 100 characters were not compared at all, so both sides "raised ValueError" alike.
Up to ``probe.MESSAGE_CHARS`` characters (one line, no address) are now compared and
matched. A real sample project (a git repository in tmp, its own virtualenv, real pytest
and coverage subprocesses) whose release changes the folder a long message names, and
rewords nothing else of another long message (it claims nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.testgen import probe
from tests.testgen.sample import caught, sample_testgen

STORE = '''import os

NETWORKS = {"main": "", "test": "testnet"}


def cookie_path(network, datadir=""):
    """Where the node keeps the cookie of a network."""
    folder = NETWORKS[network]
    return os.path.join(datadir, folder, ".cookie")


def read_cookie(network, datadir=""):
    path = cookie_path(network, datadir)
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read()
    except OSError as exc:
        raise ValueError(
            f"Cookie file unusable ({exc}) and no password is given in the "
            f"configuration of the {network} network (data directory {datadir!r})"
        ) from None


def check_port(port):
    if not 0 < port < 65536:
        raise ValueError(
            f"The port {port} is out of range: a port is a number from 1 to 65535, "
            "and the node listens on the one the configuration file names"
        )
    return port
'''
STORE_NEW = STORE.replace('"test": "testnet"', '"test": "testnet3"').replace(
    "if not 0 < port < 65536:", "if not (0 < port and port < 65536):"
)
TESTS = """import pytest

from node.store import check_port, cookie_path, read_cookie


def test_cookie_path():
    assert cookie_path("main").endswith(".cookie")


def test_read_cookie_without_a_file():
    with pytest.raises(ValueError):
        read_cookie("test", "nowhere")


def test_check_port():
    assert check_port(8332) == 8332
    with pytest.raises(ValueError):
        check_port(0)
"""


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("node"),
        {"node/__init__.py": "", "node/store.py": STORE, "tests/test_store.py": TESTS},
        {"node/store.py": STORE_NEW},
        "the test network's cookie under testnet3; the port check rewritten",
    )


@pytest.mark.slow
def test_a_change_in_a_long_message_is_caught(node: tuple[Any, dict[str, Any]]) -> None:
    _, data = node
    facts = caught(data, "read_cookie(")
    assert facts, data["notes"]
    assert any("testnet3" in str(f["head"]) and "testnet3" not in str(f["parent"]) for f in facts)


@pytest.mark.slow
def test_a_rewrite_that_keeps_a_long_message_claims_nothing(
    node: tuple[Any, dict[str, Any]],
) -> None:
    _, data = node
    assert not caught(data, "check_port("), data["kept"]


def test_a_long_message_is_kept_and_a_multiline_one_is_not() -> None:
    long = "x" * 150
    assert probe._message(ValueError(long)) == long
    assert probe._message(ValueError("x" * (probe.MESSAGE_CHARS + 1))) == ""
    assert probe._message(ValueError("a\nb")) == ""
    assert probe._message(ValueError("at 0x7f00")) == ""
