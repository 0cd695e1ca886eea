"""The LLM review agent."""

from bot.review.agent.graph import ReviewOutcome, review_change

__all__ = ["ReviewOutcome", "review_change"]
