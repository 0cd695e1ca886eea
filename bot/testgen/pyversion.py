"""The branches of a test's set-up that run on another Python version only.

Old test suites set their inputs up for Python 2 and 3 alike (``if sys.version_info <
(3, 0): self.key = 'k' else: self.key = b'k'``): a name bound in both branches is bound
twice, and the input reader (``inputs.assignments``) keeps only names bound once. The
branch this interpreter never runs binds nothing: the test's real inputs are read.
"""

from __future__ import annotations

import ast
import re
import sys

__all__ = ["dead_branches", "grown", "loops"]

_VERSION = re.compile(r"sys\.version_info(\.major|\.minor|\[[0-9:]+\])?")


def runs_here(test: ast.expr) -> bool | None:
    """What a comparison of ``sys.version_info`` (or its major, minor or a slice of it)
    with a literal answers on this interpreter; None for any other test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if not _VERSION.fullmatch(ast.unparse(test.left)):
        return None
    try:
        ast.literal_eval(test.comparators[0])  # a literal, nothing else, is compared
        code = compile(ast.Expression(test), "<version>", "eval")
        return bool(eval(code, {"__builtins__": {}, "sys": sys}))  # noqa: S307
    except (ValueError, TypeError, SyntaxError):
        return None


def dead_branches(body: list[ast.stmt]) -> set[int]:
    """The ids of the nodes in ``body`` that an ``if`` on the Python version never runs
    here (its body or its ``else``)."""
    dead: set[int] = set()
    for node in body:
        for sub in ast.walk(node):
            runs = runs_here(sub.test) if isinstance(sub, ast.If) else None
            if runs is None or not isinstance(sub, ast.If):
                continue
            for gone in sub.orelse if runs else sub.body:
                dead.update(id(n) for n in ast.walk(gone))
    return dead


def loops(body: list[ast.stmt]) -> list[ast.AST]:
    """The loops and nested functions in ``body`` (a name grown in one has no single
    value to read: it grows once per turn, or whenever the function is called)."""
    return [n for node in body for n in ast.walk(node) if isinstance(n, _REPEATED)]


_REPEATED = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def grown(value: ast.BinOp) -> ast.expr:
    """``x += tail`` read as one literal (``b"fox" + b"!" * (8 - len(b"fox") % 8)`` is
    ``b"fox!!!!!"``) when both sides are literals (small ones; ``len`` the only call);
    else the sum as written."""
    nodes = list(ast.walk(value))
    # the tests are untrusted: at most one repetition, of a short literal, a small number
    # of times (``b"x" * 4096 * 4096 * 4096`` would fill Nova's memory)
    small = sum(isinstance(n, ast.Mult) for n in nodes) <= 1 and all(
        not isinstance(n, ast.Pow)
        and not (isinstance(n, ast.Constant) and isinstance(n.value, int) and n.value > 4096)
        and not (
            isinstance(n, ast.Constant) and isinstance(n.value, str | bytes) and len(n.value) > 2000
        )
        and (not isinstance(n, ast.Call) or ast.unparse(n.func) == "len")
        for n in nodes
    )
    if not small:
        return value
    try:
        ast.literal_eval(value.left)  # what it grows is a literal
        code = compile(ast.fix_missing_locations(ast.Expression(value)), "<grown>", "eval")
        done = eval(code, {"__builtins__": {"len": len}})  # noqa: S307 (literals and len)
        literal = ast.Constant(done)
        ast.literal_eval(literal)
    except Exception:
        return value
    return literal if len(repr(done)) <= 2000 else value
