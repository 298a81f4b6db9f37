"""Protobuf conversions for routing: Route and Explain.

A RouteRequest becomes a RouteQuery (an unknown ``format`` number is the one check made here);
a RouteResult becomes a RouteResponse or, with its candidates, an ExplainResponse.
"""

from __future__ import annotations

from router.access.model import ANONYMOUS, Principal
from router.errors import InvalidRequest
from router.routing.model import (
    CatalogFormat,
    InlineSkill,
    Reason,
    RoutedSkill,
    RouteQuery,
    RouteResult,
)
from router.service.codec.index import diagnostic_to_proto
from router.skills.limits import truncate_description
from router.v1 import router_pb2 as pb

_FORMATS: dict[int, CatalogFormat] = {
    pb.CATALOG_FORMAT_XML: CatalogFormat.XML,
    pb.CATALOG_FORMAT_JSON: CatalogFormat.JSON,
    pb.CATALOG_FORMAT_MARKDOWN: CatalogFormat.MARKDOWN,
    pb.CATALOG_FORMAT_ANTHROPIC_TOOL_REFERENCES: CatalogFormat.ANTHROPIC_TOOL_REFERENCES,
    pb.CATALOG_FORMAT_OPENAI_TOOL_SEARCH_OUTPUT: CatalogFormat.OPENAI_TOOL_SEARCH_OUTPUT,
}
_REASONS: dict[Reason, pb.RouteReason] = {
    Reason.ALWAYS_ON: pb.ROUTE_REASON_ALWAYS_ON,
    Reason.RETRIEVED: pb.ROUTE_REASON_RETRIEVED,
    Reason.EXPLICIT: pb.ROUTE_REASON_EXPLICIT,
    Reason.ACTIVE: pb.ROUTE_REASON_ACTIVE,
}


def query_from_proto(request: pb.RouteRequest, caller: Principal = ANONYMOUS) -> RouteQuery:
    """Convert a RouteRequest asked by ``caller``; an unknown ``format`` is rejected here."""
    fmt = _FORMATS.get(request.format)
    if fmt is None:
        known = ", ".join(f"{pb.CatalogFormat.Name(n)} ({n})" for n in sorted(_FORMATS))
        raise InvalidRequest(f"unknown format {request.format}; use one of {known}")
    return RouteQuery(
        message=request.message,
        history=tuple(request.history),
        session_id=request.session_id,
        top_k=request.top_k,
        format=fmt,
        active_skills=tuple(request.active_skills),
        max_catalog_chars=request.max_catalog_chars,
        caller=caller,
        project_skills=tuple(InlineSkill(s.name, s.description, s.location)
                             for s in request.project_skills),
        revealed_skills=tuple(request.revealed_skills),
        context_reset=request.context_reset,
    )


def routed_to_proto(skill: RoutedSkill) -> pb.RoutedSkill:
    return pb.RoutedSkill(name=skill.name, description=truncate_description(skill.description),
                          location=skill.location, score=skill.score,
                          reason=_REASONS.get(skill.reason, pb.ROUTE_REASON_UNSPECIFIED),
                          parameters_json=skill.parameters_json, catalog=skill.catalog,
                          tool_name=skill.tool_name, first_shown=skill.first_shown)


def route_to_proto(result: RouteResult) -> pb.RouteResponse:
    """Convert a RouteResult (its candidates are not part of a RouteResponse)."""
    return pb.RouteResponse(
        skills=[routed_to_proto(s) for s in result.skills],
        catalog_text=result.catalog_text,
        index_version=result.index_version,
        full_catalog_chars=result.full_catalog_chars,
        catalog_chars=result.catalog_chars,
        routed_count=max(result.routed_count, len(result.skills)),
        shown_count=len(result.skills),
        unknown_explicit=list(result.unknown_explicit),
        explicit_content=result.explicit_content,
        activate_tool_json=result.activate_tool_json,
        route_id=result.route_id,
        diagnostics=[diagnostic_to_proto(d) for d in result.diagnostics],
        stable_text=result.stable_text,
        reveal_text=result.reveal_text,
    )


def explain_to_proto(result: RouteResult) -> pb.ExplainResponse:
    """Convert a RouteResult with its candidates."""
    return pb.ExplainResponse(
        route=route_to_proto(result),
        candidates=[
            pb.Candidate(name=c.name, dense_score=c.dense_score, lexical_score=c.lexical_score,
                         fused_score=c.fused_score, kept=c.kept, reason=c.reason.value,
                         matched_example=c.matched_example, matched_field=c.matched_field,
                         matched_step=c.matched_step)
            for c in result.candidates
        ],
        gate=result.gate, dense_weight=result.dense_weight, example_mode=result.example_mode,
        lexical_with_examples=result.lexical_with_examples,
        settings_reason=result.settings_reason, refused=result.refused,
        shown=[pb.ShownSkill(name=name, turn=turn) for name, turn in result.shown],
    )
