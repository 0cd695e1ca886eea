"""Chat models by configuration (``provider:model``), token estimates, error mapping."""

from bot.llm.factory import PROVIDERS, estimate_tokens, make_chat_model, model_error

__all__ = ["PROVIDERS", "estimate_tokens", "make_chat_model", "model_error"]
