"""Static analyzers whose findings join the model's in the same placement path."""
