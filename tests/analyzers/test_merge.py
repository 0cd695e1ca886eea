"""Merging the model's findings into the analyzers', and what stays out of the diff."""

from __future__ import annotations

from bot.analyzers.merge import combine, says_the_same
from bot.change import Comment
from bot.diff import anchor, parse_diff

DIFF = """diff --git a/web/app.js b/web/app.js
--- a/web/app.js
+++ b/web/app.js
@@ -3,3 +3,4 @@
 export function start(root) {
+  const unused = 42;
   if (root == null) {
     return;
"""
FILES = tuple(parse_diff(DIFF))
ESLINT = Comment(
    path="web/app.js",
    line=4,
    severity="error",
    origin="eslint",
    rule="no-unused-vars",
    url="https://eslint.org/docs/latest/rules/no-unused-vars",
    body="no-unused-vars: 'unused' is assigned a value but never used.",
)


def model(body: str, line: int = 4, severity: str = "warning") -> Comment:
    return Comment(
        path="web/app.js",
        line=line,
        body=body,
        severity=severity,  # type: ignore[arg-type]
        code="  const unused = 42;" if line == 4 else None,
    )


def test_the_model_naming_the_rule_or_saying_the_same_is_a_duplicate() -> None:
    assert says_the_same(ESLINT, "Remove it: it trips no-unused-vars.")
    assert says_the_same(ESLINT, "'unused' is assigned a value but is never used")
    assert not says_the_same(ESLINT, "This should check that root is an Element first.")
    assert not says_the_same(ESLINT, "Consider no-unused-vars-ish naming")  # not the rule


def test_a_duplicate_becomes_one_comment_with_the_higher_severity_and_both_texts() -> None:
    remark = model("`unused` is never used (no-unused-vars).", severity="error")
    to_anchor, held = combine([ESLINT], [remark], FILES)
    assert held == [] and len(to_anchor) == 1
    (merged,) = to_anchor
    assert (merged.origin, merged.rule, merged.url, merged.severity) == (
        "eslint",
        "no-unused-vars",
        ESLINT.url,
        "error",
    )
    assert merged.body.startswith(ESLINT.body) and "never used (no-unused-vars)" in merged.body
    warn = Comment(**{**ESLINT.to_dict(), "severity": "info"})
    (merged,) = combine([warn], [remark], FILES)[0]
    assert merged.severity == "error"  # the model's, when higher


def test_a_different_remark_on_the_same_line_stays_separate() -> None:
    remark = model("Magic number: name the constant.")
    to_anchor, _ = combine([ESLINT], [remark], FILES)
    assert to_anchor == [ESLINT, remark]


def test_a_remark_far_from_the_finding_is_not_merged() -> None:
    remark = model("'root' is assigned a value but never used.", line=6)
    to_anchor, _ = combine([ESLINT], [remark], FILES)
    assert len(to_anchor) == 2


def test_findings_outside_the_diff_go_to_the_summary_with_their_line() -> None:
    outside = Comment(path="web/app.js", line=40, body="eqeqeq: use ===", origin="eslint")
    other = Comment(path="web/legacy.js", line=1, body="x", origin="eslint")
    whole = Comment(path="web/app.js", line=None, body="file too long", origin="eslint")
    to_anchor, held = combine([outside, other, whole], [], FILES)
    assert to_anchor == []
    assert [(p.comment.line, p.placed) for p in held] == [(40, False), (1, False), (None, False)]
    assert "line 40 is outside the diff" in (held[0].reason or "")
    assert "not a file of this change" in (held[1].reason or "")


def test_an_analyzer_line_is_never_translated_as_an_old_number() -> None:
    files = tuple(
        parse_diff("""diff --git a/a.js b/a.js
--- a/a.js
+++ b/a.js
@@ -5,4 +5,2 @@
-gone();
-gone();
 kept7();
 kept8();
""")
    )
    finding = Comment(path="a.js", line=7, body="x", origin="eslint")  # new line 7: outside
    assert anchor([finding], files)[0].line == 5  # what anchor alone does with a model's number
    to_anchor, held = combine([finding], [], files)
    assert to_anchor == [] and held[0].reason == "line 7 is outside the diff (summary only)"
