"""Tables of cases a test file binds to a name at its top, for the differential generator's
inputs (``inputs.py``), read, never run.

- ``@pytest.mark.parametrize("a, b", CASES)`` where ``CASES = [(1, 2), ...]`` is a plain
  literal bound once in the module (or in the test): its rows, as if written in the mark.
- ``f(x, **kwargs)`` where the row (or a name bound to a plain value) gives ``kwargs`` as
  a dict literal with text keys: its items as the call's keywords (``f(x, n_jobs=2)``).
"""

from __future__ import annotations

import ast

__all__ = ["rows_of", "spread"]


def rows_of(node: ast.expr, env: dict[str, ast.expr] | None) -> ast.expr:
    """A ``parametrize`` mark's cases: the literal a name stands for in ``env`` (names
    bound once to plain values), else the node as it is."""
    if isinstance(node, ast.Name) and env:
        bound = env.get(node.id)
        if isinstance(bound, ast.List | ast.Tuple):
            return bound
    return node


def spread(value: ast.expr) -> list[ast.keyword] | None:
    """The keywords ``**value`` gives when it is a dict literal with text keys (each
    once, each a Python name); None otherwise (the call is then not replayed)."""
    if not isinstance(value, ast.Dict):
        return None
    out: list[ast.keyword] = []
    for key, item in zip(value.keys, value.values, strict=True):
        if not (
            isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and key.value.isidentifier()
            and key.value not in {k.arg for k in out}
        ):
            return None
        out.append(ast.keyword(arg=key.value, value=item))
    return out
