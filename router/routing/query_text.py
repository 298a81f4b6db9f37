"""A turn's message as retrieval reads it (pure): the ``/name`` mentions taken out, the texts
to embed (its sentences, the recent history) and the vectors assembled from their embeddings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from router.routing.fusion import FusionConfig, history_text, mix_history, pool, query_views
from router.routing.model import RouteQuery

_EXPLICIT = re.compile(r"(?:^|(?<=\s))[/$]([A-Za-z0-9][A-Za-z0-9_-]{0,127})(?=$|[\s.,:;!?)])")


@dataclass(frozen=True)
class QueryVectors:
    """The encoded turn: one row per view of ``query_views`` (row 0, the whole message, already
    mixed with recent history)."""

    views: tuple[str, ...]
    matrix: np.ndarray


@dataclass(frozen=True)
class TurnTexts:
    """What a turn embeds, in one call: ``texts`` (the sentences, or the whole message, then
    the recent history when it counts), for the ``views`` of ``query_views``."""

    views: tuple[str, ...]
    texts: tuple[str, ...]
    past: str


def turn_texts(text: str, history: Sequence[str], fusion: FusionConfig) -> TurnTexts:
    """The texts to embed for a turn's message ``text`` (``retrieval_text``) and ``history``.
    A multi-sentence message is embedded sentence by sentence and its whole-message vector
    pooled from those (as good, and cheaper)."""
    views = query_views(text, fusion) if text else []
    if not views:
        return TurnTexts((), (), "")
    texts = views if len(views) == 1 else views[1:]
    past = history_text(history, fusion) if fusion.history_weight > 0 else ""
    return TurnTexts(tuple(views), tuple([*texts, past] if past else texts), past)


def turn_vectors(turn: TurnTexts, rows: np.ndarray, fusion: FusionConfig) -> QueryVectors:
    """The encoded turn from ``rows``, the embeddings of ``turn.texts``."""
    if not turn.views:
        return QueryVectors((), np.zeros((0, 0), dtype=np.float32))
    rows = np.asarray(rows, dtype=np.float32)
    count = len(turn.texts) - (1 if turn.past else 0)
    parts = rows[:count]
    matrix = (parts.copy() if len(turn.views) == 1
              else np.vstack([pool(parts)[None, :], parts]))
    if turn.past:
        matrix[0] = mix_history(matrix[0], rows[count], fusion.history_weight)
    return QueryVectors(turn.views, matrix)


def encode_turn(encode: Callable[[Sequence[str]], np.ndarray], text: str,
                history: Sequence[str], fusion: FusionConfig) -> QueryVectors:
    """Embed a turn's views with ``encode``, in one call (``turn_texts``, ``turn_vectors``)."""
    texts = turn_texts(text, history, fusion)
    if not texts.views:
        return turn_vectors(texts, np.zeros((0, 0), dtype=np.float32), fusion)
    return turn_vectors(texts, encode(list(texts.texts)), fusion)


def explicit_names(message: str) -> tuple[list[str], str]:
    """``/name`` and ``$name`` mentions, and the message with them removed."""
    names = [m.group(1) for m in _EXPLICIT.finditer(message)]
    rest = _EXPLICIT.sub(" ", message).strip()
    return names, rest


def retrieval_text(query: RouteQuery) -> str:
    return explicit_names(query.message)[1]
