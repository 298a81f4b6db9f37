"""The Engine's side of project skills sent with a turn (``RouteRequest.project_skills``):
their embeddings, made with the full-precision model the catalog was built with (never an
int8 copy) and kept by content in a bounded cache, so the next turns of a conversation pay
nothing; and which names were project skills in each caller's session, so an Activate of one
says that activation stays with the gateway.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from router.access.model import Principal
from router.access.view import View
from router.config import IndexConfig
from router.encoders import backends
from router.encoders.base import Embedder
from router.encoders.cache import QueryCache
from router.errors import NotFound
from router.index.store import IndexSnapshot
from router.index.vectors import embedding_text
from router.routing.model import RouteQuery
from router.routing.project import Overlay, overlay, project_skills
from router.skills.limits import PROJECT_SKILL_VECTORS
from router.skills.model import Diagnostic

log = logging.getLogger(__name__)

SESSIONS_KEPT = 4096  # (principal_name, session) pairs whose project skill names are remembered


class ProjectTurns:
    """Project skills for the turns of one Engine (thread-safe)."""

    def __init__(self, index: IndexConfig, index_dir: Path | None) -> None:
        self._index, self._index_dir = index, index_dir
        self._vectors = QueryCache(PROJECT_SKILL_VECTORS)
        self._full: dict[str, Embedder] = {}
        self._names: OrderedDict[tuple[str, str], frozenset[str]] = OrderedDict()
        self._lock = threading.Lock()

    def _embedder(self, serving: Embedder) -> Embedder:
        """``serving``, or where it is an int8 copy, the full-precision encoder of its model."""
        chosen = backends.backend(self._index.query_backend)
        if not chosen.int8 or self._index_dir is None:
            return serving
        with self._lock:
            found = self._full.get(serving.model_id)
        if found is None:
            from router.index.query_encoder import query_embedder

            found = query_embedder(serving.model_id, self._index_dir,
                                   backend=chosen.full_precision,
                                   batch_size=self._index.batch_size,
                                   threads=self._index.query_threads)
            with self._lock:
                self._full = {serving.model_id: found}
        return found

    def lay(self, snap: IndexSnapshot, view: View, query: RouteQuery, caller: Principal,
            serving: Embedder) -> tuple[Overlay | None, tuple[Diagnostic, ...]]:
        """The turn's project skills over ``snap`` and ``view`` (None when none is usable),
        and the diagnostics of those left out."""
        skills, notes = project_skills(query.project_skills)
        self.remember(caller.name, query.session_id, (s.name for s in skills))
        if not skills:
            return None, notes
        embedder = self._embedder(serving)
        vectors = np.asarray(self._vectors.encode(embedder, [embedding_text(s)
                                                             for s in skills]))
        return overlay(snap, view, skills, vectors, caller), notes

    def remember(self, principal_name: str, session: str, names: Iterable[str]) -> None:
        if not session:
            return
        held = frozenset(names)
        with self._lock:
            if held:
                self._names[(principal_name, session)] = held
                self._names.move_to_end((principal_name, session))
                while len(self._names) > SESSIONS_KEPT:
                    self._names.popitem(last=False)
            else:
                self._names.pop((principal_name, session), None)

    def check_activation(self, principal_name: str, session: str, name: str) -> None:
        """NotFound when ``name`` was a project skill on the session's latest turn."""
        with self._lock:
            held = self._names.get((principal_name, session), frozenset())
        if name in held:
            raise NotFound(f"skill {name!r} is a project skill sent with the turn: activation "
                           "stays with the gateway (read the SKILL.md at its location)")
