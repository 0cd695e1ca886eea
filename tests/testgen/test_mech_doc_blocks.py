"""Calls read from the code blocks of a project's documentation (``inputs.doc_examples``):
a README that shows ``badge("play")`` in a fenced block gives the one name a function
accepts, where every drawn string is refused (`ValueError: unknown badge`) and no test of
the project calls it."""

from __future__ import annotations

from bot.testgen.inputs import doc_examples
from tests.testgen.sample import caught, sample_testgen

BADGES = '''\
_BADGES = {{"play": "M0 0L8 4L0 8Z", "stop": "M0 0H8V8H0Z"}}


def badge(name, size=1):
    """The badge ``name`` as a dict of SVG attributes."""
    path = _BADGES.get(name)
    if path is None:
        raise ValueError("unknown badge: %r" % (name,))
    {body}
'''

OLD = 'return {"d": path, "width": "%dem" % size}'
NEW = 'return {"d": path, "width": "%dem" % size, "class": "badge"}'
SAME = 'attrs = {"d": path}\n    attrs["width"] = "%dem" % size\n    return attrs'

README = """\
# badges

Usage:

```python
from badges import badge

badge("play", size=2)
```
"""


def _base() -> dict[str, str]:
    return {
        "badges/__init__.py": "from badges.core import badge\n",
        "badges/core.py": BADGES.format(body=OLD),
        "README.md": README,
        "tests/test_import.py": "import badges\n\n\ndef test_imports():\n    assert badges\n",
    }


def test_a_call_shown_in_a_readme_code_block_catches_the_change(tmp_path) -> None:  # type: ignore[no-untyped-def]
    change = {"badges/core.py": BADGES.format(body=NEW)}
    _, data = sample_testgen(tmp_path, _base(), change, "badges get a class")
    claims = caught(data, "badge('play'")
    assert claims, (data["notes"], data["kept"], data["dropped"])


def test_a_rewrite_with_the_same_values_claims_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    change = {"badges/core.py": BADGES.format(body=SAME)}
    _, data = sample_testgen(tmp_path, _base(), change, "rewrite", exits=(0, 1, 4))
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]


def test_code_blocks_of_markdown_and_rst_are_read_and_prompts_are_not_read_twice() -> None:
    md = (
        "```python\nfrom badges import badge\nbadge('play')\n```\n\n"
        "```\nnot { python\n```\n\n"
        "```py\n>>> badge('stop')\n```\n"
    )
    rst = (
        "Use it:\n\n.. code-block:: python\n   :linenos:\n\n"
        "    import badges\n    badges.badge('stop', size=3)\n\nMore text.\n"
    )
    docs = doc_examples({"README.md": md, "docs/use.rst": rst})
    assert "badge('play')" in docs["README.md (docs)"]
    # the prompt's call once (from the prompt), the block that does not parse left out
    assert docs["README.md (docs)"].count("badge('stop')") == 1
    assert "not {" not in docs["README.md (docs)"]
    assert "badges.badge('stop', size=3)" in docs["docs/use.rst (docs)"]
    assert "More text" not in docs["docs/use.rst (docs)"]
