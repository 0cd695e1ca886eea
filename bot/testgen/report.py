"""What a testgen run reports: JSON (``--output json``), text, and the PR/revision body."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bot.change import Change
from bot.llm.usage import Stats
from bot.testgen.frameworks import Framework
from bot.testgen.gates import TestCase
from bot.testgen.matrix import Target

__all__ = ["EXIT_NOTHING_GENERATED", "TestgenResult"]

EXIT_NOTHING_GENERATED = 4


def _code(text: str) -> str:
    """A name from the repository or the model as inline code that cannot break out of its
    span or a table cell."""
    return "`" + text.replace("`", "'").replace("|", "/").replace("\n", " ") + "`"


@dataclass
class TestgenResult:
    change: Change
    framework: Framework | None = None
    environment: dict[str, str] = field(default_factory=dict)  # interpreter, and why
    isolation: dict[str, str] = field(default_factory=dict)  # the sandbox's name, and why
    matrix: list[Target] = field(default_factory=list)
    kept: list[TestCase] = field(default_factory=list)
    dropped: list[TestCase] = field(default_factory=list)
    branch: str | None = None
    patch: str | None = None
    mr_url: str | None = None
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    suite_passed: bool | None = None
    suite_preexisting: list[str] = field(default_factory=list)  # fail without Nova's tests
    suite_blamed: list[str] = field(default_factory=list)  # fail only with them
    suite_scope: str = ""  # why not the whole suite ran (too slow), or was not judged
    coverage_before: int | None = None  # changed lines the suite ran, before / after
    coverage_after: int | None = None
    stats: Stats = field(default_factory=Stats)
    # test file -> test function -> what each case calls, and what head and parent did
    facts: dict[str, dict[str, list[dict[str, object]]]] = field(default_factory=dict)

    def exit_code(self) -> int:
        """0: tests kept (or nothing to test); 1: tests were written, none was kept;
        4: nothing could be generated; 3: a service failed."""
        if self.errors:
            return 3
        if not self.matrix or self.kept:
            return 0
        return 1 if self.dropped else EXIT_NOTHING_GENERATED

    def catching(self) -> list[TestCase]:
        """Kept tests the same call tells apart on the parent (a run showed it)."""
        return [c for c in self.kept if c.evidence.get("catches_change")]

    def changed_lines(self) -> int:
        return sum(len(t.lines) for t in self.matrix)

    def to_dict(self) -> dict[str, Any]:
        s = self.stats
        return {
            "change": self.change.summary_dict(),
            "framework": self.framework.to_dict() if self.framework else None,
            "environment": self.environment,
            "isolation": self.isolation,
            "matrix": [t.to_dict() for t in self.matrix],
            "kept": [c.kept_dict() for c in self.kept],
            "dropped": [c.dropped_dict() for c in self.dropped],
            "branch": self.branch,
            "patch": self.patch,
            "mr_url": self.mr_url,
            "notes": self.notes,
            "errors": self.errors,
            "stats": {
                "proposed": len(self.kept) + len(self.dropped),
                "kept": len(self.kept),
                "dropped": len(self.dropped),
                "catching": len(self.catching()),
                "new_name": sum(bool(c.evidence.get("new_name")) for c in self.kept),
                "suite_passed": self.suite_passed,
                "suite_preexisting_failures": self.suite_preexisting,
                "suite_blamed_failures": self.suite_blamed,
                "suite_scope": self.suite_scope,
                "exit_code": self.exit_code(),
                "changed_lines": self.changed_lines(),
                "changed_lines_covered_before": self.coverage_before,
                "changed_lines_covered_after": self.coverage_after,
                **s.token_usage(),
                "seconds": s.seconds,
            },
        }

    def body(self) -> str:
        """Markdown for the pull request / revision: matrix, evidence, what was dropped."""
        out = [
            f"Tests for {self.change.id}: {self.change.title}".rstrip(": "),
            "",
            "| target | change | existing tests | uncovered changed lines | planned |",
            "|---|---|---|---|---|",
        ]
        for t in self.matrix:
            uncovered = (
                "not measured"
                if t.uncovered is None
                else (", ".join(map(str, t.uncovered)) or "none")
            )
            out.append(
                f"| {_code(t.path + '::' + t.qualname)} | {t.kind} | "
                f"{', '.join(t.existing_tests).replace('|', '/') or 'none'} | "
                f"{uncovered} | {t.planned()} |"
            )
        if self.environment:
            tool, path = next((k, v) for k, v in self.environment.items() if k != "why")
            out += ["", f"Tests ran with {tool} {_code(path)}: {self.environment.get('why', '')}."]
        if self.isolation:
            out += ["", f"Generated tests ran isolated by {self.isolation.get('why', '')}."]
        out += ["", "**Kept tests** (evidence):", ""]
        if not self.kept:
            out.append("- none")
        for c in self.kept:
            e = c.evidence
            bite = [f"kills mutant {e['mutant_killed']}"] if e.get("mutant_killed") else []
            if e.get("catches_change"):
                bite.append("catches the change: fails on the parent commit")
            elif e.get("new_name"):
                bite.append("tests a name new in this change (the parent lacks it)")
            elif e.get("unclaimed"):
                bite.append(str(e["unclaimed"]))
            out.append(
                f"- {_code(c.node_id)}: passed {e.get('runs')}x, covers "
                f"{e.get('changed_lines_covered')} changed line(s), {'; '.join(bite)}"
            )
            for f in e.get("calls") or []:  # type: ignore[attr-defined]
                out.append(
                    f"  - {_code(str(f['call']))} → {_code(str(f['head']))}"
                    + (f", before: {_code(str(f['parent']))}" if f.get("changed") else "")
                )
        if self.coverage_before is not None and self.coverage_after is not None:
            out += [
                "",
                f"Changed lines run by the suite: {self.coverage_before} → "
                f"{self.coverage_after} of {self.changed_lines()}.",
            ]
        if self.dropped:
            out += ["", "**Dropped**:", ""]
            out += [f"- {_code(c.node_id)}: {c.reason}" for c in self.dropped]
        if self.notes:
            out += ["", *[f"_{n}_" for n in self.notes]]
        return "\n".join(out) + "\n"

    def test_plan(self) -> str:
        runs = min((int(str(c.evidence.get("runs", 0))) for c in self.kept), default=0)
        return (
            f"Each test passed {runs} run{'s' * (runs != 1)} in a row, runs changed "
            "lines, and fails on a "
            "mutant of them or on the parent commit (see the summary). " + self._suite_said()
        )

    def _suite_said(self) -> str:
        if self.suite_passed is None:
            why = f": {self.suite_scope}" if self.suite_scope else ""
            return f"The project's suite was not judged with them{why}."
        scope = f" ({self.suite_scope})" if self.suite_scope else ""
        return f"The project's suite passed with them{scope}" + (
            f", apart from {len(self.suite_preexisting)} test(s) that fail without them too."
            if self.suite_preexisting
            else "."
        )

    def format(self, fmt: str) -> str:
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"
        text = self.body()
        where = self.mr_url or self.branch
        tail = (
            [f"Proposed: {where}" + (f" (patch {self.patch})" if self.patch else "")]
            if where
            else ["Nothing proposed."]
        )
        tail += [f"Error: {e}" for e in self.errors]
        return text + "\n" + "\n".join(tail) + "\n"
