"""skill-router: a retrieval-gated Agent Skills router."""

__version__ = "0.1.0"
