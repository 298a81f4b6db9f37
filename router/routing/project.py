"""A project's own skills, sent with a turn (pure): checked, then laid over the index snapshot
for that turn only, winning over any catalog skill of the same name.

Checks are lenient as discovery is: a skill without a usable name or description, or a name
given twice, is left out with a diagnostic (never a failed turn); a name outside the Agent
Skills pattern is kept with a warning. Only the bounds are errors (``InvalidRequest`` naming
the bound): at most ``PROJECT_SKILLS`` a turn, descriptions at most ``DESCRIPTION_CHARS``.

The overlay rows follow the snapshot's (``len(snap.skills) + j`` for project skill ``j``), so
every part of routing that looks a row up sees them; dense and BM25 scores for them are
computed here, exactly, with the catalog's BM25 statistics.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from router.access.model import Principal
from router.access.view import Layered, View, denied
from router.errors import InvalidRequest
from router.index.lexical import skill_document
from router.index.store import IndexSnapshot
from router.routing.fusion import Hits
from router.routing.model import InlineSkill
from router.skills.fields import NAME_PATTERN
from router.skills.limits import (
    DESCRIPTION_CHARS,
    NAME_LINT_CHARS,
    PROJECT_LOCATION_CHARS,
    PROJECT_SKILLS,
    REQUEST_NAME_CHARS,
)
from router.skills.model import PROJECT_CATALOG, Diagnostic, Level, Scope, Skill

# a snapshot's derived values the overlay shares (a project skill is routable, never flagged)
_CACHED = ("centroid", "always_on_flagged", "unroutable")


def check_bounds(inline: Sequence[InlineSkill]) -> None:
    if len(inline) > PROJECT_SKILLS:
        raise InvalidRequest(f"project_skills holds {len(inline)} skills; at most "
                             f"{PROJECT_SKILLS} a turn")
    for i, item in enumerate(inline):
        if len(item.description) > DESCRIPTION_CHARS:
            raise InvalidRequest(f"project_skills[{i}] ({item.name[:64]!r}): description has "
                                 f"{len(item.description)} characters; at most "
                                 f"{DESCRIPTION_CHARS}")


def project_skills(inline: Sequence[InlineSkill]) -> tuple[tuple[Skill, ...],
                                                           tuple[Diagnostic, ...]]:
    """The usable skills of ``inline`` (as ``Skill`` records of catalog ``project``) and a
    diagnostic for each one left out or doubtful. Raises InvalidRequest past a bound."""
    check_bounds(inline)
    skills: list[Skill] = []
    notes: list[Diagnostic] = []
    seen: set[str] = set()
    for i, item in enumerate(inline):
        where = item.location[:PROJECT_LOCATION_CHARS] or f"project_skills[{i}]"

        def note(level: Level, message: str, where: str = where) -> None:
            notes.append(Diagnostic(level, where, message))

        name, description = item.name.strip(), " ".join(item.description.split())
        if not name or len(name) > REQUEST_NAME_CHARS or not name.isprintable():
            note(Level.ERROR, f"project_skills[{i}]: no usable name; skipped")
            continue
        if not description:
            note(Level.ERROR, f"project skill {name!r}: missing description; skipped")
            continue
        if len(item.location) > PROJECT_LOCATION_CHARS or not item.location.isprintable():
            note(Level.ERROR, f"project skill {name!r}: unusable location; skipped")
            continue
        if name in seen:
            note(Level.WARNING, f"project skill {name!r} given twice; the first is kept")
            continue
        if len(name) > NAME_LINT_CHARS or not NAME_PATTERN.match(name):
            note(Level.WARNING, f"project skill name {name!r} should be 1-{NAME_LINT_CHARS} "
                                "lowercase letters, digits and single hyphens")
        seen.add(name)
        skills.append(Skill(name=name, description=description, location=item.location,
                            base_dir=os.path.dirname(item.location), scope=Scope.PROJECT,
                            catalog=PROJECT_CATALOG))
    return tuple(skills), tuple(notes)


def allowed(skills: Sequence[Skill], principal: Principal) -> tuple[tuple[Skill, ...],
                                                                   tuple[Diagnostic, ...]]:
    """``skills`` less those the caller's deny globs hide (each left out with a diagnostic)."""
    kept = tuple(s for s in skills if not denied(s.name, principal.deny))
    notes = tuple(Diagnostic(Level.WARNING, s.location[:PROJECT_LOCATION_CHARS] or s.name,
                             f"project skill {s.name!r} is denied to this caller; skipped")
                  for s in skills if denied(s.name, principal.deny))
    return kept, notes


@dataclass(frozen=True)
class Overlay:
    """A turn's project skills over a snapshot: the snapshot with their rows appended, the
    caller's view with their names winning, and their vectors (one row each)."""

    snap: IndexSnapshot
    view: View
    first: int  # the row of the first project skill
    vectors: np.ndarray
    documents: tuple[str, ...]

    def dense_hits(self, matrix: np.ndarray, found: list[Hits]) -> list[Hits]:
        """Per query view, ``found`` with the project skills' cosines added (those at least
        the view's lowest catalog cosine, so the catalog's own figures do not move)."""
        scores = matrix @ self.vectors.T
        out = []
        for hits, row in zip(found, scores, strict=True):
            keep = row >= (float(hits.scores.min()) if len(hits.scores) else -1.0)
            ids = np.flatnonzero(keep).astype(np.int64) + self.first
            out.append(Hits(np.concatenate([hits.ids, ids]),
                            np.concatenate([hits.scores, row[keep].astype(np.float32)]),
                            hits.weight))
        return out

    def lexical_hits(self, scores: np.ndarray, hits: Hits) -> Hits:
        """``hits`` with the project skills' positive BM25 ``scores`` added."""
        keep = scores > 0
        ids = np.flatnonzero(keep).astype(np.int64) + self.first
        return Hits(np.concatenate([hits.ids, ids]),
                    np.concatenate([hits.scores, scores[keep].astype(np.float32)]), hits.weight)

    def holds(self, row: int) -> bool:
        return self.view.position(self.snap.skills[row].name) == row


def overlay(snap: IndexSnapshot, view: View, skills: Sequence[Skill], vectors: np.ndarray,
            principal: Principal) -> Overlay:
    """``skills`` (with their ``vectors``) laid over ``snap`` and ``view`` for one turn; the
    caller's deny globs apply to them too."""
    shown = [(s, v) for s, v in zip(skills, vectors, strict=True)
             if not denied(s.name, principal.deny)]
    first = len(snap.skills)
    merged = replace(snap, skills=snap.skills + tuple(s for s, _ in shown))
    for name in _CACHED:  # derived from the catalog's rows; the same for the overlay
        merged.__dict__[name] = getattr(snap, name)
    mine = {s.name: first + j for j, (s, _) in enumerate(shown)}
    seen = replace(view, positions=Layered(mine, view.positions),
                   key=(*view.key, tuple(sorted(mine))))
    matrix = np.asarray([v for _, v in shown], dtype=np.float32).reshape(
        len(shown), vectors.shape[-1] if vectors.ndim == 2 else 0)
    return Overlay(merged, seen, first, matrix,
                   tuple(skill_document(s.name, s.description) for s, _ in shown))
