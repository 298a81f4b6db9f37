"""What Explain tells of a candidate's evidence (pure): which of the skill's fields the turn's
words matched in the lexical index (its name and description, or the body excerpt indexed with
them, ``router.index.body``), and which step of a request of several sentences its vector came
closest to. Computed for Explain only, over the candidates it reports."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from router.index.lexical import LexicalIndex, skill_document
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
    held = _words_in_rows(lexical, vectors.views[0], indexed) if vectors.views and indexed \
        else {}
    out = {}
    for row, candidate in candidates.items():
        field = "" if candidate.lexical_score <= 0 else (
            _field(lexical, snap.skills[row], held[row]) if row in held else DESCRIPTION)
        step = _step(snap, row, vectors, steps) if not candidate.matched_example else ""
        out[row] = replace(candidate, matched_field=field, matched_step=step)
    return out


def _words_in_rows(lexical: LexicalIndex, query: str,
                   rows: list[int]) -> dict[int, tuple[str, ...]]:
    """For each of ``rows``, the words of ``query`` its document holds, as written or as a
    stem, in the query's order and once each: one pass over each word's postings for all the
    rows at once."""
    wanted = np.asarray(rows, dtype=np.int64)
    found: dict[int, list[str]] = {int(r): [] for r in wanted}
    for word, stem in dict(lexical.words(query)).items():  # each word once, in order
        hit = (np.isin(wanted, lexical.rows_holding(word))
               | np.isin(wanted, lexical.rows_holding(stem)))
        for row in wanted[hit]:
            found[int(row)].append(word)
    return {row: tuple(held) for row, held in found.items()}


def _field(lexical: LexicalIndex, skill: Skill, matched: tuple[str, ...]) -> str:
    """Where ``matched``, the turn's words the skill's lexical document holds, are: all in its
    name and description, none there (so in the body), or some of each ("" for none). A
    project skill, outside the index, is routed on its name and description alone."""
    if not matched:
        return ""
    described = lexical.terms(skill_document(skill.name, skill.description))
    inside = [word for word in matched if described & lexical.terms(word)]
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
