"""Hard negatives mined from the catalog for encoder fine-tuning: deterministic, never a right
skill, and the run trained with them is kept only when it wins on the held-out requests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from router.builder.fine_tune import candidates, judge, negatives
from router.builder.fine_tune.stage import Options, options_for
from router.builder.inputs import Stages
from router.builder.pipeline import Served, build, recorded_settings
from router.builder.plan import BuildPlan, EncoderPlan
from router.builder.version import build_index
from router.config import DiscoveryConfig, IndexConfig
from router.encoders.training import Pair, Trained, TrainRun, TrainSettings, batches
from router.errors import InvalidRequest
from router.examples.model import Example, query_key
from router.index.store import load_index
from router.index.vectors import embedding_text
from router.index.versions.encoder import tuned_id
from router.index.versions.layout import read_manifest
from tests.support.fine_tune import FakeModel, base_embedder, catalog, examples
from tests.support.skills import write_catalog


class SideTrainer:
    """A ``kind`` model for the run without mined negatives, ``mined`` for the run with."""

    def __init__(self, plain: str, mined: str) -> None:
        self.kinds = {False: plain, True: mined}
        self.calls: list[list[Pair]] = []

    def __call__(self, base: str, pairs: Sequence[Pair], settings: TrainSettings,
                 how: TrainRun, *, on_step: Callable[[int], None] | None = None) -> Trained:
        self.calls.append(list(pairs))
        with_negatives = all(p.negative for p in pairs)
        return Trained(FakeModel(self.kinds[with_negatives]), 2, 2, len(pairs), 0.01)


def _build(root: Path, trainer: SideTrainer, hard: str = "always",
           **more: object) -> dict[str, object]:
    options = Options(mode="auto", min_requests=40, trainer=trainer, hard_negatives=hard,
                      device="cpu", **more)  # type: ignore[arg-type]
    info = build_index(catalog(), [], base_embedder(), root, examples=examples(),
                       stages=Stages(fine_tune=options))
    return read_manifest(Path(info.path))


def _train_pairs() -> tuple[list[Pair], list[Pair]]:
    given = [*examples(), Example("please restart and refill the tall thing number 3",
                                  ("tool-0", "tool-1"))]
    pairs = judge.training_pairs(catalog(), given)
    train, _ = judge.split(pairs, None)
    return train, pairs


def test_closest_wrong_takes_the_best_wrong_skill_by_each_measure() -> None:
    dense = np.array([0.9, 0.8, 0.8, 0.1])
    assert negatives.closest_wrong(dense, [3, 0, 2], frozenset({0})) == [1, 3]
    assert negatives.closest_wrong(dense, [0, 1], frozenset({0})) == [1]  # the same skill once
    assert negatives.closest_wrong(dense, [], frozenset({0, 1})) == [2]  # ties: lower position
    assert negatives.closest_wrong(dense, [0, 1, 2, 3], frozenset({0, 1, 2, 3})) == []


def test_mining_is_deterministic_and_never_picks_a_right_skill() -> None:
    train, every = _train_pairs()
    first = negatives.mine(catalog(), train, every, base_embedder(), {})
    again = negatives.mine(catalog(), list(reversed(train)), every, base_embedder(), {})
    assert first and sorted(first, key=repr) == sorted(again, key=repr)
    right: dict[str, set[str]] = {}
    for p in every:
        right.setdefault(query_key(p.query), set()).add(p.skill)
    assert any(len(skills) == 2 for skills in right.values())  # a request with two skills
    documents = {s.key: s for s in catalog()}
    for original, mined in zip(train, first, strict=True):
        assert (mined.query, mined.skill, mined.document) == (
            original.query, original.skill, original.document)
        assert mined.negative_skill in documents
        assert mined.negative_skill not in right[query_key(mined.query)]
        assert mined.negative == embedding_text(documents[mined.negative_skill])
    assert len({p.negative_skill for p in first}) > 1


def test_a_batch_never_holds_a_pair_whose_skill_is_another_pairs_negative() -> None:
    train, every = _train_pairs()
    mined = negatives.mine(catalog(), train, every, base_embedder(), {})
    for batch in batches(mined, 8, 1, seed=0):
        skills = [mined[i].skill for i in batch]
        assert not set(skills) & {mined[i].negative_skill for i in batch}
        assert len(set(skills)) == len(skills)
    plain = [Pair(p.query, p.document, p.skill) for p in mined]
    assert batches(plain, 8, 1, seed=0) == batches(train, 8, 1, seed=0)


def test_room_for_a_second_run() -> None:
    assert candidates.room("off", 10, 10, None)[0] is False
    assert candidates.room("always", 5000, 5000, 2000)[0] is True
    assert candidates.room("auto", 1000, 1000, 2000)[0] is True
    assert candidates.room("auto", 1001, 1001, 2000) == (
        False, "no room for it: 1,001 + 1,001 pairs presented over the bound of 2,000")
    assert candidates.room("auto", 10**6, 10**6, None)[0] is True  # a GPU: no bound
    with pytest.raises(InvalidRequest):
        Options(hard_negatives="sometimes")
    with pytest.raises(InvalidRequest):
        IndexConfig(hard_negatives="sometimes")
    assert options_for(IndexConfig(hard_negatives="auto")).hard_negatives == "auto"
    assert IndexConfig().hard_negatives == "off"


def test_the_mined_run_is_kept_only_when_its_held_out_figure_is_higher() -> None:
    low = {"tuned_recall_at_5": 0.5, "tuned_mrr_at_10": 0.4}
    high = {"tuned_recall_at_5": 0.5, "tuned_mrr_at_10": 0.6}
    words = "mined hard negatives"
    assert candidates.prefer(low, high, words)[0] is True
    assert candidates.prefer(high, low, words)[0] is False
    assert candidates.prefer(high, high, words)[0] is False  # a tie keeps the plain run
    assert candidates.prefer(low, high, words)[1].startswith("mined hard negatives won: ")


def test_a_build_keeps_the_mined_run_when_it_wins(tmp_path: Path) -> None:
    trainer = SideTrainer(plain="bad", mined="good")
    manifest = _build(tmp_path, trainer)
    record = manifest["fine_tune"]
    assert isinstance(record, dict) and len(trainer.calls) == 2
    assert [all(p.negative for p in c) for c in trainer.calls] == [False, True]
    hard = record["hard_negatives"]
    assert hard["tried"] is True and hard["won"] is True
    assert hard["mined_held_out"]["tuned_recall_at_5"] > hard["plain_held_out"][
        "tuned_recall_at_5"]
    assert record["adopted"] is True and "mined hard negatives" in record["why"]
    assert record["held_out"] == hard["mined_held_out"]
    assert manifest["model"] == tuned_id("fake-base", record["hash"])


def test_a_build_keeps_the_plain_run_when_the_mined_one_loses(tmp_path: Path) -> None:
    trainer = SideTrainer(plain="good", mined="bad")
    manifest = _build(tmp_path, trainer)
    record = manifest["fine_tune"]
    assert isinstance(record, dict) and len(trainer.calls) == 2
    hard = record["hard_negatives"]
    assert hard["tried"] is True and hard["won"] is False
    assert record["adopted"] is True and record["held_out"] == hard["plain_held_out"]
    assert "mined hard negatives" not in record["why"]


def test_auto_tries_the_mined_run_only_when_the_bound_leaves_room(tmp_path: Path) -> None:
    roomy = SideTrainer(plain="bad", mined="good")
    assert _build(tmp_path / "roomy", roomy, "auto")["fine_tune"]["hard_negatives"]["won"]
    tight = SideTrainer(plain="good", mined="good")
    record = _build(tmp_path / "tight", tight, "auto", cpu_max_pairs=100)["fine_tune"]
    assert isinstance(record, dict) and len(tight.calls) == 1
    assert record["hard_negatives"]["tried"] is False
    assert record["hard_negatives"]["why"].startswith("no room for it")
    off = SideTrainer(plain="good", mined="good")
    record = _build(tmp_path / "off", off, "off")["fine_tune"]
    assert isinstance(record, dict) and "hard_negatives" not in record
    assert "hard_negatives" not in record["settings"]


def test_the_same_inputs_give_the_same_pairs_and_hash(tmp_path: Path) -> None:
    first, second = SideTrainer(plain="bad", mined="good"), SideTrainer(plain="bad", mined="good")
    one = _build(tmp_path / "one", first)
    two = _build(tmp_path / "two", second)
    assert first.calls == second.calls and one["model"] == two["model"]
    assert one["fine_tune"]["hash"] == two["fine_tune"]["hash"]  # type: ignore[index]
    plain = _build(tmp_path / "plain", SideTrainer(plain="good", mined="bad"), "off")
    assert plain["fine_tune"]["hash"] != one["fine_tune"]["hash"]  # type: ignore[index]


def test_turning_the_option_on_rebuilds_an_unchanged_catalog(tmp_path: Path) -> None:
    skills, out = write_catalog(tmp_path / "skills"), tmp_path / "index"
    plan = BuildPlan(DiscoveryConfig(bundled_roots=(str(skills),)), EncoderPlan("hash"))

    def rebuild(hard: str) -> bool:
        stages = Stages(fine_tune=Options(mode="off", hard_negatives=hard))
        served = load_index(out) if (out / "CURRENT").exists() else None
        given = None if served is None else Served(served.info.version, served.skills,
                                                   recorded_settings(served.info.path))
        done = build(replace(plan, stages=stages), out, served=given, embedder=base_embedder())
        return done.info is not None

    assert rebuild("off") and not rebuild("off")
    assert rebuild("auto") and not rebuild("auto")
    assert recorded_settings(load_index(out).info.path)["hard_negatives"] == "auto"
