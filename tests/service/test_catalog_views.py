"""Named catalogs over gRPC: three catalogs holding one name, callers with different views
(precedence, deny globs), operators' listing of every variant, and a Reindex that keeps every
catalog. Principals are built directly and named per call by a test header."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from router.access.model import Principal
from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.support.catalogs import CATALOGS, PRINCIPALS, three_catalogs
from tests.support.indexes import open_engine
from tests.support.servers import Served, serving
from tests.support.skills import add_skill

HEADER = "x-test-principal"


def _reader(context: grpc.ServicerContext) -> Principal:
    named = dict(context.invocation_metadata()).get(HEADER, "")
    return PRINCIPALS[str(named)]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = open_engine(three_catalogs(tmp_path))
    yield engine
    engine.close()


@pytest.fixture
def served(engine: Engine) -> Iterator[Served]:
    with serving(engine, caller_of=_reader) as served:
        yield served


def as_(who: str, method: Callable[..., Any], request: Any) -> Any:
    return method(request, metadata=((HEADER, who),), timeout=10)


def refused(who: str, method: Callable[..., Any], request: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        as_(who, method, request)
    return caught.value


def _listed(served: Served, who: str) -> dict[str, str]:
    reply = as_(who, served.stub.ListSkills, pb.ListSkillsRequest())
    return {s.name: s.catalog for s in reply.skills}


def test_each_caller_lists_its_own_view(served: Served) -> None:
    assert _listed(served, "pay") == {"deploy": "payments", "refund-payment": "payments",
                                      "git-commit": "org"}
    assert _listed(served, "org") == {"deploy": "org", "git-commit": "org"}
    assert _listed(served, "int") == {"deploy": "internal", "internal-audit": "internal",
                                      "refund-payment": "payments", "git-commit": "org"}


def test_every_variant_is_listed_for_operators_only(served: Served) -> None:
    reply = as_("ops", served.stub.ListSkills, pb.ListSkillsRequest(all_catalogs=True))
    variants = sorted((s.name, s.catalog) for s in reply.skills)
    assert [v for v in variants if v[0] == "deploy"] == [
        ("deploy", "internal"), ("deploy", "org"), ("deploy", "payments")]
    error = refused("pay", served.stub.ListSkills, pb.ListSkillsRequest(all_catalogs=True))
    assert error.code() is grpc.StatusCode.PERMISSION_DENIED
    assert "requires role ops or admin" in (error.details() or "")


def test_activation_takes_the_callers_variant(served: Served) -> None:
    for who, catalog in (("pay", "payments"), ("org", "org"), ("int", "internal")):
        done = as_(who, served.stub.Activate, pb.ActivateRequest(name="deploy"))
        assert done.skill_dir.endswith(f"/{catalog}/deploy")


def test_a_skill_outside_the_view_behaves_as_a_missing_one(served: Served) -> None:
    hidden = refused("pay", served.stub.Activate, pb.ActivateRequest(name="internal-audit"))
    missing = refused("pay", served.stub.Activate, pb.ActivateRequest(name="internal-audiz"))
    assert hidden.code() is missing.code() is grpc.StatusCode.NOT_FOUND
    assert hidden.details() == "no skill named 'internal-audit'; route a message to see the " \
                               "available skills"
    assert "internal-audit" not in (missing.details() or "")  # no suggestion outside the view
    seen = refused("int", served.stub.Activate, pb.ActivateRequest(name="internal-audiz"))
    assert "did you mean: internal-audit" in (seen.details() or "")
    for method, request in ((served.stub.ReadResource,
                             pb.ReadResourceRequest(name="internal-audit", path="SKILL.md")),
                            (served.stub.ListResources,
                             pb.ListResourcesRequest(name="internal-audit")),
                            (served.stub.Feedback,
                             pb.FeedbackRequest(skill="internal-audit", session_id="s",
                                                outcome=pb.FEEDBACK_OUTCOME_SUCCESS))):
        assert refused("pay", method, request).code() is grpc.StatusCode.NOT_FOUND


def test_routing_sees_only_the_view(served: Served) -> None:
    ask = pb.RouteRequest(message="audit internal ledgers for compliance", top_k=5)
    theirs = as_("int", served.stub.Route, ask)
    mine = as_("pay", served.stub.Route, ask)
    assert ("internal-audit", "internal") in {(s.name, s.catalog) for s in theirs.skills}
    assert "internal-audit" not in {s.name for s in mine.skills}
    assert "internal-audit" not in mine.catalog_text
    assert mine.full_catalog_chars < theirs.full_catalog_chars
    named = as_("pay", served.stub.Route, pb.RouteRequest(message="/internal-audit now"))
    assert list(named.unknown_explicit) == ["internal-audit"]
    deploy = as_("org", served.stub.Route, pb.RouteRequest(message="deploy the service"))
    assert {(s.name, s.catalog) for s in deploy.skills} <= {("deploy", "org"),
                                                            ("git-commit", "org")}
    explained = as_("pay", served.stub.Explain, ask)
    assert "internal-audit" not in {c.name for c in explained.candidates}


def test_a_reindex_keeps_every_catalog(served: Served, tmp_path: Path) -> None:
    add_skill(tmp_path / "org", "release-notes", "Draft release notes from merged changes.")
    reply = as_("ops", served.stub.Reindex, pb.ReindexRequest())
    assert reply.swapped and (reply.added, reply.unchanged) == (1, 6)
    listed = as_("ops", served.stub.ListSkills, pb.ListSkillsRequest(all_catalogs=True))
    assert sorted((s.catalog, s.name) for s in listed.skills) == sorted(
        [*((c, "deploy") for c in CATALOGS), ("payments", "refund-payment"),
         ("org", "git-commit"), ("internal", "internal-audit"), ("org", "release-notes")])
    assert _listed(served, "pay")["deploy"] == "payments"


def test_traffic_teaches_the_variant_that_was_activated(served: Served) -> None:
    shown = as_("pay", served.stub.Route, pb.RouteRequest(message="deploy the service",
                                                         session_id="s1", top_k=1))
    assert [(s.name, s.catalog) for s in shown.skills] == [("deploy", "payments")]
    as_("pay", served.stub.Activate, pb.ActivateRequest(name="deploy", session_id="s1",
                                                        route_id=shown.route_id))
    stats = as_("ops", served.stub.SkillStats, pb.SkillStatsRequest(catalog="payments"))
    assert {s.skill: s.activated for s in stats.skills} == {"payments/deploy": 1}
    others = as_("ops", served.stub.SkillStats, pb.SkillStatsRequest(catalog="org"))
    assert all(s.activated == 0 for s in others.skills)
    mine = as_("ops", served.stub.ListExamples,
               pb.ListExamplesRequest(skill="deploy", catalog="payments"))
    assert [e.query for e in mine.examples] == ["deploy the service"]
    assert not as_("ops", served.stub.ListExamples,
                   pb.ListExamplesRequest(skill="deploy", catalog="org")).examples
    purged = as_("ops", served.stub.PurgeExamples,
                 pb.PurgeExamplesRequest(skill="deploy", catalog="payments"))
    assert purged.purged == 1
