"""The github host."""
