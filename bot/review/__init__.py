"""The review feature: the stages' order (``pipeline``), the LangGraph reviewer and its
batches and tools (``agent``), what reaches the model (``filter``), and the result with its
verdict and exit code (``result``)."""
