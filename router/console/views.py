"""What the console's pages show, computed from the gRPC responses: plain dicts and lists for
the templates (which escape every value). Pure: no HTTP, no gRPC calls."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from router.console.learning_views import NEVER, NUMERIC_SORTS, no_counters
from router.v1 import router_pb2 as pb

MAX_HISTORY = 20
MAX_TOP_K = 200
MAX_NAME = 128  # a principal's name (router.access.principals)
SORTS = ("name", "scope", "kind", "status", *NUMERIC_SORTS)
FLAGS = ("enabled", "deprecated", "always_on", "model_invocable", "user_invocable")
FILTERS = (*FLAGS, NEVER)  # the flags, and the skills routed often but never activated


@dataclass(frozen=True)
class RouteForm:
    """The /route query string: message, top_k, history (one turn a line), active skills, the
    principal to route as (``as``: delegation, "" = the caller itself) and the conversation
    (``session``: what it has been shown is listed; Explain changes nothing of it)."""

    message: str = ""
    top_k: int = 0
    history: tuple[str, ...] = ()
    active: tuple[str, ...] = ()
    acting: str = ""
    session: str = ""

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> RouteForm:
        try:
            top_k = int(params.get("top_k", "") or 0)
        except ValueError:
            top_k = 0
        history = [line.strip() for line in params.get("history", "").splitlines()]
        active = [name.strip() for name in params.get("active", "").split(",")]
        return cls(message=params.get("message", ""), top_k=max(0, min(top_k, MAX_TOP_K)),
                   history=tuple(h for h in history if h)[-MAX_HISTORY:],
                   active=tuple(a for a in active if a),
                   acting=params.get("as", "").strip()[:MAX_NAME],
                   session=params.get("session", "").strip()[:MAX_NAME])


def _percent(value: float, scale: float) -> float:
    return round(max(0.0, min(100.0, 100.0 * value / scale)), 1) if scale > 0 else 0.0


def candidate_rows(candidates: Sequence[pb.Candidate]) -> list[dict[str, Any]]:
    """One row per candidate, with bar widths (percent): dense cosine on [0, 1], lexical and
    fused scaled to the largest among the candidates."""
    top_lexical = max((c.lexical_score for c in candidates), default=0.0)
    top_fused = max((c.fused_score for c in candidates), default=0.0)
    return [{"rank": i + 1, "name": c.name, "dense": c.dense_score, "lexical": c.lexical_score,
             "fused": c.fused_score, "kept": c.kept, "reason": c.reason,
             "matched_example": c.matched_example, "matched_step": c.matched_step,
             "matched_field": "description and body" if c.matched_field == "both"
             else c.matched_field,
             "dense_pct": _percent(c.dense_score, 1.0),
             "lexical_pct": _percent(c.lexical_score, top_lexical),
             "fused_pct": _percent(c.fused_score, top_fused)}
            for i, c in enumerate(candidates)]


def explain_view(answer: pb.ExplainResponse) -> dict[str, Any]:
    """The /route page's data: the narrowed catalog, the candidates and the settings."""
    route = answer.route
    return {"candidates": candidate_rows(answer.candidates),
            "gate": answer.gate, "gate_pct": _percent(answer.gate, 1.0),
            "dense_weight": answer.dense_weight, "example_mode": answer.example_mode,
            "lexical_with_examples": answer.lexical_with_examples,
            "settings_reason": answer.settings_reason, "refused": answer.refused,
            "shown": [s.name for s in route.skills], "catalog_text": route.catalog_text,
            "index_version": route.index_version, "routed_count": route.routed_count,
            "shown_count": route.shown_count, "catalog_chars": route.catalog_chars,
            "full_catalog_chars": route.full_catalog_chars,
            "unknown_explicit": list(route.unknown_explicit),
            "session_shown": [(s.name, s.turn) for s in answer.shown],
            "first_shown": [s.name for s in route.skills if s.first_shown],
            "stable_text": route.stable_text, "reveal_text": route.reveal_text}


def _status(skill: pb.SkillInfo) -> str:
    if skill.quarantined:
        return "quarantined"
    if not skill.enabled:
        return "disabled"
    if skill.deprecated:
        return "deprecated"
    if skill.always_on:
        return "always on"
    return "routable" if skill.model_invocable else "user only"


def skill_row(skill: pb.SkillInfo) -> dict[str, Any]:
    return {"name": skill.name, "description": skill.description, "location": skill.location,
            "scope": pb.SkillScope.Name(skill.scope).removeprefix("SKILL_SCOPE_").lower(),
            "kind": pb.SkillKind.Name(skill.kind).removeprefix("SKILL_KIND_").lower(),
            "status": _status(skill), "quarantined": skill.quarantined,
            "approved": skill.approved, "admission_digest": skill.admission_digest,
            "catalog": skill.catalog or "default",
            "findings": [{"severity": f.severity, "rule": f.rule, "message": f.message}
                         for f in skill.findings],
            **{flag: getattr(skill, flag) for flag in FLAGS}}


def _sort_key(key: str) -> Callable[[dict[str, Any]], tuple[Any, str]]:
    if key in NUMERIC_SORTS:
        return lambda r: (-float(r[key]), r["name"])
    return lambda r: (str(r[key]), r["name"])


def skills_view(listing: pb.ListSkillsResponse, query: str, flag: str, sort: str,
                counters: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The /skills page: rows with their traffic ``counters`` (``learning_views.counter_rows``)
    filtered by ``query`` (name or description, case-insensitive) and ``flag`` (one of FILTERS,
    or "not_<flag>"), sorted by ``sort`` (one of SORTS; counters largest first)."""
    counters = counters or {}
    rows = [{**skill_row(s), **counters.get(s.name, no_counters())} for s in listing.skills]
    needle = query.strip().lower()
    if needle:
        rows = [r for r in rows if needle in r["name"].lower()
                or needle in r["description"].lower()]
    wanted = flag.removeprefix("not_")
    if wanted in FILTERS:
        rows = [r for r in rows if bool(r[wanted]) != flag.startswith("not_")]
    key = sort if sort in SORTS else "name"
    rows.sort(key=_sort_key(key))
    return {"skills": rows, "total": len(listing.skills), "query": query, "flag": flag,
            "sort": key, "sorts": SORTS, "flags": FILTERS,
            "diagnostics": diagnostic_rows(listing.diagnostics),
            "index_version": listing.index_version}


def diagnostic_rows(diagnostics: Sequence[pb.Diagnostic]) -> list[dict[str, str]]:
    return [{"level": pb.DiagnosticLevel.Name(d.level).removeprefix("DIAGNOSTIC_LEVEL_").lower(),
             "path": d.path, "message": d.message} for d in diagnostics]


def tuning(text: str) -> list[tuple[str, str]]:
    """The fitted settings (``tuning_json``) as (key, value) pairs; the raw text when it is
    not a JSON object."""
    if not text:
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return [("raw", text)]
    if not isinstance(data, dict):
        return [("raw", text)]
    return [(str(k), json.dumps(v) if not isinstance(v, str) else v) for k, v in data.items()]


def index_view(info: pb.GetIndexInfoResponse, listing: pb.ListSkillsResponse) -> dict[str, Any]:
    return {"info": [("version", info.version), ("model", info.model),
                     ("dimension", str(info.dimension)), ("skills", str(info.skill_count)),
                     ("built at", info.built_at), ("format version", str(info.format_version)),
                     ("path", info.path),
                     ("calibrated gate", f"{info.calibrated_gate:.3f}" if info.calibrated_gate
                      else "not calibrated"), ("example rows", str(info.example_count))],
            "tuning": tuning(info.tuning_json),
            "diagnostics": diagnostic_rows(listing.diagnostics)}


def reindex_summary(done: pb.ReindexResponse) -> str:
    swapped = "swapped in" if done.swapped else "not swapped"
    return (f"index {done.index_version} {swapped}: {done.added} added, {done.changed} "
            f"changed, {done.removed} removed, {done.unchanged} unchanged in "
            f"{done.duration_seconds:.1f}s; {len(done.diagnostics)} diagnostics")
