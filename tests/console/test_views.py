"""The console's pure parts: the /route query string, bar widths, filters, fitted settings,
traffic counters, recorded examples and the purge form's fields."""

from __future__ import annotations

import pytest

from router.console import learning_views, views
from router.v1 import router_pb2 as pb


def test_route_form_parses_and_bounds_the_query() -> None:
    form = views.RouteForm.parse({"message": "hi", "top_k": "9999",
                                  "history": "one\n\n two \n", "active": "a, ,b"})
    assert form == views.RouteForm("hi", views.MAX_TOP_K, ("one", "two"), ("a", "b"))
    assert views.RouteForm.parse({"top_k": "x"}).top_k == 0
    assert views.RouteForm.parse({"top_k": "-3"}).top_k == 0
    many = "\n".join(str(i) for i in range(50))
    assert len(views.RouteForm.parse({"history": many}).history) == views.MAX_HISTORY


def test_bars_scale_to_the_top_candidate_and_clamp() -> None:
    rows = views.candidate_rows([
        pb.Candidate(name="a", dense_score=0.5, lexical_score=4.0, fused_score=0.02),
        pb.Candidate(name="b", dense_score=-0.2, lexical_score=1.0, fused_score=0.01),
        pb.Candidate(name="c", dense_score=1.5)])
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert (rows[0]["dense_pct"], rows[0]["lexical_pct"], rows[0]["fused_pct"]) == (50.0, 100.0,
                                                                                     100.0)
    assert (rows[1]["dense_pct"], rows[1]["lexical_pct"], rows[1]["fused_pct"]) == (0.0, 25.0,
                                                                                     50.0)
    assert rows[2]["dense_pct"] == 100.0 and rows[2]["lexical_pct"] == 0.0
    assert views.candidate_rows([]) == []


def listing() -> pb.ListSkillsResponse:
    return pb.ListSkillsResponse(skills=[
        pb.SkillInfo(name="zeta", description="Old thing", enabled=True, deprecated=True),
        pb.SkillInfo(name="alpha", description="PDF tools", enabled=True, model_invocable=True),
        pb.SkillInfo(name="mid", description="off", enabled=False)])


def test_skills_filter_by_text_and_flag_and_sort() -> None:
    names = lambda data: [r["name"] for r in data["skills"]]  # noqa: E731
    assert names(views.skills_view(listing(), "", "", "name")) == ["alpha", "mid", "zeta"]
    assert names(views.skills_view(listing(), "pdf", "", "name")) == ["alpha"]
    assert names(views.skills_view(listing(), "", "deprecated", "name")) == ["zeta"]
    assert names(views.skills_view(listing(), "", "not_enabled", "name")) == ["mid"]
    by_status = views.skills_view(listing(), "", "", "status")
    assert [r["status"] for r in by_status["skills"]] == ["deprecated", "disabled", "routable"]
    assert views.skills_view(listing(), "", "bogus", "bogus")["sort"] == "name"


def test_tuning_json_as_pairs() -> None:
    assert views.tuning("") == []
    assert views.tuning('{"dense_weight": 0.7, "example_mode": "view"}') == [
        ("dense_weight", "0.7"), ("example_mode", "view")]
    assert views.tuning("not json") == [("raw", "not json")]
    assert views.tuning("[1]") == [("raw", "[1]")]


def stats() -> pb.SkillStatsResponse:
    return pb.SkillStatsResponse(skills=[
        pb.SkillCounters(skill="alpha", routed=4, shown=5, activated=1, hit_rate=0.25),
        pb.SkillCounters(skill="zeta", routed=12, shown=12, activated=0, hit_rate=0.0),
        pb.SkillCounters(skill="gone", routed=1, shown=1, activated=1, hit_rate=1.0)],
        never_activated=["zeta"], min_routed=10)


def test_counters_join_the_skills_sort_largest_first_and_filter_the_never_activated() -> None:
    counters = learning_views.counter_rows(stats())
    data = views.skills_view(listing(), "", "", "shown", counters)
    assert [(r["name"], r["shown"], r["hit_rate_text"]) for r in data["skills"]] == [
        ("zeta", 12, "0.0%"), ("alpha", 5, "25.0%"), ("mid", 0, "-")]  # "gone": not indexed
    assert [r["name"] for r in views.skills_view(listing(), "", "", "hit_rate",
                                                 counters)["skills"]] == ["alpha", "mid", "zeta"]
    never = views.skills_view(listing(), "", "never_activated", "name", counters)
    assert [r["name"] for r in never["skills"]] == ["zeta"]
    assert len(views.skills_view(listing(), "", "not_never_activated", "name",
                                 counters)["skills"]) == 2
    assert views.skills_view(listing(), "", "never_activated", "name")["skills"] == []
    assert learning_views.counter_rows(None) == {}


def test_purge_age_and_min_routed_fields() -> None:
    assert learning_views.parse_days("  ") is None
    assert learning_views.parse_days(" 30 ") == 30.0 and learning_views.parse_days("0") == 0.0
    for bad in ("soon", "-1", "inf", "nan"):
        with pytest.raises(ValueError, match="days"):
            learning_views.parse_days(bad)
    assert learning_views.parse_min_routed({"min_routed": "3"}) == 3
    assert learning_views.parse_min_routed({"min_routed": "x"}) == 0
    assert learning_views.parse_min_routed({"min_routed": "-4"}) == 0
    assert learning_views.parse_min_routed({}) == 0


def test_examples_newest_first_with_their_age() -> None:
    listing_ = pb.ListExamplesResponse(examples=[
        pb.RecordedExample(skill="a", positive=True, query="old", recorded_at=0.0, learned=True),
        pb.RecordedExample(skill="a", positive=False, query="new",
                           recorded_at=learning_views.DAY_SECONDS)])
    rows = learning_views.example_rows(listing_, 2 * learning_views.DAY_SECONDS)
    assert [(r["query"], r["label"], r["age_days"], r["learned"]) for r in rows] == [
        ("new", "negative", 1.0, False), ("old", "positive", 2.0, True)]


def test_a_quarantined_skills_row_carries_its_findings() -> None:
    info = pb.SkillInfo(name="tool-installer", enabled=False, quarantined=True, findings=[
        pb.AdmissionFinding(severity="high", rule="download-to-shell", message="curl | sh")])
    row = views.skill_row(info)
    assert row["status"] == "quarantined" and row["quarantined"]
    assert row["findings"] == [{"severity": "high", "rule": "download-to-shell",
                                "message": "curl | sh"}]
    assert views.skill_row(pb.SkillInfo(name="x", enabled=True))["findings"] == []
