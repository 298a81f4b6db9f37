"""The dense index: exact flat search, the HNSW switch, persistence of its settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from router.errors import InvalidRequest
from router.index import codebooks, dense


def _unit_rows(n: int, dim: int = 32, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _clustered_rows(n: int, dim: int = 64, seed: int = 0) -> np.ndarray:
    """Unit rows near a low-dimensional subspace, as text embeddings are (random rows in 64
    dimensions have no structure a product code can learn)."""
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(n, 8)) @ rng.normal(size=(8, dim)) + 0.05 * rng.normal(size=(n, dim))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _near(rows: np.ndarray, count: int, seed: int) -> np.ndarray:
    """Queries like ``rows``: some of them, moved a little."""
    rng = np.random.default_rng(seed)
    picked = rows[rng.choice(len(rows), count, replace=False)]
    moved = picked + 0.1 * rng.normal(size=picked.shape) / np.sqrt(rows.shape[1])
    return (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)


def test_kind_switches_at_threshold() -> None:
    assert dense.choose_kind(dense.PQ_MIN_VECTORS - 1) == dense.FLAT16
    assert dense.choose_kind(dense.PQ_MIN_VECTORS) == dense.FLAT_PQ
    assert dense.choose_kind(dense.HNSW_MIN_VECTORS - 1) == dense.FLAT_PQ
    assert dense.choose_kind(dense.HNSW_MIN_VECTORS) == dense.HNSW
    assert dense.kind_of(dense.build(_unit_rows(10))) == dense.FLAT16
    assert dense.kind_of(dense.build(_unit_rows(10), dense.FLAT)) == dense.FLAT


def test_flat_search_is_exact_cosine() -> None:
    rows = _unit_rows(200)
    ids, scores = dense.search(dense.build(rows, dense.FLAT), rows[17], 5)
    assert ids[0] == 17
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    expected = np.argsort(-(rows @ rows[17]))[:5]
    assert list(ids) == list(expected)


def test_fp16_scan_with_rescoring_gives_the_exact_ids_scores_and_order(tmp_path: Path) -> None:
    rows = _unit_rows(3000, dim=64)
    queries = _unit_rows(40, dim=64, seed=1)
    dense.save(dense.build(rows, dense.FLAT16), tmp_path / "dense.faiss")
    fp16 = dense.load(tmp_path / "dense.faiss")
    assert dense.kind_of(fp16) == dense.FLAT16
    exact = dense.search_many(dense.build(rows, dense.FLAT), queries, 20)
    rescored = dense.search_many(fp16, queries, 20, rescore=rows)
    raw = dense.search_many(fp16, queries, 20)
    for (e_ids, e_scores), (r_ids, r_scores), (_, f_scores) in zip(exact, rescored, raw,
                                                                  strict=True):
        assert r_ids.tolist() == e_ids.tolist()
        np.testing.assert_allclose(r_scores, e_scores, rtol=0, atol=1e-6)
        assert r_scores.dtype == np.float32
        assert np.abs(f_scores - e_scores).max() < 1e-2  # fp16 scores are close, not equal


@pytest.fixture(params=["native", "AVX2"])
def simd_level(request: pytest.FixtureRequest) -> Iterator[str]:
    """FAISS's kernels as this CPU runs them, then as a CPU with AVX2 alone would (FAISS
    dispatches at run time, so any x86 machine with AVX2 can run the narrower kernels)."""
    faiss = pytest.importorskip("faiss")
    config = faiss.SIMDConfig
    if request.param == "native":
        yield "native"
        return
    level = getattr(faiss, f"SIMDLevel_{request.param}", None)
    if level is None or not config.has_dynamic_dispatch() or \
            not config.is_simd_level_available(level):
        pytest.skip(f"FAISS cannot run its {request.param} kernels here")
    before = config.get_level()
    config.set_level(level)
    try:
        yield request.param
    finally:
        config.set_level(before)


def test_product_codes_with_rescoring_give_the_exact_ids_scores_and_order(
        tmp_path: Path, simd_level: str) -> None:
    rows = _clustered_rows(3000)
    queries = _near(rows, 60, seed=1)
    built = dense.build(rows)
    assert dense.kind_of(built) == dense.FLAT_PQ
    dense.save(built, tmp_path / "dense.faiss")
    codes = dense.load(tmp_path / "dense.faiss")
    assert dense.kind_of(codes) == dense.FLAT_PQ
    exact = dense.search_many(dense.build(rows, dense.FLAT), queries, 50)
    rescored = dense.search_many(codes, queries, 50, rescore=rows)
    same, found = 0, []
    for query, (e_ids, e_scores), (r_ids, r_scores) in zip(queries, exact, rescored,
                                                         strict=True):
        assert len(r_ids) == 50
        np.testing.assert_allclose(r_scores, rows[r_ids] @ query, rtol=0, atol=1e-6)
        assert (np.diff(r_scores) <= 0).all()
        found.append(len(set(r_ids.tolist()) & set(e_ids.tolist())) / 50)
        if set(r_ids.tolist()) == set(e_ids.tolist()):  # near-ties may swap places
            same += 1
            np.testing.assert_allclose(r_scores, e_scores, rtol=0, atol=1e-6)
    # Two codes a 64-d row are coarser than 192 a 384-d embedding: nearly every shortlist
    # holds the exact 50 here (a shortlist of 50 holds them for none, of 100 for about half).
    assert same >= 54 and np.mean(found) >= 0.995
    raw = dense.search_many(codes, queries, 50)  # unrescored: the codes' own, shorter list
    assert [len(ids) for ids, _ in raw] == [50] * len(queries)


def test_product_codes_are_built_alike_each_time() -> None:
    faiss = pytest.importorskip("faiss")
    rows = _clustered_rows(2500)
    first, second = dense.build(rows, dense.FLAT_PQ), dense.build(rows, dense.FLAT_PQ)
    assert bytes(faiss.serialize_index(first)) == bytes(faiss.serialize_index(second))


def test_product_codes_that_miss_neighbours_give_way_to_the_fp16_scan(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="router.index.dense"):
        index = dense.build(_unit_rows(3000, dim=64))  # no structure: the check fails
    assert dense.kind_of(index) == dense.FLAT16
    assert "a float16 scan serves" in caplog.text
    assert dense.kind_of(dense.build(_clustered_rows(3000, dim=63), dense.FLAT_PQ)) == \
        dense.FLAT16  # an odd dimension has no two-dimension codes


def test_product_codes_search_a_large_view_through_the_whole_index(
        monkeypatch: pytest.MonkeyPatch, simd_level: str) -> None:
    monkeypatch.setattr(dense, "EXACT_WITHIN", 100)  # so the view below is "large"
    rows = _clustered_rows(3000)
    queries = _near(rows, 30, seed=2)
    codes = dense.build(rows)
    assert dense.kind_of(codes) == dense.FLAT_PQ
    within = np.flatnonzero(np.arange(3000) % 7 == 3)  # 429 rows, a seventh of the index
    got = dense.search_many(codes, queries, 50, rescore=rows, within=within)
    for query, (ids, scores) in zip(queries, got, strict=True):
        exact = within[np.argsort(-(rows[within] @ query))][:50]
        assert set(ids.tolist()) == set(exact.tolist())
        np.testing.assert_allclose(scores, rows[ids] @ query, rtol=0, atol=1e-6)
    far = np.argsort(rows @ queries[0])[:150]  # the rows least like the query: found late
    few = dense.search_many(codes, queries[:1], 50, rescore=rows, within=np.sort(far))
    ids = few[0][0]
    assert len(ids) == 50  # the search deepened until it had them
    assert set(ids.tolist()) == set(far[np.argsort(-(rows[far] @ queries[0]))[:50]].tolist())


def test_hnsw_matches_exact_top_hits_and_keeps_settings(tmp_path: Path) -> None:
    rows = _unit_rows(2000)
    index = dense.build(rows, dense.HNSW, m=16, ef_search=96)
    dense.save(index, tmp_path / "dense.faiss")
    loaded = dense.load(tmp_path / "dense.faiss")
    assert dense.kind_of(loaded) == dense.HNSW
    assert loaded.hnsw.efSearch == 96
    flat = dense.build(rows, dense.FLAT)
    found = [len(set(dense.search(loaded, q, 10)[0]) & set(dense.search(flat, q, 10)[0]))
             for q in rows[:50]]
    assert np.mean(found) / 10 >= 0.95


def test_k_larger_than_index_and_empty_index() -> None:
    rows = _unit_rows(3)
    ids, _ = dense.search(dense.build(rows), rows[0], 10)
    assert sorted(ids.tolist()) == [0, 1, 2]
    empty = dense.build(np.zeros((0, 8), dtype=np.float32))
    assert dense.search(empty, np.ones(8, dtype=np.float32), 5)[0].size == 0
    assert [h[0].size for h in dense.search_many(empty, np.ones((2, 8), np.float32), 5)] == [0, 0]


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown dense index kind"):
        dense.build(_unit_rows(4), "ivf")


def test_set_ef_search_sets_the_hnsw_search_breadth_and_leaves_flat_indexes_alone() -> None:
    rows = _unit_rows(300)
    hnsw = dense.build(rows, dense.HNSW)
    dense.set_ef_search(hnsw, 300)
    assert hnsw.hnsw.efSearch == 300
    dense.set_ef_search(dense.build(rows), 300)  # nothing to set on a flat scan
    with pytest.raises(InvalidRequest, match="hnsw_ef_search must be at least 1"):
        dense.set_ef_search(hnsw, 0)


@pytest.mark.parametrize("kind", [dense.FLAT, dense.HNSW])
@pytest.mark.parametrize("size", [20, dense.EXACT_WITHIN + 100])
def test_a_search_within_rows_finds_the_best_of_those_rows_only(kind: str, size: int) -> None:
    vectors = _unit_rows(dense.EXACT_WITHIN + 400, seed=3)
    index = dense.build(vectors, kind)
    query = _unit_rows(1, seed=4)
    rng = np.random.default_rng(5)
    within = np.sort(rng.choice(len(vectors), size=size, replace=False)).astype(np.int64)
    ids, scores = dense.search_many(index, query, 10, rescore=vectors, within=within)[0]
    assert len(ids) == 10 and set(ids.tolist()) <= set(within.tolist())
    exact = within[np.argsort(-(vectors[within] @ query[0]))[:10]]
    if kind == dense.FLAT:
        assert ids.tolist() == exact.tolist()
    else:  # HNSW with a selector: approximate, but most of the exact top 10
        assert len(set(ids.tolist()) & set(exact.tolist())) >= 7
    assert np.allclose(scores, vectors[ids] @ query[0], atol=1e-5)


@pytest.mark.parametrize("seed", range(5))
def test_a_rescored_shortlist_is_best_first_with_ties_to_the_lower_id(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = np.ascontiguousarray(_unit_rows(40, seed=seed)[rng.integers(0, 40, size=600)])
    query = _unit_rows(1, seed=seed + 100)  # equal rows above: ties in every shortlist
    index = dense.build(rows, dense.FLAT16)
    for k in (1, 10, 50):
        ids, scores = dense.search_many(index, query, k, rescore=rows)[0]
        assert len(ids) == len(set(ids.tolist())) == k
        assert np.allclose(scores, rows[ids] @ query[0], atol=1e-6)
        for a, b, i, j in zip(scores, scores[1:], ids, ids[1:], strict=False):
            assert a > b or (a == b and i < j)


def test_kept_code_books_encode_new_rows_and_give_way_when_they_no_longer_fit() -> None:
    faiss = pytest.importorskip("faiss")
    rows = _clustered_rows(2500)
    first = dense.build(rows)
    assert dense.kind_of(first) == dense.FLAT_PQ
    moved = rows.copy()
    moved[5] = _clustered_rows(1, seed=9)[0]  # one row changed
    kept = dense.build(moved, trained=first)
    books = [faiss.vector_to_array(i.pq.centroids) for i in (first, kept)]
    assert np.array_equal(*books) and kept.ntotal == 2500  # the same code books, new codes
    assert codebooks.Kept(first, {"trained_in": "v1", "rows": 2500, "since": 1}).written(
        kept, "v2") == {codebooks.RECORD: {"trained_in": "v1", "rows": 2500, "since": 1}}
    small = dense.build(_clustered_rows(2500, seed=5) * np.float32(0.01))  # books near 0
    unfit = dense.build(_clustered_rows(2500, seed=4), trained=small)
    assert dense.kind_of(unfit) == dense.FLAT_PQ  # trained anew: the kept ones missed
    assert not np.array_equal(*(faiss.vector_to_array(i.pq.centroids) for i in (small, unfit)))
    assert codebooks.Kept().written(unfit, "v3")[codebooks.RECORD]["trained_in"] == "v3"
