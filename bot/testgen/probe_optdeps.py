"""The side-runner of ``optdeps``: import each changed module of the plan afresh, as if an
optional library were not installed, in one tree (the change's head, or its parent), as

    python probe_optdeps.py PLAN.json OUT.json

with the project's interpreter, next to the differential generator's side-runner: standard
library only (the written test's helper does the same with ``monkeypatch``). The plan
names the modules, the project's top packages and the libraries to block. For each
module: its outcome with nothing blocked, then with each library blocked
(``sys.modules[name] = None`` for it and its loaded submodules, the project's modules
removed first so they are imported again); ``sys.modules`` is restored after each import.
An outcome is ``imported``, ``needs <library>`` (an ImportError naming the blocked library)
or the error's type and message with paths taken out.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
import typing

_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.@+-]+){2,}")
MESSAGE_CHARS = 200


def outcome_of(error: BaseException | None, blocked: str) -> str:
    """What importing gave: ``imported``, ``needs <blocked>``, or the error, no paths."""
    if error is None:
        return "imported"
    missing = getattr(error, "name", None) or ""
    if isinstance(error, ImportError) and (missing == blocked or missing.startswith(blocked + ".")):
        return f"needs {blocked}"
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {_PATH.sub('<path>', text)}"[:MESSAGE_CHARS]


def _fresh(module: str, packages: list[str], blocked: str) -> str:
    """Import ``module`` with the project's modules removed and ``blocked`` unimportable;
    ``sys.modules`` as it was afterwards."""
    saved = dict(sys.modules)
    try:
        for name in list(sys.modules):
            if _ours(name, packages):
                del sys.modules[name]
            elif _ours(name, [blocked]):
                sys.modules[name] = None  # type: ignore[assignment]
        if blocked:
            sys.modules[blocked] = None  # type: ignore[assignment]
        error: BaseException | None = None
        try:
            importlib.import_module(module)
        except (Exception, SystemExit) as exc:  # what the import does without it (a
            error = exc  # module may end the process: "pip install x[cli]", then exit)
        return outcome_of(error, blocked)
    finally:  # the project's fresh modules go; a library imported meanwhile stays
        for name in list(sys.modules):
            if name not in saved and _ours(name, [*packages, blocked]):
                del sys.modules[name]
        sys.modules.update(saved)


def _ours(name: str, tops: list[str]) -> bool:
    return any(t and (name == t or name.startswith(t + ".")) for t in tops)


def observe(plan: dict[str, typing.Any]) -> dict[str, dict[str, str]]:
    """module -> {"": its outcome with nothing blocked, library: its outcome without it}."""
    packages = [str(p) for p in plan.get("packages", [])]
    out: dict[str, dict[str, str]] = {}
    for module in plan.get("modules", []):
        seen = out[module] = {"": _fresh(module, packages, "")}
        if seen[""] != "imported":
            continue  # nothing to compare: it does not import at all here
        for blocked in plan.get("blocked", []):
            seen[blocked] = _fresh(module, packages, blocked)
    return out


def main() -> None:
    plan = json.loads(open(sys.argv[1], encoding="utf-8").read())
    out = {"modules": observe(plan)}
    with open(sys.argv[2], "w", encoding="utf-8") as handle:
        handle.write(json.dumps(out))


if __name__ == "__main__":
    main()
