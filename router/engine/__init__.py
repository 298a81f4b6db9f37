"""The application object (``Engine``): serving an index, the turn, and the sessions."""

from router.engine.app import Engine

__all__ = ["Engine"]
