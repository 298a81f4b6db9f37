"""The application object: a loaded index snapshot plus an embedder, behind a thread-safe API.

The gRPC servicer and the CLI both call this; it knows nothing of either. The snapshot is
immutable and swapped by one reference assignment, so a route in flight finishes on the
snapshot it started with.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from router.access.model import ANONYMOUS, Principal
from router.access.ownership import check_session_fields, check_session_owner
from router.activation.activator import Activation, Activator, Resource, ResourceList
from router.config import DEFAULT_SOURCE, Config
from router.encoders.base import Embedder
from router.encoders.cache import QueryCache
from router.encoders.factory import loading_in_background
from router.engine.approving import Approved, Revoked, approve_skill, revoke_approval
from router.engine.project_turns import ProjectTurns
from router.engine.reindexing import Reindexing
from router.engine.reveals import activated
from router.engine.sessions import SessionLimits, open_session_state
from router.engine.turn import ROUTE, TURN, Parts, Stage, Turn, checked, run
from router.engine.views import CatalogSizes, ViewCache
from router.errors import IndexUnavailable, NotFound
from router.index import dense
from router.index.query_encoder import serving_embedder, switch_query_embedder
from router.index.serving import load_serving_index
from router.index.store import IndexSnapshot
from router.index.versions.encoder import is_fine_tuned
from router.index.versions.layout import IndexInfo
from router.learning.backends import open_store
from router.learning.recorder import Recorder
from router.learning.review import Review
from router.reindex.reindexer import Reindexer
from router.routing import router as core
from router.routing.fusion import FusionConfig
from router.routing.model import RouteQuery, RouteResult
from router.routing.visible import Visible
from router.skills.model import Diagnostic, Skill
from router.skills.sources.base import create_source
from router.skills.sources.version_files import VersionFilesSource

if TYPE_CHECKING:
    from collections.abc import Mapping

    from router.activation.arguments import ValidationResult
    from router.skills.digests import SkillDigests

log = logging.getLogger(__name__)


class Engine(Reindexing):
    """Route, explain and list against the current index snapshot."""

    def __init__(self, snapshot: IndexSnapshot, config: Config, embedder: Embedder,
                 fusion: FusionConfig | None = None, index_dir: str | Path | None = None) -> None:
        if snapshot.info.model != embedder.model_id:
            raise IndexUnavailable(
                f"index {snapshot.info.version} was built with {snapshot.info.model!r} "
                f"but the embedder is {embedder.model_id!r}; rebuild the index")
        dense.set_ef_search(snapshot.dense, config.index.hnsw_ef_search)
        # The snapshot and the query encoder of its model, swapped together in one assignment
        # (a version built with a fine-tuned model brings its own encoder).
        self._served: tuple[IndexSnapshot, Embedder] = (snapshot, embedder)
        self._config = config
        self._fusion = fusion or FusionConfig()
        self._settings = core.Settings(config.routing, self._fusion)  # once, not per turn
        self._cache = QueryCache()
        self._views = ViewCache()
        self._sizes = CatalogSizes()
        self._project = ProjectTurns(config.index, Path(index_dir) if index_dir else None,
                                     config.routing)
        self.index_dir = Path(index_dir) if index_dir is not None else None
        self.remote = None  # the bucket index_dir mirrors, if any
        # Learning from traffic (router.learning), and what operators see of it (the same store)
        store = (open_store(self.index_dir, config.feedback)
                 if self.index_dir is not None or config.feedback.store_url else None)
        self.recorder = Recorder(store)
        self.review = Review(store, self.recorder.enabled)
        self.sessions = open_session_state(store, SessionLimits(
            max_shown_per_session=config.routing.max_shown_per_session))
        self.activator = Activator(self._lookup, lambda: [s.name for s in self.skills()],
                                   self.sessions, digests=lambda: self._snapshot.digests,
                                   source=VersionFilesSource(
                                       self._carried,
                                       create_source(snapshot.info.source or DEFAULT_SOURCE),
                                       disk=lambda: self.remote is None))
        self._parts = Parts(config, self._fusion, self._settings, self._cache, self._views,
                            self._sizes, self._project, self.sessions, self.recorder,
                            self.activator, self.visible)
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
                is_fine_tuned(snapshot.info.model) or is_fine_tuned(embedder.model_id)):
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
        snapshot = self._snapshot
        self._sizes(snapshot, self.validate(RouteQuery(message="warm up")),
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
        dense.set_ef_search(snapshot.dense, self._config.index.hnsw_ef_search)
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
        """Sync and close what the Engine writes (what sessions were shown, then the feedback
        segment of this process)."""
        self.sessions.close()
        self.recorder.close()

    def validate(self, query: RouteQuery) -> RouteQuery:
        """Check a request; return it with defaults filled. Raises InvalidRequest; changes
        nothing (``route`` claims the session)."""
        return checked(self._parts, query)

    def visible(self, caller: Principal = ANONYMOUS) -> Visible:
        """The served snapshot as ``caller`` sees it (``router.access.view``)."""
        snapshot = self._snapshot
        return Visible(snapshot, self._views.view(snapshot, caller))

    def _turn(self, query: RouteQuery, explain: bool,
              stages: tuple[Stage, ...]) -> RouteResult:
        snapshot, embedder = self._served  # the whole turn on one snapshot
        return run(self._parts, Turn(query, snapshot, embedder, explain), stages)

    def route(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        """Route a turn over the view of its caller (``query.caller``): ``ROUTE``."""
        return self._turn(query, explain, ROUTE)

    def route_turn(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        """``route``, recorded, and a ``/name`` the user typed activated (in
        ``explicit_content``): ``TURN``."""
        return self._turn(query, explain, TURN)

    def activate(self, name: str, session_id: str = "", active_skills: tuple[str, ...] = (),
                 include_frontmatter: bool = False, route_id: str = "",
                 principal_name: str = "", caller: Principal = ANONYMOUS) -> Activation:
        """Activate ``name`` of ``caller``'s view (``principal_name``: whose session and route
        it is); what it teaches is keyed by the skill's catalog and name."""
        self._check_owner(session_id, route_id, principal_name)
        if name in self.sessions.project_names(principal_name, session_id):
            raise NotFound(f"skill {name!r} is a project skill sent with the turn: activation "
                           "stays with the gateway (read the SKILL.md at its location)")
        visible = self.visible(caller)
        done = self.activator.activate(name, session_id, active_skills, include_frontmatter,
                                       within=visible)
        revealed = activated(self.sessions, self._config.routing, session_id, done.name,
                             visible)
        if not done.already_active:  # a repeat in the conversation is not an activation
            self.recorder.on_activate(visible.key(done.name), session_id, route_id,
                                      principal=principal_name, revealed=revealed)
        return done

    def feedback(self, skill: str, session_id: str, outcome: str, route_id: str = "",
                 principal_name: str = "", caller: Principal = ANONYMOUS) -> bool:
        """Record an outcome for ``skill`` (``router.learning.recorder``); False if not stored."""
        visible = self.visible(caller)
        self.activator.find(skill, visible)  # NotFound (close names suggested): claims nothing
        self._check_owner(session_id, route_id, principal_name)
        return self.recorder.on_feedback(visible.key(skill), session_id, outcome, route_id,
                                         principal_name)

    def approve_skill(self, name: str, catalog: str, digest: str, note: str = "",
                      caller: Principal = ANONYMOUS) -> Approved:
        """ApproveSkill: ``caller``'s approval of a quarantined skill of its view, stored for
        the next Reindex (``router.engine.approving``)."""
        return approve_skill(self.review.store, self.visible(caller), self.index_dir, name,
                             catalog, digest, caller.name or "anonymous", note)

    def revoke_approval(self, name: str, catalog: str,
                        caller: Principal = ANONYMOUS) -> Revoked:
        """RevokeApproval: drop the approval of a skill of ``caller``'s view."""
        return revoke_approval(self.review.store, self.visible(caller), self.index_dir, name,
                               catalog)

    def _check_owner(self, session_id: str, route_id: str, principal: str) -> None:
        """Activate's and Feedback's check, before anything is written: the route and the
        session are ``principal``'s (a session nobody owns becomes its); PermissionDenied
        otherwise (InvalidRequest for a session id over its cap)."""
        self.recorder.check_route(route_id, principal)
        check_session_fields(session_id, ())
        check_session_owner(self.sessions.claim(session_id, principal), principal)

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
