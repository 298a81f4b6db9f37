"""Slow tests: the real default model (skill-router-l6-v2, shipped in the package), loaded once
per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.config import DEFAULT_MODEL
from router.encoders.base import Embedder
from router.encoders.factory import make_embedder
from router.engine import Engine
from tests.support import REPO
from tests.support.indexes import index_folder, open_engine

DEMO = REPO / "examples" / "skills"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/slow/" in str(item.fspath):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    return make_embedder(DEFAULT_MODEL)


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory: pytest.TempPathFactory, real_embedder: Embedder) -> Path:
    return index_folder(DEMO, tmp_path_factory.mktemp("demo-index"), real_embedder, bodies=True)


@pytest.fixture(scope="session")
def demo_engine(demo_index: Path, real_embedder: Embedder) -> Engine:
    return open_engine(demo_index, real_embedder)
