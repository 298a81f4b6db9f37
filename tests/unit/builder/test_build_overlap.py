"""The FAISS index, now built on a thread beside BM25, is the index of the version's vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from router.index import dense
from router.index.versions.layout import VERSIONS, current_version
from tests.support.indexes import index_folder
from tests.support.skills import write_catalog


@pytest.mark.parametrize("hnsw_from", [dense.HNSW_MIN_VECTORS, 4])
def test_the_written_dense_index_searches_the_written_vectors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hnsw_from: int) -> None:
    monkeypatch.setattr(dense, "HNSW_MIN_VECTORS", hnsw_from)
    out = index_folder(write_catalog(tmp_path / "skills", 24), tmp_path / "index")
    folder = out / VERSIONS / current_version(out)
    vectors = np.load(folder / "vectors.npy")
    written = dense.load(folder / "dense.faiss")
    assert written.ntotal == len(vectors) == 24
    assert dense.kind_of(written) == dense.choose_kind(len(vectors))
    fresh = dense.build(vectors)
    _, got = written.search(vectors, 3)
    _, expected = fresh.search(vectors, 3)
    assert (got[:, 0] == np.arange(len(vectors))).all()  # every skill finds itself first
    assert (got == expected).all()
