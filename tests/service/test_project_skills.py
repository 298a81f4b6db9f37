"""A project's own skills sent with the turn, over a real gRPC server: routed with the catalog
and winning over every catalog's skill of the same name, left out with a diagnostic when
unusable, bounded, and never activated by the service."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.service.test_catalog_views import _reader, as_, refused
from tests.support.catalogs import three_catalogs
from tests.support.indexes import open_engine
from tests.support.servers import Served, serving

PREVIEW = pb.InlineSkill(name="deploy", location="/work/repo/.agents/skills/deploy/SKILL.md",
                         description="Deploy this repository's preview environment with the "
                                     "project's own scripts.")
LINT = pb.InlineSkill(name="lint-repo", location="/work/repo/.agents/skills/lint-repo/SKILL.md",
                      description="Lint the repository with its configured linters and fix "
                                  "style problems.")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    engine: Engine = open_engine(three_catalogs(tmp_path))
    with serving(engine, caller_of=_reader) as served:
        yield served
    engine.close()


def route(served: Served, message: str, *skills: pb.InlineSkill, who: str = "pay",
          session: str = "") -> pb.RouteResponse:
    reply: pb.RouteResponse = as_(who, served.stub.Route, pb.RouteRequest(
        message=message, top_k=5, session_id=session, project_skills=list(skills)))
    return reply


def test_a_project_skill_wins_over_every_catalogs_skill_of_its_name(served: Served) -> None:
    reply = route(served, "deploy the preview environment", PREVIEW, LINT)
    found = {s.name: (s.catalog, s.location) for s in reply.skills}
    assert found["deploy"] == ("project", PREVIEW.location)
    assert PREVIEW.location in reply.catalog_text
    assert "Deploy the payments service" not in reply.catalog_text
    plain = route(served, "deploy the preview environment")
    assert {(s.name, s.catalog) for s in plain.skills} >= {("deploy", "payments")}


def test_a_project_skill_is_retrieved_and_counted(served: Served) -> None:
    reply = route(served, "lint the repository and fix style problems", PREVIEW, LINT)
    assert ("lint-repo", "project") in {(s.name, s.catalog) for s in reply.skills}
    plain = route(served, "lint the repository and fix style problems")
    assert reply.full_catalog_chars > plain.full_catalog_chars
    assert not reply.diagnostics


def test_an_unusable_project_skill_is_a_diagnostic_not_a_failed_turn(served: Served) -> None:
    empty = pb.InlineSkill(name="empty", description="  ", location="/r/empty/SKILL.md")
    reply = route(served, "lint the repository", LINT, empty, LINT)
    assert reply.skills
    messages = [d.message for d in reply.diagnostics]
    assert any("'empty': missing description" in m for m in messages)
    assert any("'lint-repo' given twice" in m for m in messages)
    assert "empty" not in {s.name for s in reply.skills}


def test_the_bounds_are_invalid_argument_naming_them(served: Served) -> None:
    many = [pb.InlineSkill(name=f"s-{i}", description="Does a thing.") for i in range(257)]
    error = refused("pay", served.stub.Route, pb.RouteRequest(message="hi", project_skills=many))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "at most 256" in (error.details() or "")
    long = pb.InlineSkill(name="long", description="x" * 1025)
    error = refused("pay", served.stub.Route, pb.RouteRequest(message="hi",
                                                              project_skills=[long]))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "at most 1024" in (error.details() or "")
    assert route(served, "hi", *many[:256]).index_version  # the bound itself is fine


def test_activation_of_a_project_skill_stays_with_the_gateway(served: Served) -> None:
    reply = route(served, "/deploy the preview", PREVIEW, session="conv-1")
    assert reply.skills[0].name == "deploy" and reply.skills[0].catalog == "project"
    assert reply.explicit_content == ""  # the service never activates a project skill
    error = refused("pay", served.stub.Activate,
                    pb.ActivateRequest(name="deploy", session_id="conv-1"))
    assert error.code() is grpc.StatusCode.NOT_FOUND
    assert "activation stays with the gateway" in (error.details() or "")
    other = as_("pay", served.stub.Activate, pb.ActivateRequest(name="deploy",
                                                                session_id="conv-2"))
    assert other.skill_dir.endswith("/payments/deploy")  # another conversation: the catalog's


def test_deny_globs_hide_project_skills_too(served: Served) -> None:
    hidden = pb.InlineSkill(name="internal-notes", description="Lint internal notes files.",
                            location="/r/internal-notes/SKILL.md")
    reply = route(served, "lint internal notes files", hidden, LINT)
    assert "internal-notes" not in {s.name for s in reply.skills}
