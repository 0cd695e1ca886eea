"""The review feature: its result, verdict and exit code."""
