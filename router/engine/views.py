"""Each caller's view of the served snapshots, made once per (snapshot, catalogs, deny) and kept
in a bounded cache (``router.access.view`` says what a view holds; ``router.routing.visible``
looks skills up in one); and the size of each view's whole catalog, kept the same way."""

from __future__ import annotations

import threading
from dataclasses import replace

from router.access.model import Principal
from router.access.view import View, view_of
from router.config import RoutingConfig
from router.index.dense import EXACT_WITHIN, within_index
from router.index.store import IndexSnapshot
from router.routing.model import RouteQuery
from router.routing.result import full_catalog_size
from router.skills.catalogs import complete_order

VIEWS_KEPT = 256
VECTOR_BYTES_KEPT = 256 * 1024 * 1024  # the small views' own indexes, all views together
SIZES_KEPT = 64  # whole-catalog sizes: a few formats of the live snapshots' views fit


class ViewCache:
    """Views of the served snapshots, at most ``kept`` (cleared when full: snapshots and
    principals come and go, and a view is cheap to make again)."""

    def __init__(self, kept: int = VIEWS_KEPT, vector_bytes: int = VECTOR_BYTES_KEPT) -> None:
        self._kept, self._budget = kept, vector_bytes
        self._views: dict[tuple[object, ...], View] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def view(self, snap: IndexSnapshot, principal: Principal) -> View:
        if principal.sees_everything:
            return snap.everything
        key = (snap.info.path, snap.info.version, principal.catalogs, principal.deny)
        with self._lock:
            found = self._views.get(key)
        if found is not None:
            return found
        order = complete_order(snap.catalogs, (s.catalog for s in snap.skills))
        made = view_of([(s.catalog, s.name) for s in snap.skills], order, principal)
        size = 0
        rows = made.rows
        if rows is not None and len(rows) <= EXACT_WITHIN:
            # a small view is searched exactly, in an index of its own rows made once
            made = replace(made, index=within_index(snap.vectors, rows))
            size = len(rows) * int(snap.vectors.shape[1]) * 4
        with self._lock:
            if len(self._views) >= self._kept or self._bytes + size > self._budget:
                self._views.clear()
                self._bytes = 0
            self._views[key] = made
            self._bytes += size
        return made


class CatalogSizes:
    """The characters and entries of a view's whole catalog (``full_catalog_size``) per
    (snapshot, format, activation mode, locations, view): rendering every skill costs
    milliseconds at 10k skills, so it is done once. Cleared when full (snapshots come and go);
    a lost race recomputes the same value."""

    def __init__(self, kept: int = SIZES_KEPT) -> None:
        self._kept = kept
        self._sizes: dict[tuple[object, ...], tuple[int, int]] = {}

    def __call__(self, snap: IndexSnapshot, query: RouteQuery, config: RoutingConfig,
                 view: View) -> tuple[int, int]:
        key = (snap.info.path, snap.info.version, query.format, config.activation_mode,
               config.include_location, view.key)
        found = self._sizes.get(key)
        if found is None:
            found = full_catalog_size(snap, query, config, view)
            if len(self._sizes) >= self._kept:
                self._sizes.clear()
            self._sizes[key] = found
        return found
