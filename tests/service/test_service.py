"""SkillRouter RPCs end to end against a real server on port 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest

from router.config import Config
from router.engine import Engine
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.indexes import open_engine
from tests.support.servers import serving
from tests.support.skills import DIAGNOSTICS, FILTERED, SKILLS

PDF_MESSAGE = "please extract the tables from this PDF file and merge PDF documents"
MAX_TOP_K = Config().routing.max_top_k


def route(stub: pb_grpc.SkillRouterStub, message: str = PDF_MESSAGE,
          **fields: Any) -> pb.RouteResponse:
    response: pb.RouteResponse = stub.Route(pb.RouteRequest(message=message, **fields))
    return response


def without_route_id(response: pb.RouteResponse) -> pb.RouteResponse:
    """``response`` minus its ``route_id`` (unique per Route; Explain records no turn)."""
    copy = pb.RouteResponse()
    copy.CopyFrom(response)
    copy.ClearField("route_id")
    return copy


def rpc_error(call: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()  # type: ignore[operator]
    return info.value


def test_route_pdf_message_returns_pdf_skill_after_always_on(
        stub: pb_grpc.SkillRouterStub, engine: Engine) -> None:
    response = route(stub)
    names = [s.name for s in response.skills]
    assert names[0] == "house-style"
    assert response.skills[0].reason == pb.ROUTE_REASON_ALWAYS_ON
    assert "pdf-tools" in names
    pdf = next(s for s in response.skills if s.name == "pdf-tools")
    assert pdf.reason == pb.ROUTE_REASON_RETRIEVED and pdf.score > 0
    assert pdf.location == "/srv/skills/pdf-tools/SKILL.md"
    assert response.index_version == engine.info().version
    assert response.shown_count == len(response.skills) == response.routed_count
    assert response.catalog_chars == len(response.catalog_text)
    assert response.full_catalog_chars >= response.catalog_chars


@pytest.mark.parametrize("top_k", [0, 1, MAX_TOP_K])
def test_filtered_skills_are_never_routed(stub: pb_grpc.SkillRouterStub, top_k: int) -> None:
    response = route(stub, top_k=top_k)
    names = {s.name for s in response.skills}
    assert not names & FILTERED
    for name in FILTERED:
        assert f"<name>{name}</name>" not in response.catalog_text


def test_top_k_limits_retrieved_skills(stub: pb_grpc.SkillRouterStub) -> None:
    response = route(stub, message="merge PDF documents, then analyse CSV spreadsheets", top_k=1)
    retrieved = [s for s in response.skills if s.reason == pb.ROUTE_REASON_RETRIEVED]
    assert len(retrieved) == 1


def test_xml_format_is_default(stub: pb_grpc.SkillRouterStub) -> None:
    text = route(stub).catalog_text
    assert "<available_skills>" in text and "</available_skills>" in text
    assert "<name>pdf-tools</name>" in text
    assert "<location>/srv/skills/pdf-tools/SKILL.md</location>" in text


def test_json_format(stub: pb_grpc.SkillRouterStub) -> None:
    response = route(stub, format=pb.CATALOG_FORMAT_JSON)
    block = json.loads(response.catalog_text[response.catalog_text.index("{"):])
    names = [entry["name"] for entry in block["available_skills"]]
    assert names == [s.name for s in response.skills]


def test_markdown_format(stub: pb_grpc.SkillRouterStub) -> None:
    response = route(stub, format=pb.CATALOG_FORMAT_MARKDOWN)
    assert "- **pdf-tools**:" in response.catalog_text
    assert "<available_skills>" not in response.catalog_text


def test_empty_catalog_has_no_block_and_no_instruction(
        empty_stub: pb_grpc.SkillRouterStub) -> None:
    for fmt in (pb.CATALOG_FORMAT_XML, pb.CATALOG_FORMAT_JSON, pb.CATALOG_FORMAT_MARKDOWN):
        response = route(empty_stub, format=fmt)
        assert list(response.skills) == []
        assert response.catalog_text == ""
        assert response.catalog_chars == 0 and response.shown_count == 0


def test_budget_drops_lowest_ranked(stub: pb_grpc.SkillRouterStub) -> None:
    full = route(stub)
    budget = len(full.catalog_text) - 1
    cut = route(stub, max_catalog_chars=budget)
    assert cut.routed_count == full.routed_count
    assert cut.shown_count < cut.routed_count
    assert 0 < cut.catalog_chars <= budget


def test_history_and_active_skills_are_accepted(stub: pb_grpc.SkillRouterStub) -> None:
    response = route(stub, message="and the next one", history=["merge PDF documents"],
                     active_skills=["git-helper"], session_id="s-1")
    active = [s for s in response.skills if s.name == "git-helper"]
    assert active and active[0].reason == pb.ROUTE_REASON_ACTIVE


def test_unknown_explicit_name_is_reported(stub: pb_grpc.SkillRouterStub) -> None:
    response = route(stub, message="/no-such-skill merge these PDF files")
    assert list(response.unknown_explicit) == ["no-such-skill"]


@pytest.mark.parametrize("fields", [
    {"message": ""},
    {"message": "   \n"},
    {"message": PDF_MESSAGE, "top_k": -1},
    {"message": PDF_MESSAGE, "top_k": MAX_TOP_K + 1},
    {"message": PDF_MESSAGE, "max_catalog_chars": -5},
], ids=["empty", "blank", "top_k_negative", "top_k_over_max", "budget_negative"])
def test_invalid_requests(stub: pb_grpc.SkillRouterStub, fields: dict[str, Any]) -> None:
    err = rpc_error(lambda: stub.Route(pb.RouteRequest(**fields)))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details()


def test_unknown_format_number_is_invalid_argument(stub: pb_grpc.SkillRouterStub) -> None:
    for call in (stub.Route, stub.Explain):
        bad = pb.RouteRequest(message=PDF_MESSAGE, format=7)  # type: ignore[arg-type]
        err = rpc_error(lambda: call(bad))  # noqa: B023
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        details = err.details() or ""
        assert "7" in details and "CATALOG_FORMAT_MARKDOWN" in details


def test_list_skills_returns_every_skill_and_diagnostics(
        stub: pb_grpc.SkillRouterStub, engine: Engine) -> None:
    response = stub.ListSkills(pb.ListSkillsRequest())
    by_name = {s.name: s for s in response.skills}
    assert set(by_name) == {s.name for s in SKILLS}
    assert not by_name["pdf-disabled"].enabled
    assert by_name["pdf-legacy"].deprecated
    assert not by_name["pdf-manual"].model_invocable
    assert by_name["house-style"].always_on
    assert by_name["pdf-tools"].scope == pb.SKILL_SCOPE_BUNDLED
    assert by_name["pdf-tools"].kind == pb.SKILL_KIND_SKILL_MD
    got = [(d.level, d.path, d.message) for d in response.diagnostics]
    levels = {"warning": pb.DIAGNOSTIC_LEVEL_WARNING, "error": pb.DIAGNOSTIC_LEVEL_ERROR}
    assert got == [(levels[d.level.value], d.path, d.message) for d in DIAGNOSTICS]
    assert response.index_version == engine.info().version


def test_get_index_info(stub: pb_grpc.SkillRouterStub, engine: Engine) -> None:
    info = stub.GetIndexInfo(pb.GetIndexInfoRequest())
    expected = engine.info()
    assert (info.version, info.model, info.dimension, info.skill_count) == (
        expected.version, "hash-256", 256, len(SKILLS))
    assert info.built_at == expected.built_at and "T" in info.built_at
    assert info.format_version == expected.format_version
    assert info.path == expected.path


def test_explain_returns_route_and_candidates(stub: pb_grpc.SkillRouterStub) -> None:
    response = stub.Explain(pb.RouteRequest(message=PDF_MESSAGE))
    assert response.route == without_route_id(route(stub))
    by_name = {c.name: c for c in response.candidates}
    assert by_name["pdf-tools"].kept and by_name["pdf-tools"].reason == "kept"
    assert by_name["pdf-tools"].fused_score > 0
    assert by_name["pdf-disabled"].reason == "filtered_disabled"
    assert by_name["pdf-legacy"].reason == "filtered_deprecated"
    assert by_name["pdf-manual"].reason == "filtered_not_model_invocable"
    assert not any(by_name[name].kept for name in FILTERED)


def test_reloaded_index_gives_identical_results(
        stub: pb_grpc.SkillRouterStub, index_dir: Path) -> None:
    requests = [
        pb.RouteRequest(message=PDF_MESSAGE),
        pb.RouteRequest(message="write a git commit message", format=pb.CATALOG_FORMAT_JSON),
        pb.RouteRequest(message="deploy docker containers", top_k=2,
                        format=pb.CATALOG_FORMAT_MARKDOWN),
    ]
    with serving(open_engine(index_dir)) as reloaded:
        for request in requests:
            first, second = reloaded.stub.Route(request), stub.Route(request)
            assert first.route_id and first.route_id != second.route_id
            assert without_route_id(first) == without_route_id(second)
            assert reloaded.stub.Explain(request) == stub.Explain(request)
