"""The regression set over the bundled demo catalog must not fall below its committed figures."""

from __future__ import annotations

import json

from router.engine import Engine
from router.evaluation import metrics, runner
from router.routing.model import Reason, RouteQuery
from tests.support import REPO

SET = REPO / "eval" / "regression"


def test_regression_set_meets_its_baseline(demo_engine: Engine) -> None:
    outcomes = runner.run(demo_engine, runner.load_requests(SET / "queries.jsonl"))
    scores = metrics.score(outcomes)
    baseline = json.loads((SET / "baseline.json").read_text(encoding="utf-8"))
    assert scores.recall_at[5] >= baseline["R@5"], metrics.misses(outcomes)
    assert scores.nothing_rate >= baseline["nothing"], metrics.false_triggers(outcomes)
    assert scores.mrr10 >= baseline["MRR@10"]


def test_pdf_invoice_routes_to_a_pdf_skill(demo_engine: Engine) -> None:
    result = demo_engine.route(RouteQuery(message="extract the tables from this PDF invoice"))
    retrieved = [s.name for s in result.skills if s.reason is Reason.RETRIEVED]
    assert "pdf-extract" in retrieved[:3]
    assert "<name>pdf-extract</name>" in result.catalog_text
    assert result.catalog_chars < result.full_catalog_chars


def test_follow_up_uses_history(demo_engine: Engine) -> None:
    turn = RouteQuery(message="now compare it by department",
                      history=("pull last week's sales CSV and load it",))
    names = [s.name for s in demo_engine.route(turn).skills]
    assert "spreadsheet-analysis" in names


def test_off_topic_gets_no_retrieved_skill(demo_engine: Engine) -> None:
    result = demo_engine.route(RouteQuery(message="what's a good recipe for banana bread?"))
    assert [s for s in result.skills if s.reason is Reason.RETRIEVED] == []
    assert {s.reason for s in result.skills} == {Reason.ALWAYS_ON}
