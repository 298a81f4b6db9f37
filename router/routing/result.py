"""A turn's plan and the result made from it (pure).

``Plan`` collects what a turn picked (in catalog order) and, for Explain, every candidate's
scores and reason; ``narrowed`` renders the picked skills into the catalog within its budget.
``filter_reason`` is the one rule for which skills may be retrieved at all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from router.access.view import View
from router.config import RoutingConfig
from router.index.store import IndexSnapshot
from router.routing import catalog
from router.routing.fusion import Fused
from router.routing.model import (
    Candidate,
    DropReason,
    Reason,
    RoutedSkill,
    RouteQuery,
    RouteResult,
)
from router.skills.model import Skill


@dataclass
class Plan:
    """What one turn picked, in catalog order, and (for Explain) what happened to each
    candidate."""

    explain: bool = False  # record every candidate's scores and reason (Explain only)
    use_examples: bool = True  # example requests may lift scores (not when a skill is named)
    picked: list[tuple[int, Reason, float]] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)
    candidates: dict[int, Candidate] = field(default_factory=dict)
    matched: dict[int, str] = field(default_factory=dict)  # skill row -> closest example
    description_best: float | None = None  # best description cosine, when examples lifted it
    closest_example: float = -1.0  # cosine of the closest positive example request

    def note(self, snap: IndexSnapshot, f: Fused, kept: bool, reason: DropReason) -> None:
        if self.explain:
            self.candidates[f.index] = Candidate(
                name=snap.skills[f.index].name, dense_score=f.dense, lexical_score=f.lexical,
                fused_score=f.fused, kept=kept, reason=reason,
                matched_example=self.matched.get(f.index, ""))

    def add(self, pos: int, reason: Reason, score: float) -> bool:
        if pos in self.seen:
            return False
        self.seen.add(pos)
        self.picked.append((pos, reason, score))
        return True


def filter_reason(skill: Skill) -> DropReason | None:
    """Why ``skill`` may not be retrieved, None when it may: exactly the skills that are not
    ``Skill.routable`` (the rows a snapshot keeps as ``unroutable``) get a reason."""
    if skill.routable:
        return None
    if not skill.enabled:
        return DropReason.DISABLED
    if skill.deprecated:
        return DropReason.DEPRECATED
    return DropReason.NOT_MODEL_INVOCABLE


def narrowed(snap: IndexSnapshot, query: RouteQuery, config: RoutingConfig, plan: Plan,
             unknown: list[str], view: View | None = None, project: Sequence[int] = (),
             whole: tuple[int, int] | None = None) -> RouteResult:
    """The turn's result: the picked skills that fit the catalog budget, rendered; the rest
    marked over budget among the candidates when explaining (``plan.explain``)."""
    picked = plan.picked
    if query.format.tools_only:  # instruction-only skills are no tools: not shown, not counted
        picked = [p for p in picked if snap.skills[p[0]].parameters is not None]
    routed = [RoutedSkill(name=snap.skills[p].name, description=snap.skills[p].description,
                          location=snap.skills[p].location, score=float(score), reason=reason,
                          parameters_json=_parameters_json(snap.skills[p]),
                          catalog=snap.skills[p].catalog, tool_name=_tool_name(snap.skills[p]))
              for p, reason, score in picked]
    loc = config.include_location
    entries = [catalog.Entry(r.name, r.description, r.location if loc else "", r.tool_name,
                             r.parameters_json) for r in routed]
    shown = catalog.fit_budget(entries, query.format, config.activation_mode,
                               query.max_catalog_chars)
    text = catalog.render(entries[:shown], query.format, config.activation_mode)
    tool = catalog.activate_tool(entries[:shown], query.format)
    candidates: tuple[Candidate, ...] = ()
    if plan.explain:
        for pos, _reason, score in picked[shown:]:
            old = plan.candidates.get(pos)
            plan.candidates[pos] = (
                replace(old, kept=False, reason=DropReason.OVER_BUDGET) if old else
                Candidate(snap.skills[pos].name, 0.0, 0.0, float(score), False,
                          DropReason.OVER_BUDGET))
        candidates = tuple(sorted(plan.candidates.values(), key=lambda c: -c.fused_score))
    return RouteResult(
        skills=tuple(routed[:shown]), catalog_text=text, index_version=snap.info.version,
        full_catalog_chars=full_catalog_chars(snap, query, config, view, project, whole),
        catalog_chars=len(text),
        routed_count=len(routed), unknown_explicit=tuple(unknown), candidates=candidates,
        activate_tool_json=tool)


def _parameters_json(skill: Skill) -> str:
    if skill.parameters is None:
        return ""
    return json.dumps(skill.parameters, ensure_ascii=False, sort_keys=True)


def _tool_name(skill: Skill) -> str:
    """A callable skill's name as the model APIs see it; "" for an instruction-only one."""
    return skill.api_name if skill.parameters is not None else ""


def entry_of(skill: Skill, config: RoutingConfig) -> catalog.Entry:
    return catalog.Entry(skill.name, skill.description,
                         skill.location if config.include_location else "", _tool_name(skill),
                         _parameters_json(skill))


def _shown_in(skill: Skill, query: RouteQuery) -> bool:
    """May ``skill`` be in a catalog of ``query``'s format at all?"""
    return filter_reason(skill) is None and (
        not query.format.tools_only or skill.parameters is not None)


def full_catalog_size(snap: IndexSnapshot, query: RouteQuery, config: RoutingConfig,
                      view: View) -> tuple[int, int]:
    """The characters and entries of the catalog an agent would inject without routing: every
    routable skill of the caller's ``view``."""
    held = [snap.skills[p] for p in sorted(view.positions.values())]
    entries = [entry_of(s, config) for s in held if _shown_in(s, query)]
    return len(catalog.render(entries, query.format, config.activation_mode)), len(entries)


def full_catalog_chars(snap: IndexSnapshot, query: RouteQuery, config: RoutingConfig,
                       view: View | None = None, project: Sequence[int] = (),
                       whole: tuple[int, int] | None = None) -> int:
    """Size of the catalog an agent would inject without routing (every routable skill of
    the caller's ``view``, default every catalog's), with the turn's ``project`` rows (they
    replace the view's skills of their names). ``whole``: the view's own
    ``full_catalog_size``, when the caller kept it (rendering every skill costs milliseconds
    at 10k skills: the Engine keeps them, ``router.engine.views.CatalogSizes``)."""
    view = view or snap.everything
    found = whole or full_catalog_size(snap, query, config, view)
    if not project:
        return found[0]
    added = [snap.skills[p] for p in project]
    replaced = [view.position(s.name) for s in added]
    removed = [snap.skills[p] for p in replaced if p is not None]
    return catalog.grown_size(*found, [entry_of(s, config) for s in added if _shown_in(s, query)],
                              [entry_of(s, config) for s in removed if _shown_in(s, query)],
                              query.format, config.activation_mode)
