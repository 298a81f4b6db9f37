"""The gate of a view of some catalogs is calibrated on those catalogs alone: a skill added to
one catalog never moves another's gate, and a view of every catalog has the whole index's."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest

from router.access.model import ROUTE, Principal
from router.builder.version import build_index
from router.calibration import catalog_gate, gate
from router.calibration.gate import bundled_requests
from router.encoders.base import normalise
from router.encoders.hashing import HashEmbedder
from router.examples.scoring import (
    BOTH,
    CLOSEST,
    VIEW,
    best_cosines,
    closest_positive,
    example_index,
)
from router.index.gate_store import GATE_CATALOGS_NPY
from router.index.store import IndexSnapshot, load_index
from router.index.versions.layout import VERSIONS, current_version
from router.routing.calibrated import gate_of
from router.routing.fusion import FusionConfig
from router.routing.model import RouteQuery
from router.routing.visible import ViewCache, Visible
from router.skills.model import Skill
from tests.support.indexes import open_engine
from tests.support.skills import skill_record

OF_A = Principal("alice", frozenset({ROUTE}), ("a",))
OF_B = Principal("bob", frozenset({ROUTE}), ("b",))
OF_BOTH = Principal("carol", frozenset({ROUTE}), ("b", "a"))


def _unit(rng: np.random.Generator, rows: int, width: int = 16) -> np.ndarray:
    return normalise(rng.normal(size=(rows, width)).astype(np.float32))


@pytest.mark.parametrize("mode", [VIEW, CLOSEST, BOTH])
def test_the_best_over_every_catalog_is_the_whole_indexs_evidence(mode: str) -> None:
    rng = np.random.default_rng(7)
    queries, skills = _unit(rng, 40), _unit(rng, 30)
    catalog_of = np.array([i % 3 for i in range(30)], dtype=np.int64)
    examples = example_index([f"q{i}" for i in range(12)], np.arange(12, dtype=np.int64) * 2,
                             np.array([i % 4 == 3 for i in range(12)]), _unit(rng, 12), skills)
    found = catalog_gate.evidence(queries, skills, catalog_of, ("x", "y", "z"), examples, mode,
                                  None)
    assert found.best.shape == (40, 3) and found.lexical is None
    np.testing.assert_allclose(found.best.max(axis=1),
                               best_cosines(queries, skills, examples, mode), rtol=1e-6)
    np.testing.assert_allclose(found.plain.max(axis=1), best_cosines(queries, skills, None),
                               rtol=1e-6)
    np.testing.assert_allclose(found.reach.max(axis=1), closest_positive(queries, examples),
                               rtol=1e-6)
    # each column is the best over that catalog's skills alone
    sims = queries @ skills.T
    np.testing.assert_allclose(found.plain[:, 1], sims[:, catalog_of == 1].max(axis=1),
                               rtol=1e-6)


def test_a_views_gate_takes_its_quantiles_on_its_catalogs_and_keeps_what_was_fitted() -> None:
    rng = np.random.default_rng(3)
    null, skills = _unit(rng, 50), _unit(rng, 20)
    catalog_of = np.array([0] * 10 + [1] * 10, dtype=np.int64)
    found = catalog_gate.evidence(null, skills, catalog_of, ("a", "b"), None, VIEW, None)
    fitted = gate.calibrate(found.best.max(axis=1))
    assert fitted is not None
    fitted = gate.Calibration(fitted.min_dense, fitted.quantile, 50, 0, 0.1, 0.0, margin=0.2,
                              dense_quantile=0.8, floor_scale=0.9)
    whole = catalog_gate.ViewGate(fitted, null, None)
    only_a = catalog_gate.view_gate(whole, null, found, [0])
    assert only_a.calibration is not None
    best_a = (null @ skills[:10].T).max(axis=1)
    assert only_a.calibration.min_dense == pytest.approx(np.quantile(best_a, gate.QUANTILE),
                                                         abs=1e-6)
    assert only_a.calibration.dense_low == pytest.approx(np.quantile(best_a, 0.8), abs=1e-6)
    assert (only_a.calibration.margin, only_a.calibration.floor_scale) == (0.2, 0.9)
    assert only_a.off_topic is not None
    assert len(only_a.off_topic) == int(np.sum(best_a < only_a.calibration.min_dense))
    gates = catalog_gate.CatalogGates(whole, null, found)
    assert gates.of(["a", "b"]) is whole and gates.of(["b", "a", "elsewhere"]) is whole
    assert gates.of(["a"]) is gates.of(["a"])  # made once
    assert gates.of(["a"]).calibration == only_a.calibration


def _skills(catalog: str, texts: list[str], prefix: str) -> list[Skill]:
    return [skill_record(f"{prefix}-{i}", text, catalog=catalog, root=f"/{catalog}",
                         content_hash=f"{catalog}{i}{text}") for i, text in enumerate(texts)]


A = ["Extracts tables from PDF files.", "Writes git commit messages.",
     "Builds Docker images and deploys containers.", "Analyses CSV spreadsheets."]
B = ["Refunds a card payment to a customer.", "Reconciles the monthly ledger."]


def _snapshot(root: Path, skills: list[Skill]) -> IndexSnapshot:
    build_index(skills, [], HashEmbedder(), root)
    return load_index(root)


def _gate(snap: IndexSnapshot, principal: Principal) -> catalog_gate.ViewGate:
    return gate_of(snap, ViewCache().view(snap, principal))


def test_skills_added_to_one_catalog_leave_anothers_gate_where_it_was(tmp_path: Path) -> None:
    before = _snapshot(tmp_path / "before", _skills("a", A, "a") + _skills("b", B, "b"))
    # catalog b gains skills that read like everyday requests: its gate (and the whole
    # index's) must rise; catalog a's must not move
    everyday = bundled_requests()[:60]
    after = _snapshot(tmp_path / "after",
                      _skills("a", A, "a") + _skills("b", B + everyday, "b"))
    a_before, a_after = _gate(before, OF_A), _gate(after, OF_A)
    assert a_before.calibration is not None and a_after.calibration is not None
    assert a_after.calibration.min_dense == a_before.calibration.min_dense
    assert a_after.calibration.dense_low == a_before.calibration.dense_low
    assert a_before.off_topic is not None and a_after.off_topic is not None
    np.testing.assert_array_equal(a_after.off_topic, a_before.off_topic)
    whole_before, whole_after = before.calibration, after.calibration
    assert whole_before is not None and whole_after is not None
    assert whole_after.min_dense > whole_before.min_dense  # what moved every catalog before
    b_after = _gate(after, OF_B).calibration
    assert b_after is not None and b_after.min_dense > a_after.calibration.min_dense
    # the BM25 threshold is a's too: everyday words in b's skills do not raise it
    assert a_after.calibration.lexical < whole_after.lexical
    # a view of both catalogs is the whole index's; the unrestricted one too
    assert _gate(after, OF_BOTH).calibration == whole_after
    assert gate_of(after, after.everything).calibration == whole_after
    # GetIndexInfo reports the caller's gate
    info = Visible(after, ViewCache().view(after, OF_A)).info()
    assert info.calibrated_gate == a_after.calibration.min_dense
    assert after.info.calibrated_gate == whole_after.min_dense
    folder = tmp_path / "after" / VERSIONS / current_version(tmp_path / "after")
    assert stat.S_IMODE((folder / GATE_CATALOGS_NPY).stat().st_mode) == 0o600


def test_an_index_of_one_catalog_or_from_before_has_the_whole_indexs_gate(
        tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "one", _skills("a", A, "a"))
    folder = tmp_path / "one" / VERSIONS / current_version(tmp_path / "one")
    assert snap.gates is None and not (folder / GATE_CATALOGS_NPY).exists()
    assert _gate(snap, OF_A).calibration == snap.calibration
    assert _gate(snap, OF_B).calibration == snap.calibration


def test_a_turn_is_judged_by_its_callers_gate(tmp_path: Path) -> None:
    root = tmp_path / "index"
    build_index(_skills("a", A, "a") + _skills("b", B + bundled_requests()[:60], "b"), [],
                HashEmbedder(), root)
    engine = open_engine(root)
    message = "extract the tables from PDF files"
    as_a = engine.explain(RouteQuery(message=message, caller=OF_A))
    whole = engine.explain(RouteQuery(message=message))
    a_gate = _gate(engine.snapshot, OF_A).calibration
    assert a_gate is not None and whole.gate > as_a.gate
    assert as_a.gate == pytest.approx(max(a_gate.min_dense, FusionConfig().min_dense))
