"""``nova doctor``: check configuration and the reachability of each configured service."""

from __future__ import annotations

import click

from bot.cli.common import load_from_flags


@click.command()
def doctor() -> None:
    """Check each configured service (model endpoint, GitHub, Phabricator, GitLab, Task
    Manager) and say what is missing; then what `nova testgen` finds on this machine (node, network
    isolation for generated tests), and which analyzers are installed (and their versions).
    Tokens are never printed.

    Exit codes: 0 every configured service is reachable, 3 one is not.
    """
    from bot.doctor import run_checks

    checks = run_checks(load_from_flags({}, None))
    mark = {True: "ok", False: "FAIL", None: "-"}
    for c in checks:
        click.echo(f"{mark[c.ok]:>4}  {c.name:<13} {c.target}: {c.detail}")
    if any(c.ok is False for c in checks):
        click.get_current_context().exit(3)
