"""A build's device does not change routing: the demo catalog embedded by the build pipeline on
each available device (the CPU here; CUDA fp32 / fp16 where torch sees a GPU, skipped
elsewhere) gives vectors within min cosine 0.9995 of plain CPU fp32 and the regression set's
R@5 within 0.002, with queries encoded on the CPU as a server does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from router.config import DEFAULT_MODEL
from router.encoders.base import Embedder
from router.encoders.device import Placement
from router.encoders.factory import make_embedder
from router.engine import Engine
from router.evaluation import metrics, runner
from router.index.versions.layout import VERSIONS, current_version
from tests.slow.conftest import DEMO
from tests.support import REPO
from tests.support.indexes import index_folder, open_engine

REQUESTS = REPO / "eval" / "regression" / "queries.jsonl"
MIN_COSINE = 0.9995
R5_TOLERANCE = 0.002
NEEDS_CUDA = pytest.mark.skipif("not __import__('torch').cuda.is_available()",
                                reason="no CUDA device here (measured on a GPU machine)")


def _vectors(index: Path) -> np.ndarray:
    return np.load(index / VERSIONS / current_version(index) / "vectors.npy")


@pytest.mark.parametrize("placement", [
    Placement("cpu", "fp32"),
    pytest.param(Placement("cuda:0", "fp32"), marks=NEEDS_CUDA),
    pytest.param(Placement("cuda:0", "fp16"), marks=NEEDS_CUDA),
], ids=lambda p: f"{p.device}-{p.precision}")
def test_the_build_device_keeps_vectors_and_routing(
        tmp_path: Path, demo_index: Path, demo_engine: Engine, real_embedder: Embedder,
        placement: Placement) -> None:
    requests = runner.load_requests(REQUESTS)
    expected = metrics.score(runner.run(demo_engine, requests)).recall_at[5]
    built = index_folder(DEMO, tmp_path / "index",
                         make_embedder(DEFAULT_MODEL, placement=placement), bodies=True)
    cosines = np.sum(_vectors(built) * _vectors(demo_index), axis=1)
    assert float(cosines.min()) >= MIN_COSINE
    got = metrics.score(runner.run(open_engine(built, real_embedder), requests)).recall_at[5]
    assert abs(got - expected) <= R5_TOLERANCE
