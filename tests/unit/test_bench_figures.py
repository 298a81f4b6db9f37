"""The benchmark's verdict figures: the OpenMP policy it runs under (and keeps from what it
measures), a Reindex with nothing and one skill changed, and p99 growth across sizes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import reindex as bench_reindex
from benchmarks.door import door_rows, split_figures
from benchmarks.measure import handler_seconds
from benchmarks.run import _growth_rows, floor_credit
from router.encoders.factory import make_embedder
from tests.support import REPO

PROBE = """
import json, os
from benchmarks import openmp
policy = openmp.passive_wait()
print(json.dumps([policy, os.environ.get("OMP_WAIT_POLICY"),
                  openmp.child_env({"X": "1"}).get("OMP_WAIT_POLICY", "unset")]))
"""


@pytest.mark.parametrize(("given", "expected"), [
    ({}, ["PASSIVE", "PASSIVE", "unset"]),
    ({"OMP_WAIT_POLICY": "ACTIVE"}, ["ACTIVE", "ACTIVE", "ACTIVE"]),
    ({"GOMP_SPINCOUNT": "300000"}, ["default (GOMP_SPINCOUNT=300000)", None, "unset"]),
])
def test_the_bench_waits_passively_but_measured_processes_get_its_starting_env(
        given: dict[str, str], expected: list[str | None]) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(given)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == expected


def test_the_policy_cannot_be_set_once_torch_or_faiss_is_loaded() -> None:
    done = subprocess.run([sys.executable, "-c", "import faiss\nfrom benchmarks import openmp\n"
                           "openmp.passive_wait()"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and "before faiss loads" in done.stderr


def test_a_reindex_is_timed_with_nothing_and_one_skill_changed(tmp_path: Path) -> None:
    embedder = make_embedder("hash")
    figures = bench_reindex.reindex_figures(tmp_path, 40, 3, embedder, embedder)
    assert (figures["skills"], figures["changed"], figures["no_op_built"]) == (40, 1, False)
    assert all(figures[f"{case}_s"] > 0 for case in ("full_build", "no_op", "one_changed"))
    assert figures["met"] == (figures["no_op_s"] <= bench_reindex.NO_OP_TARGET_S and
                              figures["one_changed_s"] <= figures["no_op_s"] + 1.0)
    printed = dict(bench_reindex.rows(figures))
    assert "full build" in printed["reindex of 40: no-op | 1 changed"]


def _size(p99_grpc: float, p99_local: float) -> dict[str, dict[str, float]]:
    return {"route_grpc": {"p99_ms": p99_grpc}, "route_in_process": {"p99_ms": p99_local}}


def test_the_json_row_is_its_p50_over_grpcs_against_the_bound() -> None:
    f = {"route_in_process": {"p50_ms": 2.0}, "route_grpc": {"p50_ms": 3.0},
         "route_json": {"p50_ms": 3.4}}
    json_row = "  10000 json p50 - grpc p50"
    assert dict(door_rows("10000", f))[json_row] == "+0.40 ms (within the 1.0 ms bound)"
    f["route_json"]["p50_ms"] = 4.5
    assert "OVER" in dict(door_rows("10000", f))[json_row]
    del f["route_json"]
    assert json_row not in dict(door_rows("10000", f))


def test_the_door_rows_split_a_grpc_route_into_the_servers_part_and_the_wires() -> None:
    f = {"route_in_process": {"p50_ms": 2.0}, "route_grpc": {"p50_ms": 3.5},
         "grpc_split": {"handler_p50_ms": 2.6, "wire_p50_ms": 0.85, "n": 10}}
    printed = dict(door_rows("10000", f))
    assert printed["  10000 gRPC p50 over in-process p50"] == (
        "+1.50 ms (in-process 2.00, gRPC 3.50 ms; target <= +1.00)")
    assert printed["  10000 gRPC: the server's own p50"] == (
        "2.60 ms (+0.60 over in-process); wire and gRPC both ways p50 0.85 ms")
    del f["grpc_split"]  # a run from before the split
    assert "  10000 gRPC: the server's own p50" not in dict(door_rows("10000", f))


def test_the_servers_own_time_is_read_from_server_timing_and_split_per_call() -> None:
    assert handler_seconds((("x-request-id", "r"), ("server-timing", "handler;dur=2.500"))
                           ) == 0.0025
    assert handler_seconds((("x-request-id", "r"),)) is None
    assert handler_seconds(None) is None
    # Per call: (client seconds, server's own seconds); the first `warmup` calls are left out.
    pairs = [(1.0, 0.9)] * 3 + [(0.004, 0.003), (0.005, 0.0035), (0.006, 0.0045)]
    assert split_figures(pairs) == {"handler_p50_ms": 3.5, "wire_p50_ms": 1.5, "n": 3}
    assert split_figures(pairs[:3])["n"] == 0


def test_p99_growth_is_each_size_over_the_smallest() -> None:
    sizes = {"1000": _size(10.0, 4.0), "10000": _size(13.0, 8.0)}
    assert dict(_growth_rows(sizes)) == {"p99 growth 1000 -> 10000":
                                         "gRPC 1.30x, in-process 2.00x"}
    assert list(_growth_rows({"1000": _size(1.0, 1.0)})) == []


def test_the_floor_is_credited_with_torchs_best_encode_alone() -> None:
    encoder = {"torch_1t": {"p50_ms": 11.0}, "torch_2t": {"p50_ms": 14.0},
               "torch_threads_for_floor": 1,
               "torch_alone": {"torch_1t": {"p50_ms": 10.5}, "torch_2t": {"p50_ms": 7.0}}}
    assert floor_credit(encoder) == 4.0
    encoder["torch_alone"] = {"torch_1t": {"p50_ms": 12.0}, "torch_2t": {"p50_ms": 300.0}}
    assert floor_credit(encoder) == 0.0
    assert floor_credit({}) == 0.0


def test_the_dev_sets_requests_are_timed_by_sentence_count(tmp_path: Path) -> None:
    from benchmarks import sentences as bench_sentences
    from tests.support.indexes import index_folder, open_engine

    queries = tmp_path / "queries.jsonl"
    one = [f"Convert invoice number {i} into a PDF file" for i in range(6)]
    many = [f"Open the report for week {i}. Then chart the totals by region." for i in range(6)]
    lines = [json.dumps({"query": q}) for q in (*one, *many, one[0])]  # a repeat is left out
    queries.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert bench_sentences.dev_requests(queries) == {"one_sentence": one,
                                                     "multi_sentence": many}
    assert bench_sentences.dev_requests(tmp_path / "absent.jsonl") == {}
    engine = open_engine(index_folder(REPO / "examples" / "skills", tmp_path / "index"))
    figures = bench_sentences.sentence_figures(engine, 5, queries)
    assert figures["requests"] == 5
    assert figures["one_sentence"]["texts_per_turn"] == 1.0
    assert figures["multi_sentence"]["texts_per_turn"] == 2.0  # its two sentences
    assert figures["multi_sentence"]["route"]["n"] == 5 - 3  # after the warm-up calls
    printed = dict(bench_sentences.sentence_rows("10000", {"sentences": figures}))
    assert "bare encode" in printed["  10000 dev multi-sentence Route"]
