"""Nova: a CI bot for code review and test generation."""

__version__ = "0.1.0"
