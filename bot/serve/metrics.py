"""``/metrics`` in Prometheus' text format, read from the queue (so the counts survive a
restart and add up: submitted = queued + running + every ended job)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["render"]

_OUTCOMES = ("done", "failed", "timeout", "killed", "superseded")


def render(stats: Mapping[str, int], requests: Mapping[tuple[str, str], int]) -> str:
    by_state = {k.removeprefix("state:"): v for k, v in stats.items() if k.startswith("state:")}
    lines = [
        "# HELP nova_serve_queue_depth Jobs waiting to run.",
        "# TYPE nova_serve_queue_depth gauge",
        f"nova_serve_queue_depth {by_state.get('queued', 0)}",
        "# HELP nova_serve_running_jobs Jobs running now.",
        "# TYPE nova_serve_running_jobs gauge",
        f"nova_serve_running_jobs {by_state.get('running', 0) + by_state.get('cancelling', 0)}",
        "# HELP nova_serve_jobs_submitted_total Jobs queued since the queue was made.",
        "# TYPE nova_serve_jobs_submitted_total counter",
        f"nova_serve_jobs_submitted_total {sum(by_state.values())}",
        "# HELP nova_serve_jobs_total Jobs that ended, by outcome.",
        "# TYPE nova_serve_jobs_total counter",
    ]
    states = sorted(set(_OUTCOMES) | (set(by_state) - {"queued", "running", "cancelling"}))
    lines += [f'nova_serve_jobs_total{{outcome="{s}"}} {by_state.get(s, 0)}' for s in states]
    lines += [
        "# HELP nova_serve_superseded_total Jobs replaced or stopped by a newer head.",
        "# TYPE nova_serve_superseded_total counter",
        f"nova_serve_superseded_total {by_state.get('superseded', 0)}",
        "# HELP nova_serve_duplicates_total Deliveries that started no job (redelivered, "
        "or a head already queued).",
        "# TYPE nova_serve_duplicates_total counter",
        f"nova_serve_duplicates_total {stats.get('duplicates', 0)}",
        "# HELP nova_serve_requests_total Requests since start, by endpoint and status.",
        "# TYPE nova_serve_requests_total counter",
    ]
    lines += [
        f'nova_serve_requests_total{{endpoint="{e}",status="{s}"}} {n}'
        for (e, s), n in sorted(requests.items())
    ]
    return "\n".join(lines) + "\n"
