"""Per-turn routing (pure: an index snapshot, query vectors and a request in; a result out).

Order of the narrowed catalog: explicit ``/name`` skills, always-on skills, skills already
active in the agent's context, then retrieved skills by fused score. No skill appears twice;
skills that are disabled, deprecated or not model-invocable are never retrieved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from router.config import RoutingConfig
from router.index import dense
from router.index.store import IndexSnapshot
from router.routing import catalog
from router.routing.fusion import Fused, FusionConfig, fuse, gate
from router.routing.model import (
    Candidate,
    DropReason,
    Reason,
    RoutedSkill,
    RouteQuery,
    RouteResult,
)
from router.skills.model import Skill

_EXPLICIT = re.compile(r"(?:^|(?<=\s))[/$]([A-Za-z0-9][A-Za-z0-9_-]{0,127})(?=$|[\s.,:;!?)])")


@dataclass(frozen=True)
class QueryVectors:
    """The encoded turn: the message, and the recent history when there is any."""

    message: np.ndarray
    history: np.ndarray | None = None


@dataclass
class _Plan:
    picked: list[tuple[int, Reason, float]] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)
    candidates: dict[int, Candidate] = field(default_factory=dict)

    def add(self, pos: int, reason: Reason, score: float) -> bool:
        if pos in self.seen:
            return False
        self.seen.add(pos)
        self.picked.append((pos, reason, score))
        return True


def explicit_names(message: str) -> tuple[list[str], str]:
    """``/name`` and ``$name`` mentions, and the message with them removed."""
    names = [m.group(1) for m in _EXPLICIT.finditer(message)]
    rest = _EXPLICIT.sub(" ", message).strip()
    return names, rest


def filter_reason(skill: Skill) -> DropReason | None:
    if not skill.enabled:
        return DropReason.DISABLED
    if skill.deprecated:
        return DropReason.DEPRECATED
    if not skill.model_invocable:
        return DropReason.NOT_MODEL_INVOCABLE
    return None


def retrieval_text(query: RouteQuery) -> str:
    return explicit_names(query.message)[1]


def _explicit(snap: IndexSnapshot, message: str, plan: _Plan) -> list[str]:
    names, _ = explicit_names(message)
    unknown = []
    for i, name in enumerate(names):
        pos = snap.position(name.lower())
        skill = snap.skills[pos] if pos is not None else None
        if skill is not None and skill.enabled and skill.user_invocable:
            plan.add(pos, Reason.EXPLICIT, 1.0)  # type: ignore[arg-type]
        elif skill is None and i == 0 and message.lstrip()[1:].startswith(name):
            unknown.append(name)
    return unknown


def always_on_positions(snap: IndexSnapshot, config: RoutingConfig) -> list[int]:
    named = [snap.position(n) for n in config.always_on]
    flagged = [i for i, s in enumerate(snap.skills) if s.always_on]
    out: list[int] = []
    for pos in [p for p in named if p is not None] + flagged:
        if pos not in out and filter_reason(snap.skills[pos]) is None:
            out.append(pos)
    return out[: config.max_always_on]


def _retrieve(snap: IndexSnapshot, text: str, vectors: QueryVectors,
              fusion: FusionConfig) -> list[Fused]:
    if not text or not snap.skills:
        return []
    vec = vectors.message
    if vectors.history is not None and fusion.history_weight > 0:
        vec = vec + fusion.history_weight * vectors.history
        vec = vec / max(float(np.linalg.norm(vec)), 1e-12)
    d_ids, d_scores = dense.search(snap.dense, vec, fusion.depth)
    l_ids, l_scores = snap.lexical.search(text, fusion.depth)
    return fuse(d_ids, d_scores, l_ids, l_scores, fusion)


def _rank(snap: IndexSnapshot, fused: Sequence[Fused], top_k: int, fusion: FusionConfig,
          plan: _Plan) -> None:
    routable = []
    for f in fused:
        reason = filter_reason(snap.skills[f.index])
        if reason is not None:
            plan.candidates[f.index] = _cand(snap, f, False, reason)
        else:
            routable.append(f)
    kept, dropped = gate(routable, fusion)
    for f, why in dropped:
        plan.candidates[f.index] = _cand(snap, f, False, DropReason(why))
    for f in kept:
        if f.index in plan.seen:
            plan.candidates[f.index] = _cand(snap, f, True, DropReason.DUPLICATE)
        elif len([p for p in plan.picked if p[1] is Reason.RETRIEVED]) >= top_k:
            plan.candidates[f.index] = _cand(snap, f, False, DropReason.OUTSIDE_TOP_K)
        else:
            plan.add(f.index, Reason.RETRIEVED, f.fused)
            plan.candidates[f.index] = _cand(snap, f, True, DropReason.KEPT)


def _cand(snap: IndexSnapshot, f: Fused, kept: bool, reason: DropReason) -> Candidate:
    return Candidate(name=snap.skills[f.index].name, dense_score=f.dense,
                     lexical_score=f.lexical, fused_score=f.fused, kept=kept, reason=reason)


def route(snap: IndexSnapshot, query: RouteQuery, vectors: QueryVectors,
          config: RoutingConfig, fusion: FusionConfig, *, explain: bool = False) -> RouteResult:
    """Route one validated turn. ``vectors`` encode ``retrieval_text(query)`` and history."""
    plan = _Plan()
    unknown = _explicit(snap, query.message, plan)
    for pos in always_on_positions(snap, config):
        plan.add(pos, Reason.ALWAYS_ON, 0.0)
    fused = _retrieve(snap, retrieval_text(query), vectors, fusion)
    scores = {f.index: f.fused for f in fused}
    for name in query.active_skills:
        pos = snap.position(name)
        if pos is not None:
            plan.add(pos, Reason.ACTIVE, scores.get(pos, 0.0))
    _rank(snap, fused, query.top_k or config.top_k, fusion, plan)
    return _result(snap, query, config, plan, unknown, explain)


def _result(snap: IndexSnapshot, query: RouteQuery, config: RoutingConfig, plan: _Plan,
            unknown: list[str], explain: bool) -> RouteResult:
    routed = [RoutedSkill(name=snap.skills[p].name, description=snap.skills[p].description,
                          location=snap.skills[p].location, score=float(score), reason=reason,
                          parameters_json=_parameters_json(snap.skills[p]))
              for p, reason, score in plan.picked]
    loc = config.include_location
    entries = [catalog.Entry(r.name, r.description, r.location if loc else "") for r in routed]
    shown = catalog.fit_budget(entries, query.format, config.activation_mode,
                               query.max_catalog_chars)
    text = catalog.render(entries[:shown], query.format, config.activation_mode)
    tool = catalog.activate_tool(entries[:shown], query.format)
    candidates: tuple[Candidate, ...] = ()
    if explain:
        for pos, _reason, score in plan.picked[shown:]:
            old = plan.candidates.get(pos)
            plan.candidates[pos] = Candidate(
                snap.skills[pos].name, old.dense_score if old else 0.0,
                old.lexical_score if old else 0.0, old.fused_score if old else float(score),
                False, DropReason.OVER_BUDGET)
        candidates = tuple(sorted(plan.candidates.values(), key=lambda c: -c.fused_score))
    return RouteResult(
        skills=tuple(routed[:shown]), catalog_text=text, index_version=snap.info.version,
        full_catalog_chars=full_catalog_chars(snap, query, config), catalog_chars=len(text),
        routed_count=len(routed), unknown_explicit=tuple(unknown), candidates=candidates,
        activate_tool_json=tool)


def _parameters_json(skill: Skill) -> str:
    if skill.parameters is None:
        return ""
    return json.dumps(skill.parameters, ensure_ascii=False, sort_keys=True)


def full_catalog_chars(snap: IndexSnapshot, query: RouteQuery, config: RoutingConfig) -> int:
    """Size of the catalog an agent would inject without routing (every routable skill)."""
    key = ("_full_chars", query.format, config.activation_mode, config.include_location)
    cache: dict[tuple[object, ...], int] = snap.__dict__.setdefault("_full_cache", {})
    if key not in cache:
        loc = config.include_location
        entries = [catalog.Entry(s.name, s.description, s.location if loc else "")
                   for s in snap.skills if filter_reason(s) is None]
        cache[key] = len(catalog.render(entries, query.format, config.activation_mode))
    return cache[key]
