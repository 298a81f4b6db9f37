"""The versions on disk (``router.index.versions``) sit below the build and the snapshot: no
module of the package imports the build, the files a version holds (FAISS, BM25, vectors,
examples), encoder fine-tuning or the encoders, wherever the import statement stands."""

from __future__ import annotations

from pathlib import Path

from tests.support import REPO
from tests.support.imports import imported_modules

VERSIONS = REPO / "router" / "index" / "versions"
ABOVE = ("vectors", "example_store", "dense", "lexical", "store", "serving", "query_encoder",
         "version_files", "digest_store")
FORBIDDEN = (*(f"router.index.{name}" for name in ABOVE), "router.builder", "router.encoders")


def _climbing(source: str) -> list[str]:
    """The forbidden modules ``source``, a module of the versions package, imports."""
    return sorted(n for n in imported_modules(source, ("router", "index", "versions"))
                  if any(n == f or n.startswith(f + ".") for f in FORBIDDEN))


def _package_files() -> list[Path]:
    return sorted(VERSIONS.rglob("*.py"))


def test_the_versions_package_holds_layout_recovery_and_retention() -> None:
    names = {p.stem for p in _package_files()}
    assert {"__init__", "layout", "recovery", "retention"} <= names


def test_no_versions_module_imports_the_build_or_the_encoders() -> None:
    found = {str(p.relative_to(REPO)): hits for p in _package_files()
             if (hits := _climbing(p.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_check_sees_every_kind_of_import() -> None:
    for source in ("import router.builder.pipeline",
                   "from router.builder.plan import BuildPlan",
                   "from router.index import vectors",
                   "from router.builder.fine_tune import stored",
                   "from router.encoders.base import Embedder",
                   "def load() -> None:\n    from router.index.store import load_index",
                   "if TYPE_CHECKING:\n    from router.index.store import IndexSnapshot",
                   "from .. import dense",
                   "from ..lexical import LexicalIndex",
                   "from ...encoders import factory"):
        assert _climbing(source), source
    for source in ("from router.index.versions.layout import VERSIONS",
                   "from .layout import current_version", "from . import recovery",
                   "from router.common import integrity", "from router.errors import IndexCorrupt",
                   "from router.index.buildings import x"):
        assert _climbing(source) == [], source
