"""Example requests over gRPC: an index built with --examples routes by them, Explain names
the example, and a Reindex after the examples file changed swaps in a new version."""

from __future__ import annotations

import json
from pathlib import Path

from router.cli import main
from router.v1 import router_pb2 as pb
from tests.service.opskit import engine_for, index_argv, serving, write_catalog

ASK = "zebra quokka marmalade"  # words no skill description uses


def _retrieved(reply: pb.RouteResponse) -> list[str]:
    return [s.name for s in reply.skills if s.reason == pb.ROUTE_REASON_RETRIEVED]


def _write(path: Path, skill: str) -> None:
    rows = [{"id": "a", "query": f"please {ASK} now", "skills": [skill]},
            {"query": "tell me a joke about cats", "skills": []}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_examples_route_explain_and_reindex_on_change(tmp_path: Path) -> None:
    skills, out, examples = write_catalog(tmp_path / "skills", 6), tmp_path / "index", \
        tmp_path / "examples.jsonl"
    _write(examples, "skill-3")
    assert main([*index_argv(skills, out), "--examples", str(examples)]) == 0
    with serving(engine_for(out)) as served:
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


def test_explicit_name_is_never_outranked_by_examples(tmp_path: Path) -> None:
    skills, out, examples = write_catalog(tmp_path / "skills", 6), tmp_path / "index", \
        tmp_path / "examples.jsonl"
    _write(examples, "skill-3")
    assert main([*index_argv(skills, out), "--examples", str(examples)]) == 0
    with serving(engine_for(out)) as served:
        reply = served.stub.Explain(pb.RouteRequest(message=f"/skill-1 {ASK}"), timeout=10)
        assert reply.route.skills[0].name == "skill-1"
        assert reply.route.skills[0].reason == pb.ROUTE_REASON_EXPLICIT
        assert all(not c.matched_example for c in reply.candidates)


def test_traffic_examples_passed_to_a_reindex_build_a_new_version(tmp_path: Path) -> None:
    from router.learning.model import Example, ExampleSource
    from router.reindex import reindex_engine

    skills, out = write_catalog(tmp_path / "skills", 6), tmp_path / "index"
    assert main(index_argv(skills, out)) == 0
    engine = engine_for(out)
    learned = [Example(ASK, ("skill-2",), (), ExampleSource.TRAFFIC, "traffic")]
    first = reindex_engine(engine, extra_examples=learned)
    assert first.swapped and engine.info().example_count == 1
    assert not reindex_engine(engine, extra_examples=learned).swapped
    assert reindex_engine(engine).swapped  # the learned examples are gone again
    assert engine.info().example_count == 0
