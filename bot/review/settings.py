"""The review's settings: what is shown to the model and the analyzers, the gate, the limits
of one run. Most may come from the reviewed repository's ``.nova.toml`` (``repo_ok``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.sections import Section, boolean, globs, setting

if TYPE_CHECKING:
    from bot.analyzers.declared import DeclaredAnalyzer
    from bot.conversation.ignore import IgnoreRule
    from bot.diff.render import Style

__all__ = ["FAIL_ON", "ReviewSettings", "analyzer_list", "analyzer_names", "severity_pairs"]

FAIL_ON = ("never", "info", "warning", "error")


def analyzer_list(text: str) -> tuple[str, ...]:
    """Names of built-in analyzers, comma-separated; an unknown name is a ValueError."""
    from bot.analyzers.registry import MODULES

    names = globs(text)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        raise ValueError(f"unknown analyzer {unknown[0]!r} (known: {', '.join(MODULES)})")
    return names


def analyzer_names(text: str) -> str:
    """``auto``, ``none``, or a list of names (``ruff,shellcheck``), normalized."""
    names = globs(text)
    if len(names) == 1 and names[0] in ("auto", "none"):
        return names[0]
    return (
        ",".join(
            analyzer_list(",".join(n for n in names if n != "auto"))
            + (("auto",) if "auto" in names else ())
        )
        or "none"
    )


def severity_pairs(text: str) -> tuple[tuple[str, str], ...]:
    """``shellcheck=info,hadolint=warning`` as pairs; any analyzer name (a declared
    [[analyzer]]'s too), a severity of info, warning or error."""
    from bot.change import SEVERITIES

    pairs = []
    for item in globs(text):
        name, _, severity = item.partition("=")
        if severity.strip() not in SEVERITIES or not name.strip():
            raise ValueError(f"{item!r} is not NAME=SEVERITY (info, warning or error)")
        pairs.append((name.strip().lower(), severity.strip()))
    return tuple(pairs)


@dataclass(frozen=True)
class ReviewSettings(Section):
    llm_review: bool = setting(
        "NOVA_LLM_REVIEW",
        "Set to false to skip the model even when one is configured.",
        True,
        parse=boolean,
    )
    deadline: float = setting(
        "NOVA_REVIEW_DEADLINE",
        "Seconds the whole LLM review may take (every batch, retries included); then "
        "what was found so far is published and the unfinished batches are named.",
        600.0,
        parse=float,
        min=0,
        min_exclusive=True,
        key="review_deadline",
    )
    tool_timeout: float = setting(
        "NOVA_TOOL_TIMEOUT",
        "Seconds one context-tool call of the review agent (read a file, search the "
        "code, an MCP tool) may take; then the model is told it timed out.",
        30.0,
        parse=float,
        min=0,
        min_exclusive=True,
    )
    token_budget: int = setting(
        "NOVA_TOKEN_BUDGET",
        "Approximate diff tokens per review batch; bigger changes are split by file "
        "into batches that run concurrently.",
        24000,
        parse=int,
        repo_ok=True,
        min=1,
    )
    max_file_tokens: int = setting(
        "NOVA_MAX_FILE_TOKENS",
        "A single file's diff over this many tokens is skipped (listed in the summary).",
        24000,
        parse=int,
        repo_ok=True,
        min=1,
    )
    fail_on: str = setting(
        "NOVA_FAIL_ON",
        "Exit 1 when a placed or unplaced finding has at least this severity.",
        "never",
        parse=str,
        choices=FAIL_ON,
        repo_ok=True,
    )
    max_inline_comments: int = setting(
        "NOVA_MAX_INLINE_COMMENTS",
        "Most inline comments per run on GitHub and GitLab, most severe first (GitHub's "
        "abuse detection bites past ~30); the rest go to the summary.",
        30,
        parse=int,
        repo_ok=True,
        min=0,
    )
    diff_style: Style = setting(
        "NOVA_DIFF_STYLE",
        "How the numbered diff is shown to the model.",
        "compact",
        parse=str,
        choices=("compact", "labeled"),
        repo_ok=True,
    )
    extra_instructions: str = setting(
        "NOVA_EXTRA_INSTRUCTIONS",
        "Extra review instructions appended to the prompt (team conventions).",
        "",
        repo_ok=True,
    )
    exclude: tuple[str, ...] = setting(
        "NOVA_EXCLUDE",
        "Comma-separated gitignore-style patterns of files the model and the analyzers "
        "skip, added to the built-in ones (lockfiles, minified, generated, package "
        "metadata, vendored, snapshots, certificates and keys); '!pattern' "
        "re-includes.",
        (),
        parse=globs,
        repo_ok=True,
    )
    analyzers: str = setting(
        "NOVA_ANALYZERS",
        "Built-in analyzers to run on the changed files they apply to: 'auto' (every "
        "installed one: ruff, oxlint or the project's ESLint, shellcheck, actionlint, "
        "hadolint; docs/analyzers.md), a comma-separated list of names, or 'none' (also "
        "skips the [[analyzer]]s the repository declares).",
        "auto",
        parse=analyzer_names,
        repo_ok=True,
    )
    analyzers_off: tuple[str, ...] = setting(
        "NOVA_ANALYZERS_OFF",
        "Comma-separated built-in analyzers to turn off (e.g. 'hadolint,oxlint').",
        (),
        parse=analyzer_list,
        repo_ok=True,
    )
    analyzer_severity: tuple[tuple[str, str], ...] = setting(
        "NOVA_ANALYZER_SEVERITY",
        "The severity of an analyzer's findings, as NAME=SEVERITY pairs "
        "(e.g. 'shellcheck=info,actionlint=error'); unset: the tool's own levels.",
        (),
        parse=severity_pairs,
        repo_ok=True,
    )
    analyzer_timeout: float = setting(
        "NOVA_ANALYZER_TIMEOUT",
        "Seconds the built-in analyzers may take together (they run at once); one that "
        "is not done by then is named in the summary.",
        120.0,
        parse=float,
        min=0,
        min_exclusive=True,
        repo_ok=True,
    )
    analyzer_results: tuple[str, ...] = setting(
        "NOVA_ANALYZER_RESULTS",
        "Comma-separated linter results files to put on the diff, each FILE or "
        "FILE:FORMAT (sarif, rdjson, rdjsonl, checkstyle, eslint; detected when "
        "omitted).",
        (),
        parse=globs,
    )
    filter_mode: str = setting(
        "NOVA_FILTER_MODE",
        "Which analyzer findings are kept (as reviewdog's --filter-mode): added lines, "
        "any line of a hunk, anywhere in a changed file (outside the diff: summary "
        "only), or also other files (summary).",
        "added",
        parse=str,
        choices=("added", "diff_context", "file", "nofilter"),
        repo_ok=True,
    )
    handle: str = setting(
        "NOVA_HANDLE",
        "The name Nova answers to in comments (@nova dismiss, @nova review, …), besides "
        "its own login on the host.",
        "nova",
    )
    mcp_config: str | None = setting(
        "NOVA_MCP_CONFIG",
        "Path of an mcp.json whose servers lend the review agent extra tools; a server "
        "that fails to start is logged and skipped.",
    )
    # [[analyzer]] tables of the base revision's .nova.toml (bot.analyzers.declared)
    declared_analyzers: tuple[DeclaredAnalyzer, ...] = ()
    # [[ignore]] tables of the base revision's .nova.toml (bot.conversation.ignore)
    ignore_rules: tuple[IgnoreRule, ...] = ()
