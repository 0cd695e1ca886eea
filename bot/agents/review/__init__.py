"""The LLM review agent."""

from bot.agents.review.graph import ReviewOutcome, review_change

__all__ = ["ReviewOutcome", "review_change"]
