"""What a run's model calls cost: calls and tokens (plain data, no I/O)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Stats"]


@dataclass(slots=True)
class Stats:
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def add_usage(self, prompt: int, completion: int) -> None:
        self.llm_calls += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion

    def token_usage(self) -> dict[str, int]:
        """Calls and tokens, as events and reports name them."""
        return {
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
