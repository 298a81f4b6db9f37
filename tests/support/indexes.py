"""Indexes for the tests, built with the hash test embedder unless told otherwise, and Engines
opened on them; ``index_catalog`` goes through ``skill-router index`` so the discovery settings
are recorded (Reindex needs them)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from router.builder.bodies import bodies_for
from router.builder.inputs import Carried
from router.builder.version import build_index
from router.cli import main
from router.config import Config, DiscoveryConfig, IndexConfig
from router.encoders.base import Embedder
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.skills.model import Diagnostic, Skill
from router.skills.sources.base import create_source
from tests.support.skills import TOPICS, write_catalog


def build_hash_index(skills: Iterable[Skill], root: Path,
                     diagnostics: Iterable[Diagnostic] = ()) -> Path:
    """Build the index of ``skills`` into ``root`` with the hash embedder; return ``root``."""
    build_index(list(skills), list(diagnostics), HashEmbedder(), root)
    return root


def index_folder(skills: Path, out: Path, embedder: Embedder | None = None, *,
                 bodies: bool = False) -> Path:
    """Discover the skills under ``skills`` (as a bundled root, no other scope), build their
    index into ``out``; return ``out``. ``bodies``: with the skills' bodies, as ``skill-router
    index`` builds (the lexical index reads them, the gate and the fusion weight fit to their
    sentences); without, the name and description alone."""
    found = create_source().discover(DiscoveryConfig(bundled_roots=(str(skills),)))
    carried = Carried(bodies=bodies_for(found.skills, {}, None)) if bodies else None
    build_index(found.skills, found.diagnostics, embedder or HashEmbedder(), out,
                carried=carried)
    return out


def open_engine(index: Path, embedder: Embedder | None = None, **settings: Any) -> Engine:
    """An Engine on ``index``; ``settings`` are ``IndexConfig`` fields."""
    return Engine.open(index, Config(index=IndexConfig(**settings)), embedder or HashEmbedder())


def index_argv(skills: Path, out: Path) -> list[str]:
    """``skill-router index`` arguments: ``skills`` as the only root, the hash model."""
    return ["index", "--bundled", str(skills), "--no-project", "--no-home", "--out", str(out),
            "--model", "hash"]


def cli_index(skills: Path, out: Path) -> None:
    """Run ``skill-router index`` in this process; it must succeed."""
    assert main(index_argv(skills, out)) == 0


def index_catalog(base: Path, count: int = len(TOPICS)) -> tuple[Path, Path]:
    """``write_catalog(base / "skills", count)`` indexed into ``base / "index"`` by the CLI;
    return (skills, index)."""
    skills, out = write_catalog(base / "skills", count), base / "index"
    cli_index(skills, out)
    return skills, out
