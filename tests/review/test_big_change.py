"""Big changes at the speed of one model call (issue 18): one limiter for every request,
back-off on 429, the analyzers beside the model, findings kept as batches finish."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.change import Change
from bot.config import Settings, load_settings
from bot.events import EventBus, StepEvent, TextEvent
from bot.hosts.base import PrefetchingTree
from bot.hosts.git.source import GitSource, GitTree
from bot.review.pipeline import ReviewJob, run_review
from bot.review.result import ReviewResult
from bot.steps import StepTracker
from tests.conftest import GitRepo, run
from tests.servers.openai_server import FakeOpenAI, Reply, error, text, tool_call


def answer_for(body: dict[str, Any], summary: str = "") -> Reply:
    """One comment on line 1 of each file the prompt shows."""
    prompt = body["messages"][1]["content"]
    paths = re.findall(r"^File: (\S+) \(", prompt, re.M)
    return text(
        json.dumps(
            {
                "summary": summary or f"saw {', '.join(paths)}",
                "comments": [
                    {"path": p, "line": 1, "code": f"{p} line 0", "body": "look"} for p in paths
                ],
            }
        )
    )


def errors_of(data: dict[str, Any]) -> list[str]:
    return [ln[len("Error: ") :] for ln in data["summary"].splitlines() if ln.startswith("Error: ")]


def many_files(repo: GitRepo, count: int, *extra: str) -> list[str]:
    """``count`` files, one per directory, each too big to share a batch of budget 30
    (and the ``extra`` ones)."""
    repo.write("README", "x\n")
    repo.commit("base")
    paths = [f"d{i}/f{i}.txt" for i in range(count)]
    for p in [*paths, *extra]:
        repo.write(p, "".join(f"{p} line {n}\n" for n in range(12)))
    repo.commit("many files")
    return paths


@pytest.fixture
def big(repo: GitRepo, llm_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.setenv("NOVA_TOKEN_BUDGET", "30")
    monkeypatch.setenv("NOVA_ANALYZERS", "none")
    return llm_env


def test_requests_in_flight_reach_the_limit_and_never_exceed_it(
    repo: GitRepo, big: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    paths = many_files(repo, 9)
    monkeypatch.setenv("NOVA_MAX_CONCURRENCY", "3")
    together = threading.Barrier(3, timeout=20)  # answered only when 3 are in flight

    def reply(body: dict[str, Any]) -> Reply:
        together.wait()
        return answer_for(body)

    big.responder = reply
    events = tmp_path / "events.jsonl"
    result = run(
        "review", "--repo", str(repo.path), "-q", "-o", "json", "--events-file", str(events)
    )
    assert result.exit_code == 0, result.stderr
    assert big.max_in_flight == 3 and len(big.requests) == 9
    data = json.loads(result.stdout)
    assert sorted(c["path"] for c in data["comments"]) == sorted(paths)
    lines = [json.loads(line).get("content", "") for line in events.read_text().splitlines()]
    progress = [ln for ln in lines if "batches done" in ln]
    assert len(progress) == 9
    assert re.fullmatch(
        r"batch \d/9: 1 comments · 9/9 batches done, 0 in flight, 0 queued · "
        r"[\d,]+ tokens",
        progress[-1],
    )
    assert any(re.search(r"\d/9 batches done, \d in flight, [1-6] queued", ln) for ln in progress)


def test_a_429_with_retry_after_is_honoured_then_the_request_succeeds(
    repo: GitRepo, big: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    many_files(repo, 1)
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "2")
    big.enqueue(error(429, "rate limited", **{"retry-after-ms": "200"}))
    big.responder = answer_for
    events = tmp_path / "events.jsonl"
    result = run(
        "review", "--repo", str(repo.path), "-q", "-o", "json", "--events-file", str(events)
    )
    assert result.exit_code == 0, result.stderr
    assert [c["path"] for c in json.loads(result.stdout)["comments"]] == ["d0/f0.txt"]
    assert len(big.requests) == 2
    retries = [
        e["error"]
        for e in map(json.loads, events.read_text().splitlines())
        if "retrying" in e.get("error", "")
    ]
    assert retries == ["model request failed (HTTP 429), attempt 1 of 3; retrying in 0.2s"]
    (first, _), (second, _) = sorted(big.spans)
    assert second - first >= 0.2  # the server's wait, not a shorter backoff of our own


def test_a_rate_limit_that_outlasts_the_retries_says_what_to_change(
    repo: GitRepo, big: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    many_files(repo, 1)
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "1")
    monkeypatch.setenv("NOVA_MAX_CONCURRENCY", "5")
    big.responder = lambda body: error(429, "rate limited", **{"retry-after": "0"})
    result = run("review", "--repo", str(repo.path), "-q", "-o", "json")
    (problem,) = errors_of(json.loads(result.stdout))
    assert "HTTP 429" in problem and "after 2 attempts" in problem
    assert "lower NOVA_MAX_CONCURRENCY (now 5)" in problem
    assert len(big.requests) == 2


def test_a_model_failing_on_batch_k_of_n_keeps_the_batches_before_it(
    repo: GitRepo, big: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = many_files(repo, 4)
    monkeypatch.setenv("NOVA_MAX_CONCURRENCY", "1")  # batches in order: "before" is defined
    calls = iter(range(100))
    big.responder = lambda body: (
        answer_for(body) if next(calls) < 2 else error(500, "the model server fell over")
    )
    result = run("review", "--repo", str(repo.path), "-q", "-o", "json")
    data = json.loads(result.stdout)
    assert sorted(c["path"] for c in data["comments"]) == paths[:2]
    errors = errors_of(data)
    assert [e.split(" (")[0] for e in errors] == ["batch 3/4", "batch 4/4"]
    assert "HTTP 500" in errors[0]
    assert data["summary"].startswith(f"saw {paths[0]}\n\nsaw {paths[1]}\n")


# --- in process: a tree that takes part in the proof -----------------------------------------


class GatedTree(GitTree):
    """The head files; the analyzers' reads (their thread) wait for the model's first
    request, and reading ``z/boom.txt`` (a tool call) crashes the run."""

    def __init__(self, inner: GitTree, model_called: threading.Event) -> None:
        super().__init__(inner.repo, inner.rev)
        self.model_called = model_called
        self.analyzer_waited_for_model: bool | None = None

    def read_text(self, path: str) -> str | None:
        if path == "z/boom.txt":
            raise RuntimeError("the disk went away")
        if threading.current_thread().name.startswith("nova-analyze"):
            if self.analyzer_waited_for_model is None:
                self.analyzer_waited_for_model = self.model_called.wait(20)
        return super().read_text(path)


class GatedSource(GitSource):
    def __init__(self, repo: Path, model_called: threading.Event) -> None:
        super().__init__(repo)
        self.model_called = model_called
        self.trees: list[GatedTree] = []

    def tree(self, change: Change) -> GitTree | None:
        inner = super().tree(change)
        assert inner is not None
        self.trees.append(GatedTree(inner, self.model_called))
        return self.trees[-1]


@dataclass
class Session:
    settings: Settings
    source: GatedSource

    def publisher(self, *, force: bool) -> None:
        return None


class Kept:
    def __init__(self) -> None:
        self.results: list[ReviewResult] = []

    def publish(self, result: ReviewResult) -> None:
        self.results.append(result)


def review_in_process(
    repo: GitRepo, llm: FakeOpenAI, model_called: threading.Event, kept: Kept, **env: str
) -> tuple[GatedSource, EventBus]:
    settings = load_settings(
        env={
            "NOVA_LLM_MODEL": "openai:test-model",
            "NOVA_LLM_BASE_URL": llm.base_url,
            "NOVA_LLM_MAX_RETRIES": "0",
            "NOVA_TOKEN_BUDGET": "30",
            **env,
        }
    )
    source = GatedSource(repo.path, model_called)
    bus = EventBus()
    job = ReviewJob(
        settings=settings,
        session=Session(settings, source),
        ref="HEAD",
        repo=repo.path,
        bus=bus,
        tracker=StepTracker(bus),
    )
    run_review(job, [], [kept])
    return source, bus


def test_the_analyzers_run_while_the_model_reviews(repo: GitRepo, llm: FakeOpenAI) -> None:
    repo.write("a/one.py", "x = 1\n")
    repo.write("b/two.py", "y = 1\n")
    repo.commit("base")
    repo.write("a/one.py", "import os\nx = 2\n" + "".join(f"v{n} = {n}\n" for n in range(20)))
    repo.write("b/two.py", "import sys\ny = 2\n" + "".join(f"w{n} = {n}\n" for n in range(20)))
    repo.commit("two batches")
    model_called = threading.Event()

    def reply(body: dict[str, Any]) -> Reply:
        model_called.set()
        return text(json.dumps({"summary": "ok", "comments": []}))

    llm.responder = reply
    kept = Kept()
    source, bus = review_in_process(repo, llm, model_called, kept)
    (tree,) = source.trees
    assert tree.analyzer_waited_for_model is True  # ruff read the file after the model began
    (result,) = kept.results
    assert "F401" in {p.comment.body.split(":")[0] for p in result.placements}
    analyzed = next(
        e.timestamp
        for e in bus.history
        if isinstance(e, StepEvent) and e.step_name == "analyze" and e.status == "completed"
    )
    assert min(start for start, _ in llm.spans) < analyzed


def test_a_crash_late_in_the_run_still_outputs_what_was_found(
    repo: GitRepo, llm: FakeOpenAI
) -> None:
    paths = many_files(repo, 3, "z/boom.txt")
    calls = iter(range(100))

    def reply(body: dict[str, Any]) -> Reply:
        if next(calls) == 2:  # the third batch asks for a file: the tree crashes
            return tool_call("read_file", {"path": "z/boom.txt"})
        return answer_for(body)

    llm.responder = reply
    kept = Kept()
    with pytest.raises(RuntimeError, match="the disk went away"):
        review_in_process(
            repo, llm, threading.Event(), kept, NOVA_MAX_CONCURRENCY="1", NOVA_ANALYZERS="none"
        )
    (result,) = kept.results  # the output was still written, with the finished batches
    placed = {p.path for p in result.placements if p.line == 1}
    assert set(paths[:2]) <= placed and paths[2] not in placed
    assert result.summary.startswith(f"saw {paths[0]}\n\nsaw {paths[1]}")
    assert result.errors == [
        "the review stopped early (RuntimeError: the disk went away); this is what was found"
    ]


def test_progress_lines_are_plain_text_events(
    repo: GitRepo, big: FakeOpenAI, tmp_path: Path
) -> None:
    many_files(repo, 2)
    big.responder = answer_for
    events = tmp_path / "events.jsonl"
    result = run("review", "--repo", str(repo.path), "-o", "json", "--events-file", str(events))
    assert result.exit_code == 0
    texts = [
        e
        for e in map(json.loads, events.read_text().splitlines())
        if e["event_type"] == TextEvent.event_type and "batches done" in e["content"]
    ]
    assert len(texts) == 2
    assert "2/2 batches done, 0 in flight, 0 queued" in texts[-1]["content"]


def test_prefetched_files_read_as_they_would_one_by_one(repo: GitRepo) -> None:
    repo.write("README", "x\n")
    repo.commit("base")
    repo.write("dir/é ü.py", "print('ü')\n")
    repo.write("bin.dat", "a\x00b")
    repo.write("lat1.txt", "")
    (repo.path / "lat1.txt").write_bytes(b"caf\xe9\n")
    (repo.path / "link").symlink_to("README")
    repo.commit("files")
    source = GitSource(repo.path)
    change = source.fetch("HEAD")
    paths = [*(f.path for f in change.files), "missing.txt", "dir", "../out"]
    for rev in (change.head_ref, ":staged"):
        one_by_one, batched = GitTree(source.repo, rev), GitTree(source.repo, rev)
        assert isinstance(batched, PrefetchingTree)  # the pipeline prefetches through it
        batched.prefetch(paths)
        assert "lat1.txt" in batched._read  # served from the one cat-file run
        assert [batched.read_text(p) for p in paths] == [
            one_by_one.read_text(p) for p in paths[:-2]
        ] + [None, None]


def test_a_one_batch_change_waits_for_the_analyzers_and_shows_their_findings(
    repo: GitRepo, llm_env: FakeOpenAI
) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.write("a.py", "import os\nx = 2\n")
    repo.commit("unused import")
    llm_env.enqueue(text(json.dumps({"summary": "ok", "comments": []})))
    result = run("review", "--repo", str(repo.path), "-q", "-o", "json")
    assert result.exit_code == 0, result.stderr
    (request,) = llm_env.requests
    prompt = request["messages"][1]["content"]
    assert "Static analyzers already reported these" in prompt
    assert "a.py:1 F401" in prompt
