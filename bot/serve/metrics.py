"""``/metrics`` in Prometheus' text format, read from the queue: the gauges from the jobs'
states, the counters from the queue's own counters (they survive restarts and pruning, and
add up: submitted = queued + running + every ended job, superseded included)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["render"]

_OUTCOMES = ("done", "failed", "timeout", "killed", "cancelled")


def render(stats: Mapping[str, int], requests: Mapping[tuple[str, str], int]) -> str:
    state = {k.removeprefix("state:"): v for k, v in stats.items() if k.startswith("state:")}
    outcomes = {k.removeprefix("outcome:"): v for k, v in stats.items() if k.startswith("outcome:")}
    outcomes["superseded"] = stats.get("superseded", 0)
    lines = [
        "# HELP nova_serve_queue_depth Jobs waiting to run.",
        "# TYPE nova_serve_queue_depth gauge",
        f"nova_serve_queue_depth {state.get('queued', 0)}",
        "# HELP nova_serve_running_jobs Jobs running now.",
        "# TYPE nova_serve_running_jobs gauge",
        f"nova_serve_running_jobs {state.get('running', 0) + state.get('cancelling', 0)}",
        "# HELP nova_serve_jobs_submitted_total Jobs queued.",
        "# TYPE nova_serve_jobs_submitted_total counter",
        f"nova_serve_jobs_submitted_total {stats.get('submitted', 0)}",
        "# HELP nova_serve_jobs_total Jobs that ended, by outcome.",
        "# TYPE nova_serve_jobs_total counter",
    ]
    for name in sorted(set(_OUTCOMES) | set(outcomes)):
        lines.append(f'nova_serve_jobs_total{{outcome="{name}"}} {outcomes.get(name, 0)}')
    lines += [
        "# HELP nova_serve_superseded_total Jobs replaced or stopped by a newer head.",
        "# TYPE nova_serve_superseded_total counter",
        f"nova_serve_superseded_total {stats.get('superseded', 0)}",
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
