"""Test generation: from a change to tests that pass, exercise the change, and bite."""
