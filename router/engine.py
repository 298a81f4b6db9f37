"""The application object: a loaded index snapshot plus an embedder, behind a thread-safe API.

The gRPC servicer and the CLI both call this; it knows nothing of either. The snapshot is
immutable and swapped by one reference assignment, so a route in flight finishes on the
snapshot it started with.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from router.activation import (
    MAX_ACTIVE_SKILLS,
    MAX_SESSION_ID_CHARS,
    Activation,
    Activator,
    Resource,
)
from router.config import Config
from router.errors import IndexUnavailable, InvalidRequest
from router.index import dense
from router.index.embed import (
    Embedder,
    QueryCache,
    loading_in_background,
    serving_embedder,
)
from router.index.layout import IndexInfo, current_version
from router.index.recovery import load_serving_index
from router.index.store import IndexSnapshot, load_index
from router.reindex import ReindexResult, ReindexStats, reindex_engine
from router.routing import router as core
from router.routing.fusion import FusionConfig
from router.routing.model import CatalogFormat, Reason, RouteQuery, RouteResult
from router.sessions import SessionStore
from router.skills.model import Diagnostic, Skill

if TYPE_CHECKING:
    from router.routing.arguments import ValidationResult

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 32_000
MAX_HISTORY_TURNS = 50
MAX_CATALOG_CHARS = 1_000_000  # a larger budget is no budget; refuse it as a likely mistake


def _check_sizes(query: RouteQuery) -> None:
    """The caps on a request's parts other than the message. Raises InvalidRequest."""
    longest = max((len(turn) for turn in query.history), default=0)
    if longest > MAX_MESSAGE_CHARS:
        raise InvalidRequest(f"a history turn has {longest} characters; the limit is "
                             f"{MAX_MESSAGE_CHARS}: trim or drop long turns")
    if len(query.active_skills) > MAX_ACTIVE_SKILLS:
        raise InvalidRequest(f"active_skills lists {len(query.active_skills)} names; "
                             f"the limit is {MAX_ACTIVE_SKILLS}")
    if len(query.session_id) > MAX_SESSION_ID_CHARS:
        raise InvalidRequest(f"session_id has {len(query.session_id)} characters; "
                             f"the limit is {MAX_SESSION_ID_CHARS}")


class Engine:
    """Route, explain and list against the current index snapshot."""

    def __init__(self, snapshot: IndexSnapshot, config: Config, embedder: Embedder,
                 fusion: FusionConfig | None = None, index_dir: str | Path | None = None) -> None:
        if snapshot.info.model != embedder.model_id:
            raise IndexUnavailable(
                f"index {snapshot.info.version} was built with {snapshot.info.model!r} "
                f"but the embedder is {embedder.model_id!r}; rebuild the index")
        dense.tune(snapshot.dense, config.index.hnsw_ef_search)
        self._snapshot = snapshot
        self._config = config
        self._embedder = embedder
        self._fusion = fusion or FusionConfig()
        self._cache = QueryCache()
        self.activator = Activator(self._lookup, lambda: [s.name for s in self.skills()],
                                   SessionStore())
        self.index_dir = Path(index_dir) if index_dir is not None else None
        # Held while the served index is rebuilt or reloaded, so those never interleave.
        self.index_lock = threading.Lock()
        self.reindex_stats = ReindexStats()

    @classmethod
    def open(cls, index_dir: str | Path, config: Config,
             embedder: Embedder | None = None) -> Engine:
        """Load the current index under ``index_dir``. Without an ``embedder``, the one the
        configuration asks for is loaded for queries while the index loads."""
        if embedder is not None:
            snapshot = load_serving_index(index_dir)
        else:
            with loading_in_background(serving_embedder(index_dir, config.index)) as embedder:
                snapshot = load_serving_index(index_dir)
        dense.set_threads(config.index.search_threads)
        return cls(snapshot, config, embedder, index_dir=index_dir)

    def warm_up(self) -> None:
        """Load the embedding model and touch the index, so the first real turn is fast."""
        self.route(RouteQuery(message="warm up"))

    @property
    def snapshot(self) -> IndexSnapshot:
        return self._snapshot

    @property
    def config(self) -> Config:
        return self._config

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    def swap(self, snapshot: IndexSnapshot) -> None:
        """Serve ``snapshot`` from now on; routes in flight finish on the old one."""
        if snapshot.info.model != self._embedder.model_id:
            raise IndexUnavailable(f"index {snapshot.info.version} uses model "
                                   f"{snapshot.info.model!r}, not {self._embedder.model_id!r}")
        dense.tune(snapshot.dense, self._config.index.hnsw_ef_search)
        self._snapshot = snapshot
        log.info("now serving index %s (%d skills)", snapshot.info.version,
                 snapshot.info.skill_count)

    def reload(self, *, wait: bool = True) -> bool:
        """Load the current version under ``index_dir`` if it changed. True if swapped.

        Raises IndexUnavailable (IndexCorrupt) when the new version cannot be loaded; the old
        snapshot keeps serving. With ``wait=False`` it returns False at once while a reindex
        holds the index lock (that reindex swaps in its own version).
        """
        if self.index_dir is None:
            return False
        if not self.index_lock.acquire(blocking=wait):
            return False
        try:
            if current_version(self.index_dir) == self._snapshot.info.version:
                return False
            self.swap(load_index(self.index_dir))
            return True
        finally:
            self.index_lock.release()

    def reindex(self, full: bool = False) -> ReindexResult:
        """Rebuild from the recorded discovery settings and swap (see ``router.reindex``)."""
        return reindex_engine(self, full=full)

    def validate(self, query: RouteQuery) -> RouteQuery:
        """Check a request; return it with defaults filled. Raises InvalidRequest."""
        routing = self._config.routing
        if not query.message.strip():
            raise InvalidRequest("message is empty: send the user's latest message text")
        if len(query.message) > MAX_MESSAGE_CHARS:
            raise InvalidRequest(f"message has {len(query.message)} characters; the limit is "
                                 f"{MAX_MESSAGE_CHARS}: send only the latest user turn")
        if len(query.history) > MAX_HISTORY_TURNS:
            raise InvalidRequest(f"history has {len(query.history)} turns; send at most "
                                 f"{MAX_HISTORY_TURNS} (only the last "
                                 f"{self._fusion.history_turns} are used)")
        if not 0 <= query.top_k <= routing.max_top_k:
            raise InvalidRequest(f"top_k must be between 0 (server default {routing.top_k}) "
                                 f"and {routing.max_top_k}; got {query.top_k}")
        if not 0 <= query.max_catalog_chars <= MAX_CATALOG_CHARS:
            raise InvalidRequest(f"max_catalog_chars must be 0 (no budget) or up to "
                                 f"{MAX_CATALOG_CHARS}; got {query.max_catalog_chars}")
        _check_sizes(query)
        if not isinstance(query.format, CatalogFormat):
            raise InvalidRequest(f"unknown catalog format {query.format!r}")
        return replace(query, top_k=query.top_k or routing.top_k)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return self._cache.encode(self._embedder, texts)

    def _vectors(self, query: RouteQuery) -> core.QueryVectors:
        return core.encode_turn(self._encode, core.retrieval_text(query), query.history,
                                self._fusion)

    def route(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        query = self.validate(query)
        remembered = self.activator.sessions.active(query.session_id)
        if remembered:
            query = replace(query, active_skills=(*query.active_skills,
                                                  *sorted(remembered - set(query.active_skills))))
        snapshot = self._snapshot
        vectors = self._vectors(query)
        return core.route(snapshot, query, vectors, self._config.routing, self._fusion,
                          explain=explain)

    def route_turn(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        """``route`` plus what a turn does besides: a ``/name`` the user typed is activated
        (content in ``explicit_content``, marked active for the session)."""
        result = self.route(query, explain=explain)
        explicit = [s.name for s in result.skills if s.reason is Reason.EXPLICIT]
        if not explicit:
            return result
        done = self.activator.activate(explicit[0], session_id=query.session_id,
                                       active_skills=query.active_skills, explicit=True)
        return replace(result, explicit_content=done.content)

    def activate(self, name: str, session_id: str = "", active_skills: tuple[str, ...] = (),
                 include_frontmatter: bool = False) -> Activation:
        return self.activator.activate(name, session_id, active_skills, include_frontmatter)

    def read_resource(self, name: str, path: str) -> Resource:
        return self.activator.read_resource(name, path)

    def validate_arguments(self, name: str, arguments_json: str) -> ValidationResult:
        return self.activator.validate_arguments(name, arguments_json)

    def _lookup(self, name: str) -> Skill | None:
        snapshot = self._snapshot
        pos = snapshot.position(name)
        return snapshot.skills[pos] if pos is not None else None

    def explain(self, query: RouteQuery) -> RouteResult:
        return self.route(query, explain=True)

    def skills(self) -> tuple[Skill, ...]:
        return self._snapshot.skills

    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self._snapshot.diagnostics

    def info(self) -> IndexInfo:
        return self._snapshot.info
