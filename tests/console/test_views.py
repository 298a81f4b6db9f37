"""The console's pure parts: the /route query string, bar widths, filters and fitted settings."""

from __future__ import annotations

from router.console import views
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
