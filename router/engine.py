"""The application object: a loaded index snapshot plus an embedder, behind a thread-safe API.

The gRPC servicer and the CLI both call this; it knows nothing of either. The snapshot is
immutable and swapped by one reference assignment, so a route in flight finishes on the
snapshot it started with.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from router.access.model import ANONYMOUS, OPS, Principal
from router.access.ownership import check_session_fields
from router.activation.activator import Activation, Activator, Resource, ResourceList
from router.activation.sessions import SessionStore
from router.common.tracing import ENCODE, stage
from router.config import DEFAULT_SOURCE, Config
from router.encoders.base import Embedder
from router.encoders.cache import QueryCache
from router.encoders.factory import loading_in_background
from router.errors import IndexUnavailable
from router.index import dense
from router.index.query_encoder import serving_embedder, switch_query_embedder
from router.index.serving import load_serving_index
from router.index.store import IndexSnapshot
from router.index.versions.encoder import is_tuned
from router.index.versions.layout import IndexInfo
from router.learning.backends import open_store
from router.learning.recorder import Recorder
from router.learning.review import Review
from router.reindex.reindexer import Reindexer
from router.reindex.result import ReindexResult, ReindexStats
from router.routing import router as core
from router.routing.fusion import FusionConfig
from router.routing.model import Reason, RouteQuery, RouteResult
from router.routing.project import check_bounds
from router.routing.project_turns import ProjectTurns
from router.routing.request import checked_query
from router.routing.visible import ViewCache, Visible
from router.skills.model import PROJECT_CATALOG, Diagnostic, Skill, skill_key
from router.skills.sources.base import create_source
from router.skills.sources.version_files import VersionFilesSource

if TYPE_CHECKING:
    from collections.abc import Mapping

    from router.activation.arguments import ValidationResult
    from router.objectstore.mirror import RemoteIndex
    from router.skills.digests import SkillDigests

log = logging.getLogger(__name__)


class Engine:
    """Route, explain and list against the current index snapshot."""

    def __init__(self, snapshot: IndexSnapshot, config: Config, embedder: Embedder,
                 fusion: FusionConfig | None = None, index_dir: str | Path | None = None) -> None:
        if snapshot.info.model != embedder.model_id:
            raise IndexUnavailable(
                f"index {snapshot.info.version} was built with {snapshot.info.model!r} "
                f"but the embedder is {embedder.model_id!r}; rebuild the index")
        dense.tune(snapshot.dense, config.index.hnsw_ef_search)
        # The snapshot and the query encoder of its model, swapped together in one assignment
        # (a version built with a fine-tuned model brings its own encoder).
        self._served: tuple[IndexSnapshot, Embedder] = (snapshot, embedder)
        self._config = config
        self._fusion = fusion or FusionConfig()
        self._settings = core.Settings(config.routing, self._fusion)  # once, not per turn
        self._cache = QueryCache()
        self._views = ViewCache()
        self._project = ProjectTurns(config.index, Path(index_dir) if index_dir else None,
                                     config.routing)
        self.activator = Activator(self._lookup, lambda: [s.name for s in self.skills()],
                                   SessionStore(), digests=lambda: self._snapshot.digests,
                                   source=VersionFilesSource(self._carried, create_source(
                                       snapshot.info.source or DEFAULT_SOURCE)))
        self.index_dir = Path(index_dir) if index_dir is not None else None
        self.remote: RemoteIndex | None = None  # the bucket index_dir mirrors, if any
        # Learning from traffic (router.learning), and what operators see of it (the same store)
        store = (open_store(self.index_dir, config.feedback)
                 if self.index_dir is not None or config.feedback.store_url else None)
        self.recorder = Recorder(store)
        self.review = Review(store, self.recorder.enabled)
        # Rebuilds and reloads, one at a time (router.reindex.reindexer).
        self._reindexer = Reindexer(self.index_dir, config, lambda: self._served, self.swap,
                                    lambda: self.remote)

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
        if snapshot.info.model != embedder.model_id and (
                is_tuned(snapshot.info.model) or is_tuned(embedder.model_id)):
            # An older version serves instead of a damaged current one, built with another
            # (fine-tuned or base) model: its own query encoder serves with it.
            embedder = switch_query_embedder(snapshot.info.model, index_dir, config.index,
                                             snapshot.info.version)
        dense.set_threads(config.index.search_threads)
        return cls(snapshot, config, embedder, index_dir=index_dir)

    def warm_up(self) -> None:
        """Load the embedding model and touch the index, so the first real turn is fast."""
        self.route(RouteQuery(message="warm up"))

    def prime(self) -> None:
        """What a first Route computes besides its encode, done ahead: the size of the whole
        catalog a caller of every catalog would inject (rendered once per index version and
        format). ``serve`` calls it while the model loads, so the two overlap."""
        from router.routing.result import full_catalog_chars

        snapshot = self._snapshot
        full_catalog_chars(snapshot, self.validate(RouteQuery(message="warm up")),
                           self._settings.routing, self._views.view(snapshot, ANONYMOUS))

    @property
    def _snapshot(self) -> IndexSnapshot:
        return self._served[0]

    @property
    def snapshot(self) -> IndexSnapshot:
        return self._snapshot

    @property
    def config(self) -> Config:
        return self._config

    @property
    def embedder(self) -> Embedder:
        return self._served[1]

    def swap(self, snapshot: IndexSnapshot) -> None:
        """Serve ``snapshot`` from now on; routes in flight finish on the old one. A snapshot
        of another model (fine-tuned, or back to the base) brings its query encoder, loaded
        first: IndexUnavailable if it cannot load, and the old snapshot keeps serving."""
        embedder = self.embedder
        if snapshot.info.model != embedder.model_id:
            embedder = switch_query_embedder(snapshot.info.model, self.index_dir,
                                             self._config.index, snapshot.info.version)
        dense.tune(snapshot.dense, self._config.index.hnsw_ef_search)
        self._served = (snapshot, embedder)
        log.info("now serving index %s (%d skills)", snapshot.info.version,
                 snapshot.info.skill_count)

    def reload(self, *, wait: bool = True) -> bool:
        """Load the current version under ``index_dir`` if it changed. True if swapped.

        Raises IndexUnavailable (IndexCorrupt) when the new version cannot be loaded; the old
        snapshot keeps serving. With ``wait=False`` it returns False at once while a reindex
        holds the index lock (that reindex swaps in its own version).
        """
        return self._reindexer.reload(wait=wait)

    @property
    def index_lock(self) -> threading.Lock:
        """Held while the served index is rebuilt or reloaded; hold it to keep it still."""
        return self._reindexer.lock

    def close(self) -> None:
        """Sync and close what the Engine writes (the feedback segment of this process)."""
        self.recorder.close()

    def reindex_stats(self) -> ReindexStats:
        """A copy of the reindex and reload counters."""
        return self._reindexer.stats()

    def record_load_failure(self) -> None:
        """Count a version found on disk that could not be served."""
        self._reindexer.record_load_failure()

    def reindex(self, full: bool = False) -> ReindexResult:
        """Build a new version when a skill changed (or ``full``) and swap it in; routes in
        flight finish on their snapshot; a version built in a bucket's mirror is published there,
        for every replica (``router.builder.recipe``). See ``Reindexer.run``."""
        return self._reindexer.run(full)

    def validate(self, query: RouteQuery) -> RouteQuery:
        """Check a request; return it with defaults filled. Raises InvalidRequest; changes
        nothing (``route`` claims the session)."""
        query = checked_query(query, self._config.routing, self._fusion.history_turns)
        check_bounds(query.project_skills)
        check_session_fields(query.session_id, query.active_skills)
        return query

    def _vectors(self, query: RouteQuery, embedder: Embedder) -> core.QueryVectors:
        return core.encode_turn(lambda texts: self._cache.encode(embedder, texts,
                                                                 query.caller.name),
                                core.retrieval_text(query), query.history, self._fusion)

    def visible(self, caller: Principal = ANONYMOUS) -> Visible:
        """The served snapshot as ``caller`` sees it (``router.access.view``)."""
        snapshot = self._snapshot
        return Visible(snapshot, self._views.view(snapshot, caller))

    def route(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        """Route a turn over the view of its caller (``query.caller``)."""
        query = self.validate(query)
        caller = query.caller
        self.recorder.claim(query.session_id, caller.name)  # PermissionDenied: not theirs
        remembered = self.activator.sessions.active(query.session_id)
        if remembered:
            query = replace(query, active_skills=(*query.active_skills,
                                                  *sorted(remembered - set(query.active_skills))))
        snapshot, embedder = self._served
        view = self._views.view(snapshot, caller)
        with stage(ENCODE, snapshot.info.version, caller.name):
            vectors = self._vectors(query, embedder)
        project, notes = self._project.lay(snapshot, view, query, caller, embedder)
        result = core.route(snapshot, query, vectors, self._settings, explain=explain,
                            view=view, project=project)
        if explain and not (caller.may(OPS) and caller.sees_everything):
            # A matched example may be another principal's user's request: the index does not
            # keep whose, so only an operator of every catalog sees them.
            result = replace(result, candidates=tuple(
                replace(c, matched_example="") for c in result.candidates))
        return replace(result, diagnostics=notes) if notes else result

    def route_turn(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        """``route``, and a ``/name`` the user typed activated (in ``explicit_content``)."""
        result = self.route(query, explain=explain)
        result = replace(result, route_id=self.recorder.on_route(query, result))
        explicit = [s for s in result.skills if s.reason is Reason.EXPLICIT]
        if not explicit or explicit[0].catalog == PROJECT_CATALOG:
            return result  # a project skill's activation stays with the gateway
        done = self.activator.activate(explicit[0].name, query.session_id, query.active_skills,
                                       explicit=True, within=self.visible(query.caller))
        self.recorder.on_explicit(skill_key(explicit[0].catalog, done.name), query,
                                  result.route_id)
        return replace(result, explicit_content=done.content)

    def activate(self, name: str, session_id: str = "", active_skills: tuple[str, ...] = (),
                 include_frontmatter: bool = False, route_id: str = "",
                 principal_name: str = "", caller: Principal = ANONYMOUS) -> Activation:
        """Activate ``name`` of ``caller``'s view (``principal_name``: whose session and route
        it is); what it teaches is keyed by the skill's catalog and name."""
        self.recorder.check_owner(session_id, route_id, principal_name)
        self._project.check_activation(principal_name, session_id, name)
        visible = self.visible(caller)
        done = self.activator.activate(name, session_id, active_skills, include_frontmatter,
                                       within=visible)
        self.recorder.on_activate(visible.key(done.name), session_id, route_id,
                                  principal=principal_name)
        return done

    def feedback(self, skill: str, session_id: str, outcome: str, route_id: str = "",
                 principal_name: str = "", caller: Principal = ANONYMOUS) -> bool:
        """Record an outcome for ``skill`` (``router.learning.recorder``); False if not stored."""
        visible = self.visible(caller)
        self.activator.find(skill, visible)  # NotFound (close names suggested): claims nothing
        self.recorder.check_owner(session_id, route_id, principal_name)
        return self.recorder.on_feedback(visible.key(skill), session_id, outcome, route_id,
                                         principal_name)

    def read_resource(self, name: str, path: str, caller: Principal = ANONYMOUS) -> Resource:
        return self.activator.read_resource(name, path, self.visible(caller))

    def list_resources(self, name: str, caller: Principal = ANONYMOUS) -> ResourceList:
        return self.activator.list_resources(name, self.visible(caller))

    def validate_arguments(self, name: str, arguments_json: str,
                           caller: Principal = ANONYMOUS) -> ValidationResult:
        return self.activator.validate_arguments(name, arguments_json, self.visible(caller))

    def _carried(self) -> tuple[str, Mapping[str, SkillDigests] | None]:
        snapshot = self._snapshot  # the served version's folder (and the files it carries)
        return snapshot.info.path, snapshot.digests

    def _lookup(self, name: str) -> Skill | None:
        snapshot = self._snapshot
        pos = snapshot.position(name)
        return snapshot.skills[pos] if pos is not None else None

    def explain(self, query: RouteQuery) -> RouteResult:
        return self.route(query, explain=True)

    def skills(self, caller: Principal = ANONYMOUS) -> tuple[Skill, ...]:
        """``caller``'s view: one skill per name, by name."""
        return self.visible(caller).skills()

    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self._snapshot.diagnostics

    def info(self) -> IndexInfo:
        return self._snapshot.info
