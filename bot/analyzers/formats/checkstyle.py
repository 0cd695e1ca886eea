"""Checkstyle XML (shellcheck ``-f checkstyle``, hadolint, ktlint, PHP_CodeSniffer, and
reviewdog's common denominator): ``<file name=…><error line= severity= message= source=/>``.

Read with the stdlib's expat, streaming, and any document type declaration is refused:
checkstyle never needs one, and a DTD is what entity tricks (billion laughs, external
entities) need. Refusing it does not depend on the expat version's own amplification
limits, and needs no extra dependency (defusedxml would do the same, as a package).
"""

from __future__ import annotations

import re
from xml.parsers import expat

from bot.analyzers.report import Finding, Report, ResultsError, clip, positive
from bot.change import Severity

__all__ = ["parse"]

_SEVERITY: dict[str, Severity] = {
    "error": "error",
    "warning": "warning",
    "info": "info",
    "style": "info",
}
_SHELLCHECK = re.compile(r"ShellCheck\.(SC\d+)")


class _Refused(Exception):
    pass


def _refuse(*_: object) -> None:
    raise _Refused("it declares a document type (DTD), which checkstyle never needs")


def _rule(source: str) -> tuple[str | None, str | None, str]:
    """(rule, url, tool) of an ``error``'s ``source``."""
    shellcheck = _SHELLCHECK.fullmatch(source)
    if shellcheck:
        code = shellcheck.group(1)
        return code, f"https://www.shellcheck.net/wiki/{code}", "shellcheck"
    return (clip(source, 200) or None), None, ""


def parse(data: bytes) -> list[Report]:
    report = Report(tool="")
    state: dict[str, str | None] = {"file": None, "root": None}

    def start(name: str, attrs: dict[str, str]) -> None:
        if state["root"] is None:
            state["root"] = name
            if name != "checkstyle":
                raise _Refused(f"the root element is <{name}>, not <checkstyle>")
        if name == "file":
            state["file"] = attrs.get("name") or None
            if state["file"]:
                report.paths.add(state["file"])
        elif name == "error" and state["file"]:
            _error(report, state["file"], attrs)

    def end(name: str) -> None:
        if name == "file":
            state["file"] = None

    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except _Refused as exc:
        raise ResultsError(f"not read as checkstyle XML: {exc}") from exc
    except expat.ExpatError as exc:
        raise ResultsError(
            f"not well-formed XML: {expat.ErrorString(exc.code)} (line {exc.lineno})"
        ) from exc
    return [report]


def _error(report: Report, path: str, attrs: dict[str, str]) -> None:
    level = attrs.get("severity", "warning").strip().lower()
    if level == "ignore":
        return
    rule, url, tool = _rule(attrs.get("source", "").strip())
    report.tool = report.tool or tool
    report.findings.append(
        Finding(
            path=path,
            line=positive(attrs.get("line", "").strip()),
            message=clip(attrs.get("message")),
            severity=_SEVERITY.get(level, "warning"),
            rule=rule,
            url=url,
        )
    )
