"""A caller's view over one index snapshot: its skills by name (``router.access.view`` says what
a view holds; the Engine keeps the views it made: ``router.engine.views``)."""

from __future__ import annotations

from dataclasses import replace

from router.access.view import View
from router.index.store import IndexSnapshot
from router.index.versions.layout import IndexInfo
from router.routing.calibrated import gate_of
from router.skills.model import Diagnostic, Skill


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
