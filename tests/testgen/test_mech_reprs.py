"""Results whose repr is not a value are still compared and asserted (issue 35).

A real small project (a git repository in tmp, its own virtualenv, real pytest): its public
``parse`` returns a tree of the project's own node classes, with the default repr and no
``__eq__``; the release makes ``in`` a keyword instead of a comparison operator, which
changes the grouping of one node. `nova testgen` with no model must keep a test that fails on
the parent, built from the tree's structure (type names, items, attributes that render), and
never pin what differs between runs (an address, a value of the hash seed)."""

from __future__ import annotations

import collections
import dataclasses
import gc
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bot.testgen import probe
from bot.testgen.differential import _compare
from bot.testgen.probe_objects import Named, facts
from bot.testgen.render import Example, render_module
from tests.conftest import GitRepo
from tests.testgen.sample import sample_testgen

NODES = '''class Node:
    """A piece of a condition: its text, and a key that differs between runs."""

    def __init__(self, text):
        self.text = text
        self.key = hash(text)  # of the hash seed: never a value a test can pin


class Word(Node):
    pass


class Number(Node):
    def __init__(self, text):
        super().__init__(text)
        self.value = int(text)


class Keyword(Node):
    pass


class Operator(Node):
    pass


class Group(Node):
    def __init__(self, children):
        super().__init__(" ".join(c.text for c in children))
        self.children = children
        for child in children:
            child.parent = self  # a back-reference: the walk must not loop


class Comparison(Group):
    pass


class Clause(Group):
    pass
'''

PARSER = '''from query.nodes import Clause, Comparison, Keyword, Number, Operator, Word


def parse(text):
    """The condition ``text`` as a tree of nodes."""
    return Clause(_group([_token(word) for word in text.split()]))


def _token(word):
    if word.lower() in ("where", "and", "or", "not"):
        return Keyword(word)
    if word.lower() in ("=", "<", ">", "in"):
        return Operator(word)
    if word.isdigit():
        return Number(word)
    return Word(word)


def _group(tokens):
    out = []
    i = 0
    while i < len(tokens):
        if isinstance(tokens[i], Operator) and out and i + 1 < len(tokens):
            out[-1] = Comparison([out[-1], tokens[i], tokens[i + 1]])
            i += 2
            continue
        out.append(tokens[i])
        i += 1
    return out
'''
PARSER_NEW = PARSER.replace('("where", "and", "or", "not")', '("where", "and", "or", "not", "in")')
PARSER_NEW = PARSER_NEW.replace('("=", "<", ">", "in")', '("=", "<", ">")')

TESTS = """from query.parser import parse


def test_parse_keeps_the_text():
    tree = parse("where x = 1 and y in 2")
    assert tree.text == "where x = 1 and y in 2"
"""


@pytest.fixture(scope="module")
def query(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any], Path]:
    """The sample, its change, Nova's report on it, and where the patch went."""
    tmp = tmp_path_factory.mktemp("query")
    repo, data = sample_testgen(
        tmp,
        {
            "query/__init__.py": "",
            "query/nodes.py": NODES,
            "query/parser.py": PARSER,
            "tests/test_parser.py": TESTS,
        },
        {"query/parser.py": PARSER_NEW},
        "in is a keyword, not a comparison",
    )
    return repo, data, tmp


@pytest.mark.slow
def test_a_changed_tree_of_objects_with_default_reprs_is_caught(
    query: tuple[GitRepo, dict[str, Any], Path],
) -> None:
    repo, data, tmp = query
    caught = [c for c in data["kept"] if c["evidence"].get("catches_change")]
    assert caught, json.dumps({k: data[k] for k in ("notes", "kept", "dropped")}, indent=1)
    committed = repo.git("show", f"{data['branch']}:{caught[0]['path']}")
    # the grouping, by the nodes' type names, not by anything of one run
    assert (
        "assert [type(item).__name__ for item in actual.children] == "
        "['Keyword', 'Comparison', 'Keyword', 'Word', 'Keyword', 'Number']" in committed
    ), committed
    assert "0x" not in committed and ".key" not in committed, committed
    calls = [c["evidence"]["calls"][0] for c in caught]
    own = [c for c in calls if c["call"] == "parse('where x = 1 and y in 2')"]  # the tests'
    assert len(own) == 1, calls
    assert own[0]["parent"] == (
        "[type(item).__name__ for item in actual.children] was "
        "['Keyword', 'Comparison', 'Keyword', 'Comparison']"  # `y in 2` was a comparison
    )

    # checked apart from Nova: the kept file fails on the parent's tree, passes on head's
    check = tmp / "check"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(check)], check=True)
    python = str(repo.path / ".venv" / "bin" / "python")
    target = caught[0]["path"]
    outcome = {}
    for side, ref in (("head", data["branch"]), ("parent", "main~1")):
        subprocess.run(["git", "-C", str(check), "checkout", "-q", ref], check=True)
        if side == "parent":
            subprocess.run(
                ["git", "-C", str(check), "checkout", "-q", data["branch"], "--", target],
                check=True,
            )
        run = subprocess.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", target],
            cwd=check,
            capture_output=True,
            text=True,
        )
        outcome[side] = (run.returncode, run.stdout)
    assert outcome["head"][0] == 0, outcome["head"][1]
    assert outcome["parent"][0] == 1 and "AssertionError" in outcome["parent"][1], outcome


# -- the pieces -------------------------------------------------------------------------


@dataclasses.dataclass
class Cell:
    value: int
    note: object = None
    _cache: object = None


class Slotted:
    __slots__ = ("name", "parts", "_hidden", "unset")

    def __init__(self, name: str, parts: list[object]) -> None:
        self.name = name
        self.parts = parts
        self._hidden = object()


Pair = collections.namedtuple("Pair", "left right")


def _facts(value: object) -> dict[str, str]:
    return {e: v for e, v, _ in facts(value, probe.render)}


def test_facts_walk_slots_dataclasses_namedtuples_and_stop_at_back_references() -> None:
    root = Slotted("root", [Cell(1), Pair(Cell(2, object()), "x")])
    root.parts[0].note = root  # back to the top: not walked again
    found = _facts(root)
    assert found == {
        "type({r}).__name__": "'Slotted'",
        "{r}.name": "'root'",
        "type({r}.parts).__name__": "'list'",
        "[type(item).__name__ for item in {r}.parts]": "['Cell', 'Pair']",
        "len({r}.parts)": "2",
        "type({r}.parts[0]).__name__": "'Cell'",
        "{r}.parts[0].value": "1",
        "type({r}.parts[1]).__name__": "'Pair'",
        "type({r}.parts[1].left).__name__": "'Cell'",
        "{r}.parts[1].right": "'x'",
        "{r}.parts[1].left.value": "2",
        "type({r}.parts[1].left.note).__name__": "'object'",
    }
    assert not any("0x" in v for v in found.values())


def test_facts_are_bounded_and_name_no_address() -> None:
    chain: list[object] = []
    for n in range(50):  # deeper than the walk goes
        chain = [Cell(n, chain)]
    found = _facts(chain)
    assert 10 < len(found) < 60
    deep = _facts([Cell(n) for n in range(500)])
    assert len(deep) <= 400
    assert "[type(item).__name__ for item in {r}]" not in deep  # too long to list
    assert deep["len({r})"] == "500"
    found = _facts([object(), Cell(1)])
    assert found["[type(item).__name__ for item in {r}]"] == "['object', 'Cell']"
    assert not any("0x" in v for v in found.values())
    found = _facts({"a": Cell(1, object()), "b": 2, "where": str(Path.cwd() / "x")})
    assert found["list({r})"] == "['a', 'b', 'where']"
    assert (found["type({r}['a']).__name__"], found["{r}['b']"]) == ("'Cell'", "2")
    assert "{r}['where']" not in found  # this run's tree: head's and parent's differ


ROOTED = """class _Kind(tuple):
    def __getattr__(self, name):
        return _Kind(self + (name,))

    def __repr__(self):
        return ".".join(("Kind", *self))


Kind = _Kind()
"""


def test_a_repr_that_names_its_module_s_root_object_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kinds_sample.py").write_text(ROOTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    kinds_sample = importlib.import_module("kinds_sample")
    monkeypatch.setitem(sys.modules, "kinds_sample", kinds_sample)  # gone after the test
    shown = probe.render([(kinds_sample.Kind.Keyword, "in")])
    assert shown == ("[(Kind.Keyword, 'in')]", ["from kinds_sample import Kind"])


def _run(facts_: list[list[str]]) -> dict[str, Any]:
    outcome = {"kind": "object", "type": "Clause", "facts": [[e, v, []] for e, v in facts_]}
    return {"args": ["'x in 2'"], "kwargs": {}, "imports": [], "outcome": outcome}


def _side(result: dict[str, Any]) -> dict[str, Any]:
    return {"functions": {"parse": {"kind": "function", "results": [result]}}}


def test_only_facts_every_run_agrees_on_are_compared_and_the_structure_comes_first() -> None:
    names = "[type(item).__name__ for item in {r}.children]"
    head = [["type({r}).__name__", "'Clause'"], ["{r}.key", "11"], [names, "['Word', 'Keyword']"]]
    again = [head[0], ["{r}.key", "12"], head[2]]
    parent = [head[0], ["{r}.key", "13"], [names, "['Comparison']"]]
    parent_again = [head[0], ["{r}.key", "14"], parent[2]]
    first = _side(_run(head))
    chosen, note = _compare(
        "parse", first, [_side(_run(again))], [_side(_run(parent)), _side(_run(parent_again))]
    )
    assert note == "1 inputs: 1 where the parent differs, 0 where it agrees"
    assert chosen[0].outcome["facts"] == [[names, "['Word', 'Keyword']"]]
    assert chosen[0].before == names.replace("{r}", "actual") + " was ['Comparison']"
    # the same facts on both sides: a few of them guard it, never the key
    chosen, note = _compare(
        "parse", first, [_side(_run(again))], [_side(_run(head)), _side(_run(again))]
    )
    assert note == "1 inputs: 0 where the parent differs, 1 where it agrees"
    assert [f[0] for f in chosen[0].outcome["facts"]] == ["type({r}).__name__", names]


class Basket:
    def __init__(self) -> None:
        self.items: list[object] = []
        self.count = 0

    def add(self, name: str) -> None:
        self.items.append(Slotted(name, []))
        self.count += 1


def test_a_method_that_returns_none_is_seen_through_the_instance_it_changed() -> None:
    named = Named("method", Basket, "add", Basket.add)
    case = probe._Case(([], {}), [], (["ab"], {}), {}, "tests")
    outcome = probe.call(named, case, 1.0)
    assert outcome["kind"] == "object" and outcome["view"] == "after", outcome
    shown = {e: v for e, v, _ in outcome["facts"]}
    assert shown["{r}.count"] == "1"
    assert shown["[type(item).__name__ for item in {r}.items]"] == "['Slotted']"
    assert shown["{r}.items[0].name"] == "'ab'"
    example = Example(
        ["'ab'"],
        {},
        [],
        {"kind": "object", "view": "after", "facts": [["{r}.count", "1"]], "imports": []},
        before="{r}.count was 2".replace("{r}", "actual"),
        kind="method",
        owner="Basket",
        ctor={"args": [], "kwargs": {}},
    )
    text = render_module("shop", "shop.py", {"Basket.add": [example]}, {})
    assert (
        "def test_basket_add_changes_state():\n"
        "    # before this change: actual.count was 2\n"
        "    basket = Basket()\n"
        "    assert basket.add('ab') is None\n"
        "    actual = basket\n"
        "    assert actual.count == 1\n"
    ) in text


def test_an_input_the_parent_s_run_did_not_reach_is_not_called_new() -> None:
    head = _run([["type({r}).__name__", "'Clause'"], ["{r}.text", "'x in 2'"]])
    other = _run([["type({r}).__name__", "'Clause'"]])
    other["args"] = ["'y'"]  # the parent's run came to another input only, then ran out
    chosen, note = _compare("parse", _side(head), [_side(head)], [_side(other), _side(other)])
    assert chosen == []
    assert note == (
        "1 inputs: 0 where the parent differs, 0 where it agrees, "
        "1 not reached by the parent's runs (not compared)"
    )


def test_a_garbage_collector_callback_that_reads_the_clock_is_not_the_call_s_read() -> None:
    """hypothesis times garbage collections with a ``gc.callbacks`` function that reads
    ``time.perf_counter``; a collection set off within a probed call ran it there, and the
    call's value "depended on the clock" (a suite that had run property tests before)."""

    def timed(phase: str, info: dict[str, int]) -> None:
        time.perf_counter()

    gc.callbacks.append(timed)
    try:
        named = Named("method", Basket, "add", Basket.add)
        case = probe._Case(([], {}), [], (["ab"], {}), {}, "tests")
        with_collection = Named("function", None, "collected", _collected)
        outcome = probe.call(with_collection, probe._Case(([], {}), [], ([], {}), {}, ""), 1.0)
        assert outcome["kind"] == "value" and outcome["value"] == "0", outcome
        assert "clock" not in outcome and "pinned" not in outcome, outcome  # no read seen
        outcome = probe.call(named, case, 1.0)
        assert outcome["kind"] == "object", outcome
    finally:
        gc.callbacks.remove(timed)


def _collected() -> int:
    gc.collect()
    return 0
