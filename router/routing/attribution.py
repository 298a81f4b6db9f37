"""What Explain tells of a candidate's evidence (pure): which of the skill's fields the turn's
words matched in the lexical index (its name and description, or the body excerpt indexed with
them, ``router.index.body``), and which step of a request of several sentences its vector came
closest to. Computed for Explain only, over the candidates it reports."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from router.index.lexical import LexicalIndex, english_stopwords, skill_document, tokenize
from router.index.store import IndexSnapshot
from router.routing.model import Candidate
from router.routing.query_text import QueryVectors
from router.skills.model import Skill

DESCRIPTION, BODY, BOTH = "description", "body", "both"


def attributed(candidates: dict[int, Candidate], snap: IndexSnapshot,
               vectors: QueryVectors) -> dict[int, Candidate]:
    """``candidates`` (by row of ``snap``) with ``matched_field`` and ``matched_step`` set."""
    steps = vectors.views[1:] if len(vectors.views) > 2 else ()
    lexical: LexicalIndex = snap.lexical
    indexed = [row for row, c in candidates.items() if c.lexical_score > 0 and row < len(lexical)]
    # the whole message (the first view) holds every word of its steps
    held = lexical.words_in_rows(vectors.views[0], indexed) if vectors.views and indexed else {}
    out = {}
    for row, candidate in candidates.items():
        field = "" if candidate.lexical_score <= 0 else (
            _field(snap.skills[row], held[row]) if row in held else DESCRIPTION)
        step = _step(snap, row, vectors, steps) if not candidate.matched_example else ""
        out[row] = replace(candidate, matched_field=field, matched_step=step)
    return out


def _field(skill: Skill, matched: tuple[str, ...]) -> str:
    """Where ``matched``, the turn's words the skill's lexical document holds, are: all in its
    name and description, none there (so in the body), or some of each ("" for none). A
    project skill, outside the index, is routed on its name and description alone."""
    if not matched:
        return ""
    described = set(tokenize(skill_document(skill.name, skill.description),
                             english_stopwords()))
    inside = [word for word in matched if described.intersection(tokenize(word, frozenset()))]
    if len(inside) == len(matched):
        return DESCRIPTION
    return BOTH if inside else BODY


def _step(snap: IndexSnapshot, row: int, vectors: QueryVectors,
          steps: tuple[str, ...]) -> str:
    """The step (sentence view) whose vector is closest to row ``row``'s ("" for a request of
    one step, or a row the snapshot holds no vector for)."""
    if not steps or row >= len(snap.vectors):
        return ""
    cosines = np.asarray(vectors.matrix[1:1 + len(steps)], dtype=np.float32) @ snap.vectors[row]
    return steps[int(np.argmax(cosines))]
