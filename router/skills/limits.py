"""Limits on what a skill may put in front of a model, shared by indexing and rendering.

The Agent Skills specification caps a description at 1,024 characters. A longer one is cut to
that length when the skill is indexed (with a warning naming the original length), and the
catalog renderer applies the same cut to records from older indexes, so one skill can never
inflate every Route or ListSkills reply.
"""

from __future__ import annotations

MAX_DESCRIPTION_CHARS = 1024
"""The spec's limit on ``description``; longer ones are truncated in the index and catalog."""
ELLIPSIS = "\u2026"


def truncate_description(text: str, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, ending with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[:max(limit - len(ELLIPSIS), 0)].rstrip() + ELLIPSIS
