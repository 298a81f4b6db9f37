"""The checks a Route request passes before any work is done (pure). Each refusal says which
limit was hit and what to send instead; the limits are in ``router.skills.limits``."""

from __future__ import annotations

from dataclasses import replace

from router.config import RoutingConfig
from router.errors import InvalidRequest
from router.routing.model import CatalogFormat, RouteQuery
from router.skills.limits import (
    ACTIVE_SKILLS,
    CATALOG_BUDGET_CHARS,
    HISTORY_TURNS,
    MESSAGE_CHARS,
    REQUEST_NAME_CHARS,
)


def checked_query(query: RouteQuery, routing: RoutingConfig, history_used: int) -> RouteQuery:
    """``query`` with defaults filled; InvalidRequest when a part is empty, too large or out
    of range. ``history_used`` is how many earlier turns retrieval reads (for the message)."""
    if not query.message.strip():
        raise InvalidRequest("message is empty: send the user's latest message text")
    if len(query.message) > MESSAGE_CHARS:
        raise InvalidRequest(f"message has {len(query.message)} characters; the limit is "
                             f"{MESSAGE_CHARS}: send only the latest user turn")
    if len(query.history) > HISTORY_TURNS:
        raise InvalidRequest(f"history has {len(query.history)} turns; send at most "
                             f"{HISTORY_TURNS} (only the last {history_used} are used)")
    longest = max((len(turn) for turn in query.history), default=0)
    if longest > MESSAGE_CHARS:
        raise InvalidRequest(f"a history turn has {longest} characters; the limit is "
                             f"{MESSAGE_CHARS}: trim or drop long turns")
    if not 0 <= query.top_k <= routing.max_top_k:
        raise InvalidRequest(f"top_k must be between 0 (server default {routing.top_k}) "
                             f"and {routing.max_top_k}; got {query.top_k}")
    if not 0 <= query.max_catalog_chars <= CATALOG_BUDGET_CHARS:
        raise InvalidRequest(f"max_catalog_chars must be 0 (no budget) or up to "
                             f"{CATALOG_BUDGET_CHARS}; got {query.max_catalog_chars}")
    if not isinstance(query.format, CatalogFormat):
        raise InvalidRequest(f"unknown catalog format {query.format!r}")
    if len(query.revealed_skills) > ACTIVE_SKILLS:
        raise InvalidRequest(f"revealed_skills lists {len(query.revealed_skills)} names; the "
                             f"limit is {ACTIVE_SKILLS}: send the skills the model still sees")
    if any(not name or len(name) > REQUEST_NAME_CHARS for name in query.revealed_skills):
        raise InvalidRequest("revealed_skills holds an empty name or one over "
                             f"{REQUEST_NAME_CHARS} characters: send the names the catalog "
                             "showed")
    return replace(query, top_k=query.top_k or routing.top_k)
