"""A caller's view over one index snapshot: its skills by name, made once per (snapshot,
catalogs, deny) and kept in a bounded cache (``router.access.view`` says what a view holds)."""

from __future__ import annotations

import threading

from router.access.model import Principal
from router.access.view import View, view_of
from router.index.store import IndexSnapshot
from router.skills.catalogs import complete_order
from router.skills.model import Skill

VIEWS_KEPT = 256


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


class ViewCache:
    """Views of the served snapshots, at most ``kept`` (cleared when full: snapshots and
    principals come and go, and a view is cheap to make again)."""

    def __init__(self, kept: int = VIEWS_KEPT) -> None:
        self._kept = kept
        self._views: dict[tuple[object, ...], View] = {}
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
        with self._lock:
            if len(self._views) >= self._kept:
                self._views.clear()
            self._views[key] = made
        return made
