"""Cutting dropped tests out of a JavaScript file, and JavaScript mutants: the scanner must
see through strings, template literals, comments and regex literals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.testgen.gates import mutants
from bot.testgen.jsscan import JsScanError, matching_close, statement_end
from bot.testgen.runners import PruneFailed, _remove_calls

# statements whose brackets, quotes and slashes would fool a naive bracket counter
TRICKY = [
    'const s = "a ) b }";',
    "const t = 'it(\\'x\\')';",
    'const u = `${f(")")} ( ${`nested ${g({ a: 1 })}`}`;',
    "assert.ok(/\\)+[(/]/.test(x));",
    "// ) a comment with ( and }",
    "/* ) ( } */",
    "const d = a / b / (c);",
    "if (x) { y(); }",
    "const o = { k: [1, (2)] };",
    "return xs.map((v) => v / 2);",
    "const r = typeof x === 'string' ? /[)}]/g : null;",
]
CALLEES = ["test", "it", "test.skip", "describe", "t.test"]
HEADER = 'const test = require("node:test");\nconst assert = require("node:assert");\n'


@st.composite
def js_files(draw: st.DrawFn) -> tuple[str, list[str], list[tuple[int, int]], list[bool]]:
    blocks: list[str] = []
    for i in range(draw(st.integers(1, 6))):
        callee = draw(st.sampled_from(CALLEES))
        body = draw(st.lists(st.sampled_from(TRICKY), max_size=4))
        inner = "".join(f"  {line}\n" for line in body)
        tail = draw(st.sampled_from([";", "", "; // done"]))
        blocks.append(f'{callee}("case {i} )", () => {{\n{inner}}}){tail}\n')
    keep = draw(st.lists(st.booleans(), min_size=len(blocks), max_size=len(blocks)))
    text = HEADER
    places: list[tuple[int, int]] = []
    for block in blocks:
        text += "\n"
        line = text.count("\n") + 1
        callee = block.split("(", 1)[0]
        places.append((line, len(callee) - len(callee.rsplit(".", 1)[-1]) + 1))
        text += block
    return text, blocks, places, keep


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(js_files())
def test_removing_calls_keeps_exactly_the_other_blocks(
    case: tuple[str, list[str], list[tuple[int, int]], list[bool]],
) -> None:
    text, blocks, places, keep = case
    out = _remove_calls(text, [p for p, k in zip(places, keep, strict=True) if not k])
    assert out.startswith(HEADER)
    for block, kept in zip(blocks, keep, strict=True):
        assert (block in out) is kept
    expected = HEADER + "".join(b for b, k in zip(blocks, keep, strict=True) if k)
    assert [r for r in out.split("\n") if r] == [r for r in expected.split("\n") if r]


def test_statement_end_follows_chained_calls_and_semicolons() -> None:
    src = 'test("a", () => { x(")"); }).then(() => done());\nnext();'
    assert src[statement_end(src, 0) :] == "\nnext();"
    assert matching_close("f(`${(1)}`)", 1) == 10


@pytest.mark.parametrize(
    "bad", ['test("a", () => {', "test(`x", "test(/x", "test('x\n')", "x = 1;"]
)
def test_unbalanced_or_non_call_text_is_an_error(bad: str) -> None:
    with pytest.raises(JsScanError):
        statement_end(bad, 0)


def test_a_test_that_shares_its_line_with_code_is_not_cut() -> None:
    text = HEADER + 'test("a", () => {}); foo();\n'
    with pytest.raises(PruneFailed, match="code follows"):
        _remove_calls(text, [(3, 1)])
    looped = HEADER + "for (const n of [1, 2]) test(`n${n}`, () => {});\n"
    with pytest.raises(PruneFailed, match="not a statement of its own"):
        _remove_calls(looped, [(3, 25)])


def test_javascript_mutants() -> None:
    got = dict(mutants("  if (percent < 0 && strict === true) { // 1 < 2", "javascript"))
    assert got["'<' -> '>='"] == "  if (percent >= 0 && strict === true) { // 1 < 2"
    assert got["'===' -> '!=='"] == "  if (percent < 0 && strict !== true) { // 1 < 2"
    assert got["'&&' -> '||'"] == "  if (percent < 0 || strict === true) { // 1 < 2"
    assert got["true -> false"] == "  if (percent < 0 && strict === false) { // 1 < 2"
    assert got["0 -> 1"] == "  if (percent < 1 && strict === true) { // 1 < 2"
    assert got["negated if"] == "  if (!(percent < 0 && strict === true)) { // 1 < 2"
    assert "1 -> 2" not in got and "2 -> 3" not in got  # the comment is not code
    back = dict(mutants("  return Math.max(0, total);", "javascript"))
    assert back["negated return"] == "  return !(Math.max(0, total));"
    # a word flip is a whole word only: `isTrue` is not `true`
    assert "True -> False" not in dict(mutants("x = isTrue(y)", "python"))
