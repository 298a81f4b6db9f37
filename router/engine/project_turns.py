"""The Engine's side of project skills sent with a turn (``RouteRequest.project_skills``):
their embeddings, made with the full-precision model the catalog was built with (never an
int8 copy) and kept by caller and content in a bounded cache, so the next turns of a
conversation pay nothing. Which names were project skills in each caller's session is session
state (``router.engine.sessions``).

What a turn may cost is bounded: the texts it would embed (those not cached for its caller)
times their estimated tokens stay within ``routing.project_embed_budget_tokens`` (else
``TooLarge``, before any work); at most ``routing.project_embed_concurrency`` turns embed at
once server-wide, as many more wait (until their deadline) and the rest are refused, so the
other workers stay free; and embedding stops between batches once the caller's deadline
passed or it went away (``DeadlineExceeded``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from router.access.model import Principal
from router.access.view import View
from router.config import IndexConfig, RoutingConfig
from router.encoders import backends
from router.encoders.base import Embedder
from router.encoders.cache import QueryCache
from router.errors import TooLarge
from router.index.example_store import FLOAT32, vectors_of
from router.index.store import IndexSnapshot
from router.index.vectors import embedding_text
from router.routing.deadline import Deadline
from router.routing.model import RouteQuery
from router.routing.project import Overlay, allowed, overlay, project_skills
from router.skills.limits import PROJECT_SKILL_VECTORS
from router.skills.model import Diagnostic, Skill

log = logging.getLogger(__name__)

EMBED_BATCH = 8  # project skills embedded between two checks of the caller's deadline


def estimated_tokens(text: str) -> int:
    """The tokens ``text`` costs the encoder, estimated as its characters / 4 (rounded up):
    cheap, deterministic and the same for every model."""
    return -(-len(text) // 4)


class Slots:
    """At most ``running`` turns embedding at once and as many waiting; a turn beyond them is
    refused at once (TooLarge), a waiting one gives up at its deadline (DeadlineExceeded)."""

    def __init__(self, running: int) -> None:
        self._running, self._room = threading.Semaphore(running), 2 * running
        self._lock = threading.Lock()
        self.admitted = 0  # turns running or waiting now

    def hold(self, until: Deadline) -> None:
        with self._lock:
            if self.admitted >= self._room:
                raise TooLarge("the server is embedding other turns' new project skills; "
                               "retry shortly, or send fewer new ones (project skills already "
                               "sent by this caller cost nothing)")
            self.admitted += 1
        if not self._running.acquire(timeout=until.remaining()):
            self._leave()
            raise until.passed("waiting to embed project skills")
        if until.expired():
            self.release()
            raise until.passed("waiting to embed project skills")

    def release(self) -> None:
        self._running.release()
        self._leave()

    def _leave(self) -> None:
        with self._lock:
            self.admitted -= 1


class ProjectTurns:
    """Project skills for the turns of one Engine (thread-safe)."""

    def __init__(self, index: IndexConfig, index_dir: Path | None,
                 routing: RoutingConfig | None = None) -> None:
        self._index, self._index_dir = index, index_dir
        self._budget = (routing or RoutingConfig()).project_embed_budget_tokens
        self.slots = Slots((routing or RoutingConfig()).project_embed_concurrency)
        self._vectors = QueryCache(PROJECT_SKILL_VECTORS)
        self._full: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    def _embedder(self, serving: Embedder) -> Embedder:
        """``serving``, or where it is an int8 copy, the full-precision encoder of its model
        (an int8 backend whose copy fell back to float32, or any other encoder handed to the
        Engine, already gives full-precision vectors)."""
        chosen = backends.backend(self._index.query_backend)
        if not chosen.int8 or self._index_dir is None or vectors_of(serving) == FLOAT32:
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

    @staticmethod
    def select(query: RouteQuery, caller: Principal) -> tuple[tuple[Skill, ...],
                                                              tuple[Diagnostic, ...]]:
        """The turn's usable project skills ``caller`` may send, and the diagnostics of those
        left out."""
        usable, notes = project_skills(query.project_skills)
        skills, hidden = allowed(usable, caller)
        return skills, notes + hidden

    def lay(self, snap: IndexSnapshot, view: View, query: RouteQuery, caller: Principal,
            serving: Embedder) -> tuple[Overlay | None, tuple[Diagnostic, ...]]:
        """The turn's project skills over ``snap`` and ``view`` (None when none is usable),
        and the diagnostics of those left out."""
        skills, notes = self.select(query, caller)
        return self.embed(snap, view, skills, caller, serving, query.until), notes

    def embed(self, snap: IndexSnapshot, view: View, skills: Sequence[Skill],
              caller: Principal, serving: Embedder, until: Deadline) -> Overlay | None:
        """``skills`` (``select``'s) embedded for ``caller`` and laid over ``snap`` and
        ``view``, the work stopped at ``until``; None when there are none."""
        if not skills:
            return None
        embedder = self._embedder(serving)
        texts = [embedding_text(s) for s in skills]
        new = self._vectors.missing(embedder.model_id, texts, caller.name)
        self._check_budget([texts[i] for i in new])
        if new:
            self.slots.hold(until)
        try:
            vectors = np.asarray(self._vectors.encode(
                embedder, texts, caller.name, batch=EMBED_BATCH,
                before=lambda: until.check("embedding project skills")))
        finally:
            if new:
                self.slots.release()
        return overlay(snap, view, skills, vectors, caller)

    def _check_budget(self, new: list[str]) -> None:
        cost = sum(estimated_tokens(t) for t in new)
        if self._budget and cost > self._budget:
            raise TooLarge(
                f"project_skills: {len(new)} skills new to this caller would cost about {cost} "
                f"tokens to embed (characters / 4), over the budget of {self._budget} a turn; "
                "send fewer or shorter project skills (the ones this turn needs), or spread "
                "them over turns: project skills this caller already sent cost nothing")
