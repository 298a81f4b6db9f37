"""Per-turn routing (pure: an index snapshot, query vectors and a request in; a result out):
``rank`` then ``render``.

Order of the narrowed catalog: explicit ``/name`` skills, always-on skills, skills already
active in the agent's context, then retrieved skills by fused score. No skill appears twice;
skills that are disabled, deprecated or not model-invocable are never retrieved. A turn sees
only the caller's view (``router.access.view``): names are looked up in it and retrieval
searches within it, so nothing outside it is ranked, shown or counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from router.access.view import View
from router.calibration.catalog_gate import ViewGate
from router.common.tracing import CANDIDATES, FUSE, GATE, RENDER, SEARCH, SHOWN, stage
from router.config import RoutingConfig
from router.examples.scoring import with_examples
from router.index import dense
from router.index.store import IndexSnapshot
from router.routing import reveal
from router.routing.attribution import attributed
from router.routing.calibrated import (
    example_mode,
    fitted_fusion,
    gate_in_force,
    gate_of,
    off_topic_turn,
    under_floor,
)
from router.routing.fusion import (
    Fused,
    FusionConfig,
    Hits,
    fuse_views,
    gate,
    history_text,
)
from router.routing.model import DropReason, Reason, RouteQuery, RouteResult
from router.routing.project import Overlay
from router.routing.query_text import QueryVectors, explicit_names
from router.routing.result import Plan, entry_of, filter_reason, narrowed


@dataclass(frozen=True)
class Settings:
    """The configuration every turn routes with (made once per configuration, not per turn):
    the ``routing`` section and the fusion and gate settings (fitted per snapshot by
    ``router.routing.calibrated.fitted_fusion``)."""

    routing: RoutingConfig
    fusion: FusionConfig


def _explicit(snap: IndexSnapshot, view: View, message: str, plan: Plan) -> list[str]:
    names, _ = explicit_names(message)
    unknown = []
    for i, name in enumerate(names):
        pos = view.position(name.lower())
        if pos is None:
            if i == 0 and message.lstrip()[1:].startswith(name):
                unknown.append(name)  # a leading /word is meant as a skill; elsewhere a path
            continue
        skill = snap.skills[pos]
        if skill.enabled and skill.user_invocable:
            plan.add(pos, Reason.EXPLICIT, 1.0)
    return unknown


def always_on_positions(snap: IndexSnapshot, config: RoutingConfig,
                        view: View | None = None) -> list[int]:
    view = view or snap.everything
    named = [view.position(n) for n in config.always_on]
    flagged = [p for p in snap.always_on_flagged
               if view.position(snap.skills[p].name) == p]
    out: list[int] = []
    for pos in [*(p for p in named if p is not None), *flagged]:
        if pos not in out and filter_reason(snap.skills[pos]) is None:
            out.append(pos)
    return out[: config.max_always_on]


def _dense_hits(snap: IndexSnapshot, vectors: QueryVectors, fusion: FusionConfig,
                plan: Plan, view: View) -> list[Hits]:
    """Per view, description cosines, lifted by example requests where the index has them
    and ``plan.use_examples`` (``router.examples.scoring``); the closest example per skill is
    noted for Explain."""
    found = dense.search_many(snap.dense, vectors.matrix, fusion.depth, rescore=snap.vectors,
                              within=view.rows, within_exact=view.index)
    examples = snap.examples
    if examples is None or not plan.use_examples:
        return [Hits(ids, scores) for ids, scores in found]
    mode = example_mode(snap)
    plan.description_best = max((float(s[0]) for _, s in found if len(s)), default=0.0)
    out = []
    for (ids, scores), query in zip(found, vectors.matrix, strict=True):
        evidence = with_examples(ids, scores, examples, query, mode)
        for skill, row in evidence.matched.items():
            plan.matched.setdefault(skill, examples.queries[row])
        plan.closest_example = max(plan.closest_example, evidence.closest)
        out.append(Hits(evidence.ids, evidence.scores))
    return out


def _retrieve(snap: IndexSnapshot, view: View, vectors: QueryVectors, history: Sequence[str],
              fusion: FusionConfig, plan: Plan, project: Overlay | None = None,
              marks: tuple[str, str] = ("", "")) -> list[Fused]:
    """The turn's candidates, fused (``marks``: the index version and principal its stages'
    spans carry)."""
    if not vectors.views or not view.positions:
        return []
    within = view.rows
    with stage(SEARCH, *marks) as span:
        dense_hits = _dense_hits(snap, vectors, fusion, plan, view)
        lexical = snap.lexical
        if plan.use_examples and snap.lexical_examples is not None:
            lexical = snap.lexical_examples
        texts = list(vectors.views)
        weights = [1.0] * len(texts)
        past = history_text(history, fusion)
        if past and fusion.history_weight > 0:
            texts.append(past)
            weights.append(fusion.history_weight)
        lexical_hits = [Hits(*lexical.search(text, fusion.depth, within), weight=weight)
                        for text, weight in zip(texts, weights, strict=True)]
        if project is not None:
            dense_hits = project.dense_hits(vectors.matrix, dense_hits)
            # the view's term statistics: none of a skill the caller cannot see
            lexical_hits = [project.lexical_hits(lexical.score_texts(text, project.documents,
                                                                     within), hits)
                            for text, hits in zip(texts, lexical_hits, strict=True)]
        span.set_attribute(CANDIDATES, sum(len(h.ids) for h in (*dense_hits, *lexical_hits)))
    with stage(FUSE, *marks) as span:
        baseline = float(vectors.matrix[0] @ snap.centroid)
        fused = fuse_views(dense_hits, lexical_hits, fusion, dense_baseline=baseline)
        if within is not None or project is not None:
            # examples may lift a skill the view does not hold; a project skill hides its
            # namesake
            fused = [f for f in fused if view.position(snap.skills[f.index].name) == f.index]
        span.set_attribute(CANDIDATES, len(fused))
    return fused


def _rank(snap: IndexSnapshot, fused: Sequence[Fused], top_k: int, fusion: FusionConfig,
          plan: Plan, off_topic: bool = False) -> str:
    """Rank the routable candidates into ``plan``; when explaining, say whether the configured
    floor refused them all (``under_floor``, over the candidates the gate saw)."""
    unroutable, explain = snap.unroutable, plan.explain
    routable = [f for f in fused if f.index not in unroutable] if unroutable else list(fused)
    if explain and unroutable:  # notes are kept for Explain only
        for f in fused:
            reason = filter_reason(snap.skills[f.index]) if f.index in unroutable else None
            if reason is not None:
                plan.note(snap, f, False, reason)
    kept, dropped = gate(routable, fusion)
    if off_topic:
        kept, dropped = (), tuple((f, DropReason.BELOW_THRESHOLD) for f in routable)
    if explain:
        for f, why in dropped:
            plan.note(snap, f, False, DropReason(why))
    retrieved = 0
    for f in kept:
        if f.index in plan.seen:
            plan.note(snap, f, True, DropReason.DUPLICATE)
        elif retrieved >= top_k:
            if not explain:
                break  # nothing after the top k is picked or noted
            plan.note(snap, f, False, DropReason.OUTSIDE_TOP_K)
        else:
            retrieved += 1
            plan.add(f.index, Reason.RETRIEVED, f.fused)
            plan.note(snap, f, True, DropReason.KEPT)
    return under_floor(routable, fusion) if plan.explain else ""


def _with_stable(snap: IndexSnapshot, query: RouteQuery, config: RoutingConfig, view: View,
                 result: RouteResult) -> RouteResult:
    """``result`` with the caller's always-on skills and the stable block they make (of the
    indexed view: a turn's project skills never change it)."""
    always = [snap.skills[p] for p in always_on_positions(snap, config, view)]
    text = reveal.stable_text([entry_of(s, config) for s in always], query.format,
                              config.activation_mode, result.full_catalog_chars > 0)
    return replace(result, always_on=tuple(s.name for s in always), stable_text=text)


@dataclass(frozen=True)
class Ranked:
    """A turn ranked (``rank``), before its catalog is rendered (``render``): the snapshot and
    view it ranked over (project skills laid over them), the caller's ``base`` view, the plan
    of what it picked, and what Explain tells of the gate."""

    snap: IndexSnapshot
    base: View
    plan: Plan
    unknown: tuple[str, ...]
    extra: range | tuple[int, ...]
    marks: tuple[str, str]  # what the stages' spans carry
    judged: ViewGate  # the caller's catalogs' gate
    fusion: FusionConfig  # tuned for the snapshot
    explicit: bool  # the user named a skill
    refused: str  # why the gate refused the turn, for Explain
    indexed: IndexSnapshot  # the snapshot without the project skills (the stable block's)


def rank(snap: IndexSnapshot, query: RouteQuery, vectors: QueryVectors, settings: Settings,
         *, explain: bool = False, view: View | None = None,
         project: Overlay | None = None) -> Ranked:
    """Rank one validated turn; ``vectors`` is ``encode_turn`` of ``retrieval_text(query)``;
    ``view``: the caller's (default: every catalog's); ``project``: the turn's project skills
    laid over ``snap`` and ``view`` (``router.routing.project``)."""
    base, indexed = view or snap.everything, snap
    snap, view = (project.snap, project.view) if project is not None else (snap, base)
    plan = Plan(explain=explain)
    config = settings.routing
    fusion = fitted_fusion(snap, settings.fusion)
    unknown = _explicit(snap, view, query.message, plan)
    for pos in always_on_positions(snap, config, view):
        plan.add(pos, Reason.ALWAYS_ON, 0.0)
    # No example may make a skill win a turn that names a skill explicitly.
    explicit = any(reason is Reason.EXPLICIT for _, reason, _ in plan.picked)
    plan.use_examples = not explicit
    marks = (snap.info.version, query.caller.name)  # what the stages' spans carry
    fused = _retrieve(snap, view, vectors, query.history, fusion, plan, project, marks)
    scores = {f.index: f.fused for f in fused} if query.active_skills else {}
    for name in query.active_skills:
        active = view.position(name)
        if active is not None:
            plan.add(active, Reason.ACTIVE, scores.get(active, 0.0))
    judged = gate_of(snap, base)  # the caller's catalogs' gate
    refused = off_topic_turn(judged, vectors.matrix, fused, fusion,
                             (plan.description_best, plan.closest_example))
    if query.format.tools_only:  # the top k of the tools: instruction-only skills are no tools
        fused = [f for f in fused if snap.skills[f.index].parameters is not None]
    with stage(GATE, *marks) as span:
        floor = _rank(snap, fused, query.top_k or config.top_k, fusion, plan, bool(refused))
        span.set_attribute(CANDIDATES, len(fused))
    if explain:  # which field and which step of the request each candidate matched
        plan.candidates = attributed(plan.candidates, snap, vectors)
    extra = range(project.first, len(snap.skills)) if project is not None else ()
    return Ranked(snap, base, plan, tuple(unknown), extra, marks, judged, fusion, explicit,
                  refused or floor, indexed)


def render(ranked: Ranked, query: RouteQuery, config: RoutingConfig,
           whole: tuple[int, int] | None = None) -> RouteResult:
    """The ranked turn's result: its catalog rendered, and for Explain what it reports
    (``whole``: the caller's whole catalog's size, ``router.routing.result.full_catalog_chars``,
    when kept)."""
    snap, plan = ranked.snap, ranked.plan
    with stage(RENDER, *ranked.marks) as span:
        result = narrowed(snap, query, config, plan, list(ranked.unknown), ranked.base,
                          ranked.extra, whole)
        result = _with_stable(ranked.indexed, query, config, ranked.base, result)
        span.set_attribute(SHOWN, len(result.skills))
    if not plan.explain:
        return result
    fusion = ranked.fusion
    examples = snap.examples is not None and not ranked.explicit
    return replace(result, gate=gate_in_force(ranked.judged, fusion),
                   dense_weight=fusion.dense_weight,
                   example_mode=example_mode(snap) if examples else "",
                   lexical_with_examples=examples and snap.lexical_examples is not None,
                   settings_reason=_settings_reason(snap, examples),
                   refused=ranked.refused)


def _settings_reason(snap: IndexSnapshot, examples: bool) -> str:
    """Why the index's fitted settings were chosen: from its examples when a turn is scored
    with them, or from the catalog's own requests when it has none."""
    if snap.tuning is None or not (examples or snap.examples is None):
        return ""
    return snap.tuning.reason
