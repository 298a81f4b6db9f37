"""Explain tells which of a candidate's fields the turn's words matched (its name and
description, or the body excerpt indexed with them) and, for a request of several sentences,
which sentence its vector came closest to."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.builder.inputs import Stages
from router.builder.pipeline import build
from router.builder.plan import BuildPlan, EncoderPlan
from router.config import DiscoveryConfig
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.routing.model import Candidate, RouteQuery
from tests.support.indexes import open_engine
from tests.support.skills import write_catalog, write_skill

BODY = ("# Invoices\n\nOpen the scan with pdfplumber, read each line item, then reconcile the "
        "totals against the ledger.\n")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    base = tmp_path_factory.mktemp("attribution")
    root, out = write_catalog(base / "skills"), base / "index"
    write_skill(root / "ledger-helper", description="Helps with bookkeeping chores.", body=BODY)
    plan = BuildPlan(DiscoveryConfig(project_dir=None, home_dir=None,
                                     bundled_roots=(str(root),)),
                     EncoderPlan("hash"), stages=Stages(body_chars=2000))
    build(plan, out, embedder=HashEmbedder())
    return open_engine(Path(out))


def _candidate(engine: Engine, message: str, name: str) -> Candidate:
    found = [c for c in engine.explain(RouteQuery(message)).candidates if c.name == name]
    assert found, f"{name} is not a candidate for {message!r}"
    return found[0]


def test_the_field_a_candidate_matched_in(engine: Engine) -> None:
    assert _candidate(engine, "pdfplumber", "ledger-helper").matched_field == "body"
    assert _candidate(engine, "bookkeeping chores", "ledger-helper").matched_field \
        == "description"
    assert _candidate(engine, "bookkeeping with pdfplumber", "ledger-helper").matched_field \
        == "both"


def test_the_step_of_a_long_request_a_candidate_came_closest_to(engine: Engine) -> None:
    steps = ["Please draft the email replies to the customers today.",
             "Then handle the docker images and containers for the release.",
             "Finally write the git commit messages for the change."]
    result = engine.explain(RouteQuery(" ".join(steps)))
    assert result.candidates
    assert all(c.matched_step in steps for c in result.candidates)
    assert len({c.matched_step for c in result.candidates}) > 1
    one = engine.explain(RouteQuery("handle the docker images and containers"))
    assert all(c.matched_step == "" for c in one.candidates)
    routed = engine.route(RouteQuery(" ".join(steps)))
    assert routed.candidates == ()  # Route computes none of it
