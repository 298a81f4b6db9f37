"""The benchmark's process-level helpers work (nothing here is timed)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.door import split_figures
from benchmarks.measure import (
    cold_start,
    free_port,
    grpc_route_call,
    json_route_call,
    serve_process,
    summary,
)
from tests.support.indexes import build_hash_index
from tests.support.skills import skill_record


def _index(root: Path) -> Path:
    return build_hash_index([skill_record(f"skill-{i}", f"Handles task number {i} for PDF files.",
                                          root="/s") for i in range(5)], root)


def test_served_process_answers_many_calls_and_cold_start_reports(tmp_path: Path) -> None:
    root = _index(tmp_path)
    with serve_process(root) as address:
        call, close = grpc_route_call(address)
        try:
            # More calls than a 64 KiB stderr pipe would hold of per-call log lines.
            replies = [call(f"pdf task {i}") for i in range(800)]
        finally:
            close()
    assert all(r.index_version for r in replies)  # type: ignore[attr-defined]
    started = cold_start(root, "pdf task")
    assert started["seconds"] > 0


def test_the_served_process_answers_route_at_its_json_door_too(tmp_path: Path) -> None:
    root = _index(tmp_path)
    port = free_port()
    with serve_process(root, http_port=port) as address:
        by_grpc, close_grpc = grpc_route_call(address)
        by_json, close_json = json_route_call(f"http://127.0.0.1:{port}")
        try:
            answers = [json.loads(by_json(f"pdf task {i}")) for i in range(50)]  # type: ignore[arg-type]
            version = by_grpc("pdf task").index_version  # type: ignore[attr-defined]
        finally:
            close_grpc()
            close_json()
    assert {a["indexVersion"] for a in answers} == {version}


def test_a_timed_route_records_the_servers_own_time_within_the_clients(tmp_path: Path) -> None:
    root = _index(tmp_path)
    pairs: list[tuple[float, float]] = []
    with serve_process(root) as address:
        call, close = grpc_route_call(address, pairs)
        try:
            replies = [call(f"pdf task {i}") for i in range(8)]
        finally:
            close()
    assert all(r.index_version for r in replies)  # type: ignore[attr-defined]
    assert len(pairs) == 8 and all(0 < own < elapsed for elapsed, own in pairs)
    split = split_figures(pairs)
    assert split["n"] == 5 and split["handler_p50_ms"] > 0 and split["wire_p50_ms"] > 0


def test_summary_orders_percentiles() -> None:
    figures = summary([0.001 * i for i in range(1, 101)])
    assert figures["p50_ms"] <= figures["p99_ms"]


def test_cached_vectors_build_an_index_with_its_calibrated_gate(tmp_path: Path) -> None:
    # The benchmark's catalogs come with precomputed vectors; a build also embeds the bundled
    # off-topic requests (the gate's calibration), which the fallback encoder embeds.
    import numpy as np

    from benchmarks.encoders import CachedEmbedder
    from router.builder.version import build_index
    from router.encoders.hashing import HashEmbedder
    from router.index.store import load_index
    from router.index.vectors import embedding_text

    skills = [skill_record(f"skill-{i}", f"Handles task number {i} for PDF files.", root="/s")
              for i in range(5)]
    fallback = HashEmbedder()
    rows = np.eye(5, fallback.dimension, dtype=np.float32)
    cached = CachedEmbedder(fallback.model_id, skills, rows, fallback)
    texts = [embedding_text(skills[3]), "What is the capital of France?"]
    assert np.array_equal(cached.encode(texts)[0], rows[3])
    assert np.allclose(cached.encode(texts)[1], fallback.encode(texts[1:])[0])
    build_index(skills, [], cached, tmp_path / "index")
    snap = load_index(tmp_path / "index")
    assert snap.calibration is not None and np.array_equal(snap.vectors, rows)
