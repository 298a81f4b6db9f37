"""The dense (FAISS) side of the index: inner product on normalised vectors (= cosine).

By size: a flat scan over the vectors stored as float16 (``IndexScalarQuantizer``,
``QT_fp16``) below ``PQ_MIN_VECTORS``; from there a scan of 4-bit product codes, two
dimensions a code (``IndexPQFastScan``, 96 bytes a 384-d vector against 768 for float16,
scanned with SIMD lookup tables); from ``HNSW_MIN_VECTORS`` on an HNSW graph
(``IndexHNSWFlat``, inner-product metric), whose settings are stored in the index file. A
single-query flat scan is bound by memory bandwidth (it reads every vector), so fewer bytes
is less time. The shortlist a scan returns is rescored exactly against the float32 vectors
the snapshot holds (``search_many(..., rescore=...)``), so only membership in the shortlist
can differ from an exact search, and scores and order never do; the product codes'
shortlist is ``SHORTLIST_FACTOR`` times the depth asked for, cut to that depth after
rescoring. Each product-code index is checked when it is built: the exact depth-50
neighbours of ``PQ_CHECK_ROWS`` of its own vectors must be in its shortlists (recall at
least ``PQ_CHECK_RECALL``), else the float16 scan is built instead, with a warning.

Product codes against float16, one OpenMP thread, k=50 (the codes' shortlist 200, then
rescored), p50 on a shared 2-core machine: 4,076 Seal-Tools descriptions and 600 of its
requests, 0.034 against 0.121 ms, the exact top 50 found for 599 of 600 requests by either;
10,000 synthetic descriptions and 400 bench requests, 0.051 against 0.348 ms, 400 of 400
(399 with float16). Training the codes (FAISS samples at most 4,096 vectors) takes 0.38 s
with 10 k-means rounds against 0.93 s with FAISS's 25, and finds the same: the build check
found every neighbour on both catalogs with either (a shortlist of twice the depth finds
0.997-0.999), the Seal-Tools requests 599 of 600 with 10 rounds, 600 with 25. With the
caches cold, as a Route finds them after its encoder, search and rescoring take the same at
2,048 of those descriptions (0.16 ms either way) and 0.17 against 0.25 ms at 4,076.

Measured with all-MiniLM-L6-v2, one OpenMP thread, real request embeddings, k=50, 10,000
embedded synthetic skill descriptions (p50 on a shared 2-core machine; compare within a row):

============  ==========  ===========  ==================  ==============================
vectors       flat f32    flat fp16    HNSW M=32 ef=128    memory f32 / fp16 / HNSW
============  ==========  ===========  ==================  ==============================
10,000        1.9 ms      0.5 ms       0.5 ms              15 MB / 7.7 MB / 18 MB
25,000        4.5 ms      -            0.6 ms              38 MB / 19 MB / 45 MB
100,000       19.6 ms     -            0.9 ms              154 MB / 77 MB / 181 MB
============  ==========  ===========  ==================  ==============================

At 10,000 (300 requests) the fp16 shortlist of 50 equals the exact one (recall@50 1.000,
recall@10 0.9997 before rescoring); HNSW gives recall@10 0.9993 and recall@50 0.9975. HNSW
recall@10 against exact search, real request embeddings: 0.9987 over 10,000 embedded synthetic
skill descriptions and 0.9967 over the 4,076 Seal-Tools descriptions with efSearch 128;
efSearch 64 gives 0.9957 / 0.984, M=16 0.9957 / 0.9937. Latency rows past 10,000 use real
vectors plus noise (latency does not depend on the text). Below 20,000 vectors the flat scan
stays within ~1 ms of HNSW and builds instantly, while an HNSW build takes 2.7 s per 10,000
and 45-50 s per 100,000 vectors on one thread here and is redone on every reindex.

At 1M vectors (``benchmarks/dense_scale.py``; 10,000 real rows plus near-copies of them, a
pessimistic case with many near-ties) efSearch 128 / 256 / 512 give recall@10 0.839 / 0.916 /
0.947 at 0.72 / 1.01 / 1.88 ms p50: a server sets its own value with ``index.hnsw_ef_search``.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from router.errors import InvalidRequest

log = logging.getLogger(__name__)

HNSW_MIN_VECTORS = 20_000  # below this, the flat fp16 scan is within ~1 ms of HNSW
PQ_MIN_VECTORS = 2_048  # from here to HNSW_MIN_VECTORS, 4-bit product codes (even here)
SHORTLIST_FACTOR = 4  # the product codes' shortlist: this many times the depth asked for
PQ_CHECK_ROWS = 256  # own vectors whose exact neighbours a new product-code index must find
PQ_CHECK_DEPTH = 50  # the routing depth
PQ_CHECK_RECALL = 0.999
PQ_TRAIN_ITERATIONS = 10  # k-means rounds per code book (FAISS: 25, 2.5x the build time)
HNSW_M = 32  # graph degree
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128  # >= the routing depth (50); recall@10 vs exact >= 0.99 at this value
FLAT = "flat"  # float32, exact (what the benchmark's floor searches)
FLAT16 = "flat-fp16"  # float16 scan; its shortlist is rescored exactly
FLAT_PQ = "flat-pq4"  # 4-bit product codes, two dimensions each; a wider shortlist, rescored
HNSW = "hnsw"


@cache  # once: every search asks (is the index product codes?)
def _faiss() -> Any:
    # faiss's loader logs at INFO which build it tried, including a misleading "Could not load
    # library with AVX2 support" on dynamic-dispatch builds (faiss-cpu 1.10+, AVX2 in use).
    loader = logging.getLogger("faiss.loader")
    if loader.level == logging.NOTSET:
        loader.setLevel(logging.WARNING)
    import faiss

    return faiss


def choose_kind(count: int) -> str:
    """The index kind for ``count`` vectors: a flat scan while it is about as fast as HNSW."""
    if count >= HNSW_MIN_VECTORS:
        return HNSW
    return FLAT_PQ if count >= PQ_MIN_VECTORS else FLAT16


def build(vectors: np.ndarray, kind: str | None = None, *, m: int = HNSW_M,
          ef_search: int = HNSW_EF_SEARCH, trained: Any = None) -> Any:
    """An inner-product index over ``vectors`` (``kind`` None: by size, see ``choose_kind``);
    ``trained``: product codes whose code books are taken instead of training new ones (they
    must pass the same recall check, else new ones are trained)."""
    faiss = _faiss()
    dim = int(vectors.shape[1])
    kind = kind or choose_kind(len(vectors))
    if kind == FLAT_PQ:
        codes = _product_codes(vectors, trained)
        if codes is not None:
            return codes
        kind = FLAT16
    if kind == FLAT:
        index = faiss.IndexFlatIP(dim)
    elif kind == FLAT16:
        index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16,
                                           faiss.METRIC_INNER_PRODUCT)
    elif kind == HNSW:
        index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        index.hnsw.efSearch = ef_search
    else:
        raise ValueError(f"unknown dense index kind {kind!r}; "
                         f"use {FLAT!r}, {FLAT16!r}, {FLAT_PQ!r} or {HNSW!r}")
    if len(vectors):
        if not index.is_trained:
            index.train(np.ascontiguousarray(vectors, dtype=np.float32))
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    log.debug("built %s index over %d vectors", kind, len(vectors))
    return index


def _product_codes(vectors: np.ndarray, trained: Any = None) -> Any:
    """A product-code index over ``vectors``, or None (with a warning) where its shortlists
    miss more of its own vectors' exact neighbours than ``PQ_CHECK_RECALL`` allows."""
    faiss = _faiss()
    rows = np.ascontiguousarray(vectors, dtype=np.float32)
    count, dim = rows.shape
    if dim % 2 or count <= PQ_CHECK_DEPTH:
        log.warning("no product codes for %d vectors of %d dimensions; a float16 scan "
                    "serves", count, dim)
        return None
    if kind_of(trained) == FLAT_PQ and (trained.d, trained.M) == (dim, dim // 2):
        index = faiss.deserialize_index(faiss.serialize_index(trained))
        index.reset()  # the code books stay
    else:
        trained = None
        index = faiss.IndexPQFastScan(dim, dim // 2, 4, faiss.METRIC_INNER_PRODUCT)
        index.pq.cp.niter = PQ_TRAIN_ITERATIONS
        index.train(rows)
    index.add(rows)
    picked = np.random.default_rng(0).choice(count, min(PQ_CHECK_ROWS, count), replace=False)
    probes = rows[np.sort(picked)]
    depth = PQ_CHECK_DEPTH
    exact = np.argpartition(-(probes @ rows.T), depth - 1, axis=1)[:, :depth]
    _, found = index.search(probes, depth * SHORTLIST_FACTOR)
    recall = float(np.mean([np.isin(e, f).mean() for e, f in zip(exact, found, strict=True)]))
    if recall < PQ_CHECK_RECALL and trained is not None:
        return _product_codes(vectors)  # the code books kept no longer fit: trained anew
    if recall < PQ_CHECK_RECALL:
        log.warning("product codes found %.4f of the exact neighbours of %d vectors (bound "
                    "%.3f); a float16 scan serves", recall, count, PQ_CHECK_RECALL)
        return None
    log.debug("product codes over %d vectors: shortlist recall %.4f", count, recall)
    return index


def kind_of(index: Any) -> str:
    if hasattr(index, "hnsw"):
        return HNSW
    if isinstance(index, _faiss().IndexPQFastScan):
        return FLAT_PQ
    return FLAT16 if isinstance(index, _faiss().IndexScalarQuantizer) else FLAT


def save(index: Any, path: Path) -> None:
    _faiss().write_index(index, str(path))


def load(path: Path) -> Any:
    return _faiss().read_index(str(path))


def search(index: Any, query: np.ndarray, k: int, *,
           rescore: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` ids and scores for one normalised query row (see ``search_many``)."""
    return search_many(index, query.reshape(1, -1), k, rescore=rescore)[0]


EXACT_WITHIN = 8192  # a view of at most this many rows is scored exactly, row by row


def _exact_within(index: Any, rows: np.ndarray, queries: np.ndarray,
                  k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, ids) as FAISS returns them, from ``index``, a flat index of ``rows`` only."""
    scores, found = index.search(queries, min(k, len(rows)))
    ids = np.where(found >= 0, rows[np.maximum(found, 0)], -1)
    return scores, ids


def within_index(vectors: np.ndarray, rows: np.ndarray) -> Any:
    """The exact index a view of ``rows`` (at most ``EXACT_WITHIN``) is searched with."""
    return build(np.ascontiguousarray(vectors[rows]), FLAT)


def _selected(index: Any, queries: np.ndarray, k: int, rows: np.ndarray) -> tuple[Any, Any]:
    faiss = _faiss()
    mask = np.zeros(int(index.ntotal), dtype=bool)
    mask[rows] = True
    bits = np.packbits(mask, bitorder="little")
    selector = faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bits))
    params = faiss.SearchParametersHNSW(sel=selector) if hasattr(index, "hnsw") \
        else faiss.SearchParameters(sel=selector)
    scores, ids = index.search(queries, k, params=params)
    return scores, ids


def search_many(index: Any, queries: np.ndarray, k: int, *,
                rescore: np.ndarray | None = None, within: np.ndarray | None = None,
                within_exact: Any = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Top-``k`` ids and scores for each normalised query row, in one batched search; FAISS's
    -1 padding is dropped. With ``rescore`` (the float32 vectors the index was built from),
    each shortlist is scored again exactly and reordered, best first (ties: lower id); a
    product-code index's shortlist is ``SHORTLIST_FACTOR`` times ``k``, cut to ``k`` then.
    ``within`` (sorted rows) searches only those rows, so a caller who sees a small part of a
    large catalog still gets ``k`` of its own: scored exactly when few (``within_exact``: their
    ``within_index``, made once per view; else made now), else through a FAISS ID selector."""
    k = min(k, int(index.ntotal) if within is None else len(within))
    if k <= 0 or len(queries) == 0:
        return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))] * len(queries)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    codes = rescore is not None and isinstance(index, _faiss().IndexPQFastScan)
    wide = min(k * SHORTLIST_FACTOR, int(index.ntotal)) if codes else k
    if within is None:
        scores, ids = index.search(queries, wide)
    elif within_exact is not None or (rescore is not None and len(within) <= EXACT_WITHIN):
        exact = within_exact if within_exact is not None \
            else within_index(rescore, within)  # type: ignore[arg-type]
        scores, ids = _exact_within(exact, within, queries, k)
    elif codes:
        scores, ids = _filtered(index, queries, min(wide, len(within)), within)
    else:
        scores, ids = _selected(index, queries, k, within)
    out = []
    for query, row_ids, row_scores in zip(queries, ids, scores, strict=True):
        if len(row_ids) and row_ids[-1] >= 0:  # FAISS pads the end with -1, if at all
            keep, found = row_ids.astype(np.int64, copy=False), row_scores
        else:
            held = row_ids >= 0
            keep, found = row_ids[held].astype(np.int64), row_scores[held]
        if rescore is not None and len(keep):
            found = rescore[keep] @ query
            order = np.lexsort((keep, -found))[:k]  # a partial sort first: no faster at 200
            keep, found = keep[order], found[order]
        out.append((keep, found.astype(np.float32, copy=False)))
    return out


def _filtered(index: Any, queries: np.ndarray, k: int,
              rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``k`` hits within ``rows`` per query from an index with no ID selector (product
    codes): the whole index searched deeper, in proportion to the part ``rows`` is of it,
    and again twice as deep until every query has ``k`` of them; -1 pads what is missing."""
    total = int(index.ntotal)
    mask = np.zeros(total, dtype=bool)
    mask[rows] = True
    depth = min(total, 2 * -(-k * total // len(rows)))
    while True:
        scores, ids = index.search(queries, depth)
        held = (ids >= 0) & mask[np.maximum(ids, 0)]
        if depth >= total or int(held.sum(axis=1).min()) >= k:
            break
        depth = min(total, 2 * depth)
    out_scores = np.zeros((len(queries), k), dtype=np.float32)
    out_ids = np.full((len(queries), k), -1, dtype=np.int64)
    for i, keep in enumerate(held):
        got = ids[i][keep][:k]
        out_ids[i, :len(got)] = got
        out_scores[i, :len(got)] = scores[i][keep][:k]
    return out_scores, out_ids


def set_ef_search(index: Any, ef_search: int) -> None:
    """Set an HNSW index's search breadth (``efSearch``); other kinds have none."""
    if ef_search < 1:
        raise InvalidRequest(f"index.hnsw_ef_search must be at least 1, got {ef_search}")
    if hasattr(index, "hnsw"):
        index.hnsw.efSearch = ef_search


def set_threads(n: int) -> None:
    """Single queries are fastest on one OpenMP thread on small machines."""
    _faiss().omp_set_num_threads(n)
