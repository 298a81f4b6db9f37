"""Example requests over gRPC: an index built with --examples routes by them, Explain names
the example, and a Reindex after the examples file changed swaps in a new version."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from router.access.model import OPS, ROUTE, Principal
from router.cli import main
from router.config import DiscoveryConfig
from router.routing.model import RouteQuery
from router.v1 import router_pb2 as pb
from tests.support.indexes import index_argv, open_engine
from tests.support.servers import serving
from tests.support.skills import write_catalog

ASK = "zebra quokka marmalade"  # words no skill description uses


def _retrieved(reply: pb.RouteResponse) -> list[str]:
    return [s.name for s in reply.skills if s.reason == pb.ROUTE_REASON_RETRIEVED]


def _write(path: Path, skill: str) -> None:
    rows = [{"id": "a", "query": f"please {ASK} now", "skills": [skill]},
            {"query": "tell me a joke about cats", "skills": []}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _indexed(tmp_path: Path, skills: int, write: Callable[[Path], None]) -> tuple[Path, Path]:
    """A catalog of ``skills`` indexed by the CLI with the examples file ``write`` made;
    return (index, examples file)."""
    catalog, out, examples = write_catalog(tmp_path / "skills", skills), tmp_path / "index", \
        tmp_path / "examples.jsonl"
    write(examples)
    assert main([*index_argv(catalog, out), "--examples", str(examples)]) == 0
    return out, examples


def test_examples_route_explain_and_reindex_on_change(tmp_path: Path) -> None:
    out, examples = _indexed(tmp_path, 6, lambda path: _write(path, "skill-3"))
    with serving(open_engine(out)) as served:
        stub = served.stub
        assert _retrieved(stub.Route(pb.RouteRequest(message=ASK), timeout=10))[0] == "skill-3"
        info = stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=10)
        assert info.example_count == 1 and info.calibrated_gate != 0
        explained = stub.Explain(pb.RouteRequest(message=ASK), timeout=10)
        top = explained.candidates[0]
        assert (top.name, top.matched_example) == ("skill-3", f"please {ASK} now")
        assert explained.gate >= 0.18
        unchanged = stub.Reindex(pb.ReindexRequest(), timeout=60)
        assert not unchanged.swapped
        _write(examples, "skill-1")
        moved = stub.Reindex(pb.ReindexRequest(), timeout=60)
        assert moved.swapped and moved.index_version != info.version
        assert _retrieved(stub.Route(pb.RouteRequest(message=ASK), timeout=10))[0] == "skill-1"


def test_a_matched_example_is_shown_only_to_an_operator_of_every_catalog(
        tmp_path: Path) -> None:
    out, _ = _indexed(tmp_path, 6, lambda path: _write(path, "skill-3"))
    engine = open_engine(out)
    try:
        def matched(caller: Principal) -> list[str]:
            found = engine.explain(RouteQuery(message=ASK, caller=caller)).candidates
            return [c.matched_example for c in found if c.matched_example]

        assert matched(Principal("ops", frozenset({ROUTE, OPS}))) == [f"please {ASK} now"]
        assert matched(Principal("gateway", frozenset({ROUTE}))) == []  # maybe not its users'
        assert matched(Principal("team", frozenset({ROUTE, OPS}), ("default",),
                                 ("nothing-*",))) == []
    finally:
        engine.close()


def test_explicit_name_is_never_outranked_by_examples(tmp_path: Path) -> None:
    out, _ = _indexed(tmp_path, 6, lambda path: _write(path, "skill-3"))
    with serving(open_engine(out)) as served:
        reply = served.stub.Explain(pb.RouteRequest(message=f"/skill-1 {ASK}"), timeout=10)
        assert reply.route.skills[0].name == "skill-1"
        assert reply.route.skills[0].reason == pb.ROUTE_REASON_EXPLICIT
        assert all(not c.matched_example for c in reply.candidates)


def test_extra_examples_are_an_input_of_the_build(tmp_path: Path) -> None:
    """Examples from elsewhere (traffic) alone make a new version; the same ones again do not."""
    from router.builder.pipeline import Served, build, recorded_settings
    from router.builder.plan import BuildPlan, EncoderPlan
    from router.examples.model import Example, ExampleSource
    from router.index.store import load_index

    skills, out = write_catalog(tmp_path / "skills", 6), tmp_path / "index"
    assert main(index_argv(skills, out)) == 0
    plan = BuildPlan(DiscoveryConfig(bundled_roots=(str(skills),)), EncoderPlan("hash"))
    learned = [Example(ASK, ("skill-2",), (), ExampleSource.TRAFFIC, "traffic")]

    def rebuild(extra: list[Example]) -> bool:
        served = load_index(out)
        outcome = build(replace(plan, extra_examples=extra), out,
                        served=Served(served.info.version, served.skills,
                                      recorded_settings(served.info.path)))
        return outcome.info is not None

    assert rebuild(learned) and load_index(out).info.example_count == 1
    assert not rebuild(learned)
    assert rebuild([])  # the learned examples are gone again
    assert load_index(out).info.example_count == 0


def _write_many(path: Path, skills: int, word: str) -> None:
    rows = [{"query": f"{variant} run the {word}{i}x job", "skills": [f"skill-{i}"]}
            for i in range(skills) for variant in ("please", "kindly", "now")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_fitted_settings_are_shown_and_refitted_by_a_reindex(tmp_path: Path) -> None:
    out, examples = _indexed(tmp_path, 20, lambda path: _write_many(path, 20, "zq"))
    with serving(open_engine(out)) as served:
        stub = served.stub
        info = stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=10)
        fitted = json.loads(info.tuning_json)
        assert fitted["held_out"] == 60 and 0 <= fitted["recall_at_5"] <= 1
        explained = stub.Explain(pb.RouteRequest(message="kindly run the zq7x job"), timeout=10)
        assert explained.dense_weight == pytest.approx(fitted["dense_weight"])
        assert explained.example_mode == fitted["example_mode"]
        assert explained.lexical_with_examples == fitted["expand_lexical"]
        assert explained.settings_reason == fitted["reason"] != ""
        assert explained.route.skills[0].name == "skill-7"
        assert explained.refused == ""  # the gate let it through
        # An everyday request: the gate refuses it and Explain says which test and why.
        chat = stub.Explain(pb.RouteRequest(message="good morning! how are you today?"),
                            timeout=10)
        assert list(chat.route.skills) == [] and chat.refused != ""
        assert "off-topic" in chat.refused
        _write_many(examples, 15, "qz")  # the Reindex RPC fits the settings again
        moved = stub.Reindex(pb.ReindexRequest(), timeout=60)
        assert moved.swapped
        again = json.loads(stub.GetIndexInfo(pb.GetIndexInfoRequest(), timeout=10).tuning_json)
        assert again["held_out"] == 45
