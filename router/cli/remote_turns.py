"""``route``, ``explain``, ``info`` and ``activate`` with ``--target HOST:PORT``: the same call
through a running server's Route, Explain, GetIndexInfo and Activate RPCs, as the caller the
caller flags name (``router.cli.learning_remote`` makes the client and turns a refusal into
an exit code). What they print is the server's answer in the shape the in-process command
prints: the catalog text, the explain table, the index facts, the activation content."""

from __future__ import annotations

import argparse
from typing import Any

from google.protobuf.json_format import MessageToDict

from router.cli.learning_remote import _call
from router.errors import InvalidRequest
from router.v1 import router_pb2 as pb


def wants_target(args: argparse.Namespace) -> bool:
    """True with ``--target``; InvalidRequest when ``--index`` is given too."""
    if args.target and getattr(args, "index", None):
        raise InvalidRequest("give --index (open the index here) or --target (ask a running "
                             "server), not both")
    return bool(args.target)


def as_json(message: Any) -> dict[str, Any]:
    """A reply as JSON data, its fields by their protobuf names (defaults included)."""
    data: dict[str, Any] = MessageToDict(message, preserving_proto_field_name=True,
                                         always_print_fields_with_no_presence=True)
    return data


def _decimal(value: float) -> float:
    """A float32 field as the decimal it was set from (0.7, not 0.699999988)."""
    return float(f"{value:.6g}")


def route(args: argparse.Namespace) -> pb.RouteResponse:
    reply: pb.RouteResponse = _call(args, "Route", lambda c: c.route(
        args.message, tuple(args.history), top_k=args.top_k, format=args.format))
    return reply


def explained(args: argparse.Namespace) -> dict[str, Any]:
    """The server's Explain of the turn, as the dict ``explain --json`` prints."""
    reply: pb.ExplainResponse = _call(args, "Explain", lambda c: c.explain(
        args.message, tuple(args.history), top_k=args.top_k, active_skills=tuple(args.active),
        max_catalog_chars=args.max_chars))
    return {"index_version": reply.route.index_version, "gate": _decimal(reply.gate),
            "dense_weight": _decimal(reply.dense_weight), "example_mode": reply.example_mode,
            "lexical_with_examples": reply.lexical_with_examples,
            "settings_reason": reply.settings_reason, "refused": reply.refused,
            "skills": [s.name for s in reply.route.skills],
            "candidates": [{"name": c.name, "dense_score": _decimal(c.dense_score),
                            "lexical_score": _decimal(c.lexical_score),
                            "fused_score": _decimal(c.fused_score), "kept": c.kept,
                            "reason": c.reason, "matched_example": c.matched_example,
                            "matched_field": c.matched_field, "matched_step": c.matched_step}
                           for c in reply.candidates[: args.limit]]}


def info(args: argparse.Namespace, fields: tuple[str, ...]) -> dict[str, Any]:
    """The served index's facts (GetIndexInfo), the ``fields`` ``info`` prints."""
    reply: pb.GetIndexInfoResponse = _call(args, "GetIndexInfo", lambda c: c.index_info())
    shown = {key: getattr(reply, key) for key in fields if hasattr(reply, key)}
    if "calibrated_gate" in shown:
        shown["calibrated_gate"] = _decimal(shown["calibrated_gate"])
    return shown


def activate(args: argparse.Namespace) -> pb.ActivateResponse:
    reply: pb.ActivateResponse = _call(args, "Activate", lambda c: c.activate(
        args.name, session_id=args.session_id or "",
        include_frontmatter=args.frontmatter))
    return reply
