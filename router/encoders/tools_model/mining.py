"""Hard negatives for the product's encoder, mined with the base model: for each training
request, the training tool the base model ranks highest that the request does not need and that
is not a near-copy of one it needs (cosine between the two documents below ``NEAR_COPY``: the
public sets hold many tools that differ by a version or a model name). Tools of the held-back
split are never candidates, so no validation tool is seen in training, even as a negative."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from router.encoders.base import Embedder
from router.encoders.tools_model.rows import Row, Tool

NEAR_COPY = 0.95  # two tool documents this close are taken for the same tool
_CHUNK = 512  # requests scored at a time (bounds the score matrix's memory)
_DEPTH = 16  # candidates looked at per request, best first


def candidate_tools(train: Sequence[Row], held_back: Sequence[Row]) -> list[Tool]:
    """The training tools (needed or offered as distractors by a training row), without any
    tool of a held-back row; sorted, so the same rows give the same list."""
    unseen = {t.document for r in held_back for t in (*r.tools, *r.distractors)}
    pool = {t.document: t for r in train for t in (*r.tools, *r.distractors)
            if t.document not in unseen}
    return [pool[d] for d in sorted(pool)]


def mine(train: Sequence[Row], tools: Sequence[Tool], base: Embedder) -> dict[str, Tool]:
    """A mined negative per training row id (none when every candidate is right or a copy)."""
    if not train or not tools:
        return {}
    docs = base.encode([t.document for t in tools])
    position = {t.document: i for i, t in enumerate(tools)}
    found: dict[str, Tool] = {}
    for start in range(0, len(train), _CHUNK):
        chunk = train[start:start + _CHUNK]
        scores = base.encode([r.request for r in chunk]) @ docs.T
        depth = min(_DEPTH, len(tools))
        top = np.argpartition(-scores, depth - 1, axis=1)[:, :depth]
        for row, row_scores, row_top in zip(chunk, scores, top, strict=True):
            rights = [position[t.document] for t in row.tools if t.document in position]
            pick = _best_wrong(row_scores, row_top, rights, docs, row, tools)
            if pick is not None:
                found[row.id] = tools[pick]
    return found


def _best_wrong(scores: np.ndarray, top: np.ndarray, rights: list[int], docs: np.ndarray,
                row: Row, tools: Sequence[Tool]) -> int | None:
    needed = {t.document for t in row.tools}
    for i in sorted(top.tolist(), key=lambda j: (-float(scores[j]), j)):
        if tools[i].document in needed:
            continue
        if rights and float(np.max(docs[rights] @ docs[i])) >= NEAR_COPY:
            continue
        return int(i)
    return None
