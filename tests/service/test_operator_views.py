"""Operators and admins bounded by their view, over a real server on port 0: an ``[ops,
admin]`` principal of the catalog ``payments`` lists, counts, reads and purges only what the
catalog holds, its diagnostics are those of its catalogs, GetIndexInfo counts its view and
reports its catalogs' gate, and a door of some catalogs acting for an admin of every catalog
serves at most its own view."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from router.access.model import ADMIN, OPS, ROUTE, Principal
from router.calibration.gate import bundled_requests
from router.engine import Engine
from router.routing.model import InlineSkill, RouteQuery
from router.service.metrics import ServiceMetrics, start_metrics_http
from router.v1 import router_pb2 as pb
from tests.service.test_catalog_views import HEADER, as_
from tests.support.catalogs import PRINCIPALS, three_catalogs
from tests.support.indexes import open_engine
from tests.support.principals import entry, write_principals
from tests.support.servers import Served, make_stub, serving, start_server
from tests.support.skills import add_skill, write_skill

WHO = {**PRINCIPALS,
       "payops": Principal("payops", frozenset({OPS, ADMIN}), ("payments",)),
       "nodeploy": Principal("nodeploy", frozenset({OPS, ADMIN}), ("*",), ("deploy",))}


def _reader(context: grpc.ServicerContext) -> Principal:
    return WHO[str(dict(context.invocation_metadata()).get(HEADER, ""))]


@pytest.fixture
def base(tmp_path: Path) -> Path:
    # a broken skill in each of two catalogs: a diagnostic of each
    write_skill(tmp_path / "internal" / "broken-audit", "broken-audit", "")
    write_skill(tmp_path / "payments" / "broken-refund", "broken-refund", "")
    three_catalogs(tmp_path)
    return tmp_path


@pytest.fixture
def engine(base: Path) -> Iterator[Engine]:
    engine = open_engine(base / "index")
    yield engine
    engine.close()


@pytest.fixture
def served(engine: Engine) -> Iterator[Served]:
    with serving(engine, caller_of=_reader) as served:
        yield served


def code_of(who: str, method: Callable[..., Any], request: Any) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as caught:
        as_(who, method, request)
    return caught.value.code()


def _teach(served: Served) -> None:
    """pay learns ``payments/deploy`` and int ``internal/deploy``, each from its own request."""
    for who, message in (("pay", "deploy the payments service"),
                         ("int", "deploy the internal service")):
        shown = as_(who, served.stub.Route, pb.RouteRequest(message=message, top_k=1,
                                                            session_id=f"s-{who}"))
        as_(who, served.stub.Activate, pb.ActivateRequest(name="deploy", session_id=f"s-{who}",
                                                          route_id=shown.route_id))


def test_an_operator_of_one_catalog_lists_only_it(served: Served) -> None:
    every = as_("payops", served.stub.ListSkills, pb.ListSkillsRequest(all_catalogs=True,
                                                                       include_files=True))
    assert sorted((s.catalog, s.name) for s in every.skills) == [
        ("payments", "deploy"), ("payments", "refund-payment")]
    assert all("/internal/" not in s.location and "/org/" not in s.location
               for s in every.skills)
    whole = as_("ops", served.stub.ListSkills, pb.ListSkillsRequest(all_catalogs=True))
    assert len(whole.skills) == 6


def test_diagnostics_are_those_of_the_callers_catalogs(served: Served) -> None:
    def broken(who: str) -> set[str]:
        reply = as_(who, served.stub.ListSkills, pb.ListSkillsRequest())
        return {Path(d.path).parent.name for d in reply.diagnostics}

    assert broken("ops") == {"broken-audit", "broken-refund"}
    assert broken("payops") == {"broken-refund"}
    assert broken("org") == set()


def test_hidden_paths_hide_the_diagnostics_of_named_catalogs(engine: Engine,
                                                            base: Path) -> None:
    with serving(engine, caller_of=_reader, expose_paths=False) as served:
        reply = as_("ops", served.stub.ListSkills, pb.ListSkillsRequest())
    paths = sorted(d.path for d in reply.diagnostics)
    assert paths == ["broken-audit/SKILL.md", "broken-refund/SKILL.md"]
    assert not [d for d in reply.diagnostics if str(base) in d.message]


def test_index_info_counts_the_view(served: Served) -> None:
    assert as_("payops", served.stub.GetIndexInfo, pb.GetIndexInfoRequest()).skill_count == 2
    assert as_("pay", served.stub.GetIndexInfo, pb.GetIndexInfoRequest()).skill_count == 4
    assert as_("ops", served.stub.GetIndexInfo, pb.GetIndexInfoRequest()).skill_count == 6


def test_counters_and_examples_stay_within_the_view(served: Served) -> None:
    _teach(served)
    everyone = as_("ops", served.stub.SkillStats, pb.SkillStatsRequest(min_routed=0))
    assert {"payments/deploy", "internal/deploy"} <= {s.skill for s in everyone.skills}
    mine = as_("payops", served.stub.SkillStats, pb.SkillStatsRequest(min_routed=0))
    assert {s.skill for s in mine.skills} <= {"payments/deploy", "payments/refund-payment"}
    assert {s.skill for s in mine.skills if s.activated} == {"payments/deploy"}
    examples = as_("payops", served.stub.ListExamples, pb.ListExamplesRequest())
    assert [(e.skill, e.query) for e in examples.examples] == [
        ("payments/deploy", "deploy the payments service")]
    for method, request in ((served.stub.SkillStats, pb.SkillStatsRequest(catalog="internal")),
                            (served.stub.ListExamples,
                             pb.ListExamplesRequest(catalog="internal")),
                            (served.stub.PurgeExamples,
                             pb.PurgeExamplesRequest(skill="deploy", catalog="internal"))):
        assert code_of("payops", method, request) is grpc.StatusCode.NOT_FOUND
    hidden = as_("nodeploy", served.stub.ListExamples, pb.ListExamplesRequest())
    assert not hidden.examples  # its deny glob hides both variants' records


def test_an_admin_of_one_catalog_purges_only_its_own(served: Served) -> None:
    _teach(served)
    done = as_("payops", served.stub.PurgeExamples,
               pb.PurgeExamplesRequest(older_than_days=0))
    assert done.purged == 1
    left = as_("ops", served.stub.ListExamples, pb.ListExamplesRequest())
    assert [e.skill for e in left.examples] == ["internal/deploy"]
    denied = as_("nodeploy", served.stub.PurgeExamples,
                 pb.PurgeExamplesRequest(skill="deploy", catalog="internal"))
    assert denied.purged == 0  # as for a skill nobody recorded
    assert len(as_("ops", served.stub.ListExamples, pb.ListExamplesRequest()).examples) == 1


def test_a_catalog_purge_leaves_the_other_catalogs(served: Served) -> None:
    _teach(served)
    done = as_("ops", served.stub.PurgeExamples,
               pb.PurgeExamplesRequest(catalog="internal", older_than_days=0))
    assert done.purged == 1
    left = as_("ops", served.stub.ListExamples, pb.ListExamplesRequest())
    assert [e.skill for e in left.examples] == ["payments/deploy"]


def test_a_door_acting_for_an_admin_serves_at_most_its_own_view(
        engine: Engine, tmp_path: Path) -> None:
    principals = write_principals(
        tmp_path / "principals.yaml",
        entry("door", "tok-door", ["route", "ops", "delegate"], ["payments", "default"]),
        entry("keeper", "tok-keeper", ["route", "ops", "admin"]))
    running = start_server(engine, principals_file=str(principals))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            reply = make_stub(channel).ListSkills(
                pb.ListSkillsRequest(all_catalogs=True), timeout=10,
                metadata=(("authorization", "Bearer tok-door"),
                          ("x-skill-router-principal", "keeper")))
    finally:
        running.stop(0)
    assert {s.catalog for s in reply.skills} == {"payments"}


def test_the_route_role_alone_still_cannot_list_every_variant(served: Served) -> None:
    assert code_of("pay", served.stub.ListSkills,
                   pb.ListSkillsRequest(all_catalogs=True)) is grpc.StatusCode.PERMISSION_DENIED
    assert ROUTE in WHO["pay"].roles


def _scrape(port: int, token: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    asked = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                   headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(asked, timeout=10) as reply:
        text = reply.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_name_the_catalog_and_only_an_every_catalog_scrape_sees_skills(
        engine: Engine, tmp_path: Path) -> None:
    principals = write_principals(tmp_path / "principals.yaml",
                                  entry("watcher", "tok-all", ["route", "ops"]),
                                  entry("payops", "tok-pay", ["route", "ops"], ["payments"]),
                                  entry("orgs", "tok-org", ["route"], ["org"]))
    metrics = ServiceMetrics(engine)
    running = start_server(engine, principals_file=str(principals), observer=metrics.observe)
    http, port = start_metrics_http(metrics, 0, "127.0.0.1", running.gate.accepts_ops_token,
                                    running.gate.narrow_token)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = make_stub(channel)
            for token in ("tok-pay", "tok-org"):
                stub.Route(pb.RouteRequest(message="deploy the service", top_k=1), timeout=10,
                           metadata=(("authorization", f"Bearer {token}"),))
        every, some = _scrape(port, "tok-all"), _scrape(port, "tok-pay")
    finally:
        http.shutdown()
        running.stop(0)
    shown = {dict(labels)["catalog"]: v for (name, labels), v in every.items()
             if name == "skill_router_skill_shown_total" and dict(labels)["skill"] == "deploy"}
    assert shown == {"payments": 1.0, "org": 1.0}  # two skills of one name, counted apart
    assert not [name for name, _ in some if name.startswith("skill_router_skill_")]
    assert some[("skill_router_routes_total", frozenset())] == 2.0  # the shared series stay


def test_a_reindex_answers_with_the_diagnostics_of_the_callers_catalogs(
        served: Served) -> None:
    mine = as_("payops", served.stub.Reindex, pb.ReindexRequest(full=True))
    assert {Path(d.path).parent.name for d in mine.diagnostics} == {"broken-refund"}
    every = as_("ops", served.stub.Reindex, pb.ReindexRequest(full=True))
    assert {Path(d.path).parent.name for d in every.diagnostics} == {"broken-audit",
                                                                    "broken-refund"}


def test_a_word_of_hidden_skills_scores_a_project_skill_as_a_word_of_none(
        engine: Engine) -> None:
    sent = (InlineSkill("p-hidden", "ledgers"), InlineSkill("p-absent", "zyzzyva"))

    def lexical(who: str) -> dict[str, float]:
        result = engine.explain(RouteQuery(message="ledgers zyzzyva", project_skills=sent,
                                           caller=WHO[who], top_k=10))
        return {c.name: c.lexical_score for c in result.candidates if c.name in
                ("p-hidden", "p-absent")}

    mine = lexical("org")  # "ledgers" is only in internal-audit, outside its view
    assert mine["p-hidden"] == mine["p-absent"] > 0
    every = lexical("ops")
    assert every["p-hidden"] != every["p-absent"]


def test_skills_added_to_another_catalog_leave_the_callers_gate(base: Path,
                                                                served: Served) -> None:
    def gate_of(who: str) -> float:
        return as_(who, served.stub.GetIndexInfo, pb.GetIndexInfoRequest()).calibrated_gate

    before = {who: gate_of(who) for who in ("payops", "ops")}
    for i, request in enumerate(bundled_requests()[:60]):  # skills that read as everyday talk
        add_skill(base / "internal", f"everyday-{i}", request)
    as_("ops", served.stub.Reindex, pb.ReindexRequest(full=True))
    assert gate_of("ops") > before["ops"]  # the whole index's gate rose ...
    assert gate_of("payops") == before["payops"]  # ... and the payments catalog's did not
