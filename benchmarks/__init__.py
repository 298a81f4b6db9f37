"""skill-router's performance benchmark (outside the package): ``python -m benchmarks``."""
