"""The git host."""
