"""Findings where GitLab shows them without Nova posting anything (besides the job log,
``bot.report.joblog``): a Code Quality report (CodeClimate JSON, ``artifacts: reports:
codequality:``), which the merge request widget shows. Used when the only credential is
``CI_JOB_TOKEN`` (it cannot write notes), and whenever ``NOVA_GITLAB_CODE_QUALITY`` names a
file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.report.fingerprint import finding_fingerprints
from bot.report.untrusted import clean_text
from bot.review.result import ReviewResult

__all__ = ["DEFAULT_REPORT", "code_quality", "write_code_quality"]

DEFAULT_REPORT = "gl-code-quality-report.json"
_SEVERITY = {"error": "critical", "warning": "major", "info": "info"}


def code_quality(result: ReviewResult) -> list[dict[str, Any]]:
    """The CodeClimate issues GitLab reads: fingerprint, severity, location.path and
    location.lines.begin (fingerprints from the line's text, never the model's words)."""
    issues = []
    # two findings on one line: GitLab wants distinct fingerprints
    for p, unique in zip(result.placements, finding_fingerprints(result), strict=True):
        issues.append(
            {
                "type": "issue",
                "check_name": p.comment.rule or f"nova-{p.comment.origin}",
                "description": clean_text(p.comment.body)[:2000],
                "categories": ["Bug Risk"],
                "severity": _SEVERITY[p.comment.severity],
                "fingerprint": unique,
                "location": {
                    "path": p.path or p.comment.path,
                    "lines": {"begin": (p.line if p.placed else p.comment.line) or 1},
                },
            }
        )
    return issues


def write_code_quality(result: ReviewResult, path: str | Path) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(code_quality(result), indent=1) + "\n", encoding="utf-8")
    return target
