"""A caller's view over one index snapshot: its skills by name, made once per (snapshot,
catalogs, deny) and kept in a bounded cache (``router.access.view`` says what a view holds)."""

from __future__ import annotations

import threading
from dataclasses import replace

from router.access.model import Principal
from router.access.view import View, view_of
from router.index.dense import EXACT_WITHIN, within_index
from router.index.store import IndexSnapshot
from router.index.versions.layout import IndexInfo
from router.routing.calibrated import gate_of
from router.skills.catalogs import complete_order
from router.skills.model import Diagnostic, Skill

VIEWS_KEPT = 256
VECTOR_BYTES_KEPT = 256 * 1024 * 1024  # the small views' own indexes, all views together


class Visible:
    """The skills of ``view`` in ``snap``, looked up by name (a ``SkillLookup``)."""

    def __init__(self, snap: IndexSnapshot, view: View) -> None:
        self.snap, self.view = snap, view

    def skill(self, name: str) -> Skill | None:
        pos = self.view.position(name)
        return self.snap.skills[pos] if pos is not None else None

    def names(self) -> list[str]:
        return self.view.names()

    def key(self, name: str) -> str:
        """The record key (catalog and name) of ``name`` in the view; ``name`` if not held."""
        found = self.skill(name)
        return found.key if found is not None else name

    def skills(self) -> tuple[Skill, ...]:
        """One skill per name held, sorted by name."""
        return tuple(self.snap.skills[self.view.positions[n]] for n in self.view.names())

    def variants(self) -> tuple[Skill, ...]:
        """Every skill of the view's catalogs, shadowed variants too (the index's order)."""
        if self.view.whole:
            return self.snap.skills
        return tuple(s for s in self.snap.skills if self.view.holds(s.catalog, s.name))

    def info(self) -> IndexInfo:
        """The served version's info, its counts those of the view's catalogs (skills, shadowed
        variants too, and the example rows of those skills) and its gate theirs."""
        info = self.snap.info
        if self.view.whole:
            return info
        held = [self.view.holds(s.catalog, s.name) for s in self.snap.skills]
        examples = self.snap.examples
        taught = 0 if examples is None else sum(held[int(k)] for k in examples.skill)
        calibration = gate_of(self.snap, self.view).calibration
        return replace(info, skill_count=sum(held), example_count=taught,
                       calibrated_gate=calibration.min_dense if calibration else 0.0)

    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """The index's discovery diagnostics of the view's catalogs."""
        if self.view.whole:
            return self.snap.diagnostics
        return tuple(d for d in self.snap.diagnostics if d.catalog in self.view.catalogs)


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
