"""Test amplification of a difference whose values are too long to assert whole: a
streaming reader fed a document one character at a time, its accumulated output read
after each (every value up to the first difference is far too long together), and the
same document read once at its end (one long text that differs in its middle). The
written test asserts only the occurrence where the parent's value first differs, and of
a long value only the part where it differs; both catch the change. A change that leaves
the values alike claims nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bot.testgen.amplify_window import part
from bot.testgen.amplify_write import Difference, amplified_module, amplified_test
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

SCANNER = '''
class Scanner:
    """Reads a document a character at a time; completes what it has read so far."""

    def __init__(self):
        self.chars = []
        self.quoted = False

    def feed(self, ch):
        if ch == '"':
            self.quoted = not self.quoted
        elif ch == "/" and self.quoted:
            return None
        self.chars.append(ch)
        return None

    def complete(self):
        text = "".join(self.chars)
        return text + '"' if self.quoted else text
'''

# the change: a "/" inside a quoted string is kept (a backslash is dropped instead)
SCANNER_NEW = SCANNER.replace('elif ch == "/" and', 'elif ch == "\\\\" and')
assert SCANNER_NEW != SCANNER

ROWS = "".join(f'    "key{i}": "value number {i} of the feed",\n' for i in range(14))
TESTS = f'''
from feed.core import Scanner


def test_complete_after_each_character():
    document = """{{
{ROWS}    "home": "https://example.org/feed",
    "last": "done"
}}"""
    scanner = Scanner()
    for ch in document:
        scanner.feed(ch)
        text = scanner.complete()
        assert text.count('"') % 2 == 0


def test_complete_document():
    document = """{{
{ROWS}    "home": "https://example.org/feed",
{ROWS}    "last": "done"
}}"""
    scanner = Scanner()
    for ch in document:
        scanner.feed(ch)
    text = scanner.complete()
    assert text.endswith("}}")
'''


def _run(tmp: Any, new: str, message: str) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp,
        {"feed/__init__.py": "", "feed/core.py": SCANNER, "tests/test_core.py": TESTS},
        {"feed/core.py": new},
        message,
    )
    return data


@pytest.fixture(scope="module")
def scanner(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("feed"), SCANNER_NEW, "a slash in a string is kept")


def _patch(data: dict[str, Any]) -> str:
    """The kept tests' patch."""
    assert data["patch"], data["notes"]
    return Path(data["patch"]).read_text(encoding="utf-8")


def test_a_call_in_a_loop_asserts_only_where_the_parent_first_differs(
    scanner: dict[str, Any],
) -> None:
    facts = [
        f
        for f in amplified(scanner, "complete() in a loop")
        if "test_complete_after_each_character" in f["amplifies"]
    ]
    assert facts, scanner["notes"]
    # the value of one call, and of it only the window where the "/" is kept
    assert facts[0]["call"].startswith("got[")
    assert "example.org/" not in facts[0]["parent"] and "https:/" in facts[0]["head"]
    patch = _patch(scanner)
    assert "in the loop is the first where the parent's differs" in patch, patch
    assert f"+    assert {facts[0]['call'].split(' (')[0]} == " in patch, patch


def test_a_long_value_outside_a_loop_asserts_the_part_that_differs(
    scanner: dict[str, Any],
) -> None:
    facts = [f for f in amplified(scanner, "text[") if "test_complete_document" in f["amplifies"]]
    assert facts, scanner["notes"]
    assert "example.org/" in facts[0]["head"]
    assert len(facts[0]["head"]) < 200, facts[0]
    patch = _patch(scanner)
    assert "the value is long: only the part where the parent's differs" in patch, patch


def test_a_change_that_leaves_the_values_alike_claims_nothing(tmp_path: Path) -> None:
    same = SCANNER.replace('text = "".join(self.chars)', "text = ''.join(c for c in self.chars)")
    files = {"feed/__init__.py": "", "feed/core.py": SCANNER, "tests/test_core.py": TESTS}
    _repo, data = sample_testgen(
        tmp_path, files, {"feed/core.py": same}, "the text is joined otherwise", exits=(0, 1, 4)
    )
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]
    # the tests that run the changed line were observed on both sides, and agreed
    assert any(re.match(r"amplify: [1-9]\d* of \d+ tests", n) for n in data["notes"]), data
    assert "amplify: 0 test(s) got another value on the parent" in data["notes"], data["notes"]


# -- the writer alone, on recorded outcomes --------------------------------------------


def _value(value: object) -> dict[str, Any]:
    return {"kind": "value", "value": repr(value), "imports": []}


LOOP = """
def test_stream():
    s = Stream()
    for ch in DOC:
        s.push(ch)
        assert s.text()
"""


def _stream(doc: str, keep: int) -> Difference:
    """The outcomes of ``s.text()`` after each character: the parent drops each "/"."""
    head = [doc[: i + 1] for i in range(keep)]
    parent = [t.replace("/", "") for t in head]
    k = doc.index("/")
    d = Difference("t.py::test_stream", 6, "Stream.text", k, _value(head[k]), _value(parent[k]))
    d.series = ([_value(t) for t in head], [_value(t) for t in parent])
    return d


def test_the_first_differing_occurrence_is_asserted_when_all_are_too_long() -> None:
    doc = "x" * 60 + "\nurl: a/b\n" + "y" * 100
    d = _stream(doc, len(doc))
    written = amplified_test(LOOP, d)
    assert not isinstance(written, str), written
    text = amplified_module(LOOP, [(["test_stream"], written)])
    compile(text, "t.py", "exec")
    k = doc.index("/")
    assert f"    assert got[{k}] == {doc[: k + 1]!r}" in text
    assert f"call {k + 1} of {len(doc)} in the loop" in text


def test_a_long_occurrence_is_asserted_by_the_window_where_it_differs() -> None:
    doc = "".join(f"line {i}\n" for i in range(60)) + "url: a/b\n" + "y" * 10
    d = _stream(doc, len(doc))
    written = amplified_test(LOOP, d)
    assert not isinstance(written, str), written
    k = doc.index("/")
    start = doc.index("url:")
    assert written.lines[-1] == f"    assert got[{k}][{start}:] == 'url: a/'"
    assert "only the part of its long value" in written.lines[-2]


def test_a_parent_that_calls_fewer_times_is_told_by_the_count() -> None:
    head = [_value("z" * n) for n in range(1, 400)]
    d = Difference("t.py::test_stream", 6, "Stream.text", 398, head[-1], {"kind": "raises"})
    d.series = (head, head[:-1])
    written = amplified_test(LOOP, d)
    assert not isinstance(written, str), written
    assert written.lines[-1] == "    assert len(got) == 399"


def test_an_object_in_a_loop_is_asserted_by_its_fact_that_differs_at_that_call() -> None:
    def made(size: int) -> dict[str, Any]:
        return {"kind": "object", "repr": None, "facts": [["len({r}.items)", str(size), []]]}

    head = [made(1), made(2), made(3)]
    parent = [made(1), made(2), made(2)]
    d = Difference("t.py::test_stream", 6, "Stream.text", 2, head[2], parent[2])
    d.series = (head, parent)
    written = amplified_test(LOOP, d)
    assert not isinstance(written, str), written
    assert written.lines[-1] == "    assert len(got[2].items) == 3"
    assert "call 3 of 3 in the loop" in written.lines[-2]


def test_a_list_is_narrowed_to_its_first_differing_element_then_to_a_window() -> None:
    mine = [{"name": f"n{i}", "text": "a" * 90} for i in range(5)]
    theirs = [dict(m) for m in mine]
    theirs[3]["text"] = "a" * 50 + "b" + "a" * 39
    found = part("rows", repr(mine), _value(theirs))
    assert found is not None
    assert found.check == f"assert rows[3] == {mine[3]!r}"  # short: whole
    # a long text inside: its window
    mine[3]["text"] = "a" * 500
    theirs[3]["text"] = "a" * 300 + "b" + "a" * 199
    found = part("rows", repr(mine), _value(theirs))
    assert found is not None and found.expr == "rows[3]['text'][260:340]"
    # one side's elements begin the other's: the length
    found = part("rows", repr(mine), _value(mine[:4]))
    assert found is not None and found.check == "assert len(rows) == 5"


def test_no_part_is_claimed_where_the_values_do_not_differ() -> None:
    text = "q" * 800
    assert part("v", repr(text), _value(text)) is None
    # the same items in another order: no item differs, nor the length
    items = {f"k{i}": i for i in range(60)}
    assert part("v", repr(items), _value(dict(reversed(items.items())))) is None
    # equal as values but written otherwise: their repr tells
    found = part("v", repr([1] * 200), _value([1.0] * 200))
    assert found is not None and found.check == "assert repr(v[0]) == '1'"
    # the parent's value has no source form: not known where it differs
    assert part("v", repr(text), {"kind": "object", "facts": []}) is None


def test_a_long_value_whose_parent_is_unknown_is_not_asserted_whole() -> None:
    source = "def test_t():\n    v = make()\n    assert v\n"
    head = _value("w" * 3000)
    d = Difference("t.py::test_t", 2, "make", 0, head, {"kind": "object", "facts": []})
    assert "too long" in str(amplified_test(source, d))
