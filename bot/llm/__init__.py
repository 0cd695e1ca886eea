"""Chat models by configuration (``provider:model``), token estimates, error mapping.

Nothing is imported here: ``bot.llm.factory`` loads LangChain, ``bot.llm.usage`` is plain data.
"""
