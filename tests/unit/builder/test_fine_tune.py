"""Encoder fine-tuning per catalog (router.builder.fine_tune.stage), with fake sentence models:
adopted only when it wins on held-out requests, stored and checksummed in the version, reused by
a build with unchanged examples, never run without examples or for the hash embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from router.builder.fine_tune import judge
from router.builder.fine_tune.stage import Options
from router.builder.inputs import Stages
from router.builder.version import build_index
from router.cli import main
from router.config import IndexConfig, load_config
from router.encoders.hashing import HashEmbedder
from router.encoders.sentence import SentenceTransformerEmbedder
from router.encoders.training import Pair, TrainSettings, batches
from router.errors import IndexCorrupt, InvalidRequest
from router.examples.model import Example
from router.index.store import load_index
from router.index.versions.encoder import ENCODER_DIR, base_of, encoder_problem, locate, tuned_id
from router.index.versions.layout import VERSIONS, read_manifest
from tests.support.fine_tune import (
    FakeModel,
    FakeTrainer,
    base_embedder,
    catalog,
    examples,
)
from tests.support.skills import write_catalog


def _build(root: Path, trainer: FakeTrainer, mode: str = "auto", *,
           embedder: SentenceTransformerEmbedder | None = None,
           given: list[Example] | None = None) -> dict[str, object]:
    info = build_index(catalog(), [], embedder or base_embedder(), root,
                       examples=examples() if given is None else given,
                       stages=Stages(fine_tune=Options(mode=mode, min_requests=40,
                                                     trainer=trainer)))
    return read_manifest(Path(info.path))


def test_a_tuned_model_that_wins_is_adopted_and_stored_with_the_version(tmp_path: Path) -> None:
    trainer = FakeTrainer("good")
    manifest = _build(tmp_path, trainer)
    record = manifest["fine_tune"]
    assert isinstance(record, dict) and record["adopted"] is True
    assert manifest["model"] == tuned_id("fake-base", record["hash"])
    assert base_of(str(manifest["model"])) == "fake-base" and len(trainer.calls) == 1
    figures = record["held_out"]
    assert figures["tuned_recall_at_5"] > figures["base_recall_at_5"]
    assert figures["wins"] > figures["losses"]
    files = manifest["files"]
    assert isinstance(files, dict) and f"{ENCODER_DIR}/model.safetensors" in files
    snapshot = load_index(tmp_path)  # every checksum verified, the encoder's too
    # Every vector of the version is the tuned model's: skills and examples alike.
    good = FakeModel("good")
    assert np.allclose(snapshot.vectors[0], good.encode(["tool 0: Operates the zorbex unit."])[0])
    assert not list(tmp_path.glob(".tmp-*"))


def test_a_tuned_model_that_loses_is_not_adopted(tmp_path: Path) -> None:
    manifest = _build(tmp_path, FakeTrainer("bad"))
    record = manifest["fine_tune"]
    assert isinstance(record, dict) and record["adopted"] is False
    assert "no clear gain" in record["why"] and manifest["model"] == "fake-base"
    folder = tmp_path / VERSIONS / str(manifest["version"])
    assert not (folder / ENCODER_DIR).exists() and not list(tmp_path.glob(".tmp-*"))


def test_on_adopts_the_tuned_model_whatever_the_held_out_figures(tmp_path: Path) -> None:
    manifest = _build(tmp_path, FakeTrainer("bad"), mode="on")
    record = manifest["fine_tune"]
    assert isinstance(record, dict) and record["adopted"] is True
    assert record["held_out"]["tuned_recall_at_5"] < record["held_out"]["base_recall_at_5"]
    assert str(manifest["model"]).startswith("fake-base+ft-")


def test_auto_needs_enough_examples_and_off_never_tunes(tmp_path: Path) -> None:
    trainer = FakeTrainer("good")
    few = _build(tmp_path / "few", trainer, given=examples(per_skill=2))
    assert few["model"] == "fake-base" and "auto tunes from 40" in few["fine_tune"]["why"]
    off = build_index(catalog(), [], base_embedder(), tmp_path / "off", examples=examples(),
                      stages=Stages(fine_tune=Options(mode="off", trainer=trainer)))
    assert off.model == "fake-base" and read_manifest(Path(off.path))["fine_tune"] is None
    assert trainer.calls == []


def test_a_build_without_examples_uses_the_base_model(tmp_path: Path) -> None:
    trainer = FakeTrainer("good")
    manifest = _build(tmp_path, trainer, mode="on", given=[])
    assert manifest["model"] == "fake-base" and trainer.calls == []
    assert manifest["fine_tune"] == {"mode": "on", "adopted": False,
                                     "why": "no example requests", "base": "fake-base"}


def test_unchanged_examples_reuse_the_tuned_encoder_without_training(tmp_path: Path) -> None:
    trainer = FakeTrainer("good")
    first = _build(tmp_path, trainer)
    model = str(first["model"])
    serving = SentenceTransformerEmbedder(model, loaded=FakeModel("good"))  # what a server holds
    second = _build(tmp_path, trainer, embedder=serving)
    assert len(trainer.calls) == 1  # not trained again
    assert second["model"] == model and second["fine_tune"]["hash"] == first["fine_tune"]["hash"]
    assert second["fine_tune"]["reused_from"] == first["version"]
    assert load_index(tmp_path).info.model == model
    # New examples: a new tuning (a new hash, so a new model id).
    third = _build(tmp_path, trainer, given=[
        *examples(), Example("please restart the purple thing", ("tool-0",))])
    assert len(trainer.calls) == 2 and third["model"] != model


def test_a_refusal_is_reused_too(tmp_path: Path) -> None:
    trainer = FakeTrainer("bad")
    _build(tmp_path, trainer)
    again = _build(tmp_path, trainer)
    assert len(trainer.calls) == 1 and again["fine_tune"]["adopted"] is False


def test_auto_does_not_reuse_a_loser_that_on_forced(tmp_path: Path) -> None:
    trainer = FakeTrainer("bad")
    forced = _build(tmp_path, trainer, mode="on")
    record = forced["fine_tune"]
    assert record["adopted"] is True and record["held_out"]["won"] is False
    auto = _build(tmp_path, trainer)
    assert len(trainer.calls) == 1 and auto["model"] == "fake-base"
    assert auto["fine_tune"]["adopted"] is False and "no clear gain" in auto["fine_tune"]["why"]


def test_a_corrupt_encoder_file_is_refused_on_load(tmp_path: Path) -> None:
    manifest = _build(tmp_path, FakeTrainer("good"))
    folder = tmp_path / VERSIONS / str(manifest["version"])
    weights = folder / ENCODER_DIR / "model.safetensors"
    weights.write_bytes(b"x" + weights.read_bytes()[1:])
    with pytest.raises(IndexCorrupt, match=r"encoder/model\.safetensors"):
        load_index(tmp_path)
    assert encoder_problem(folder) is not None
    with pytest.raises(IndexCorrupt, match="no intact fine-tuned encoder"):
        locate(tmp_path, str(manifest["model"]))


def test_the_hash_embedder_is_never_tuned(tmp_path: Path) -> None:
    info = build_index(catalog(), [], HashEmbedder(), tmp_path, examples=examples(),
                       stages=Stages(fine_tune=Options(mode="on", trainer=FakeTrainer("good"))))
    record = read_manifest(Path(info.path))["fine_tune"]
    assert info.model == "hash-256" and record["adopted"] is False
    assert "cannot be fine-tuned" in record["why"]


def test_batches_hold_one_pair_per_skill_and_are_seeded() -> None:
    pairs = [Pair(f"q{i}", f"d{i % 5}", f"s{i % 5}") for i in range(40)]
    plan = batches(pairs, 4, epochs=2, seed=0)
    assert plan == batches(pairs, 4, epochs=2, seed=0) != batches(pairs, 4, epochs=2, seed=1)
    for batch in plan:
        assert len({pairs[i].skill for i in batch}) == len(batch) <= 4
    used = [i for b in plan for i in b]
    assert max(used.count(i) for i in range(40)) <= 2 and len(used) >= 70
    # A pair is only left out when nothing but its own skill's pairs remain to batch it with.
    many = [Pair(f"q{i}", f"d{i % 20}", f"s{i % 20}") for i in range(40)]
    assert sorted(i for b in batches(many, 8, 2, 0) for i in b) == sorted(list(range(40)) * 2)


def test_the_held_out_fold_and_the_fine_tune_hash_are_deterministic() -> None:
    pairs = [Pair(f"request {i}", "doc", f"s{i % 7}") for i in range(200)]
    train, held = judge.split(pairs, max_pairs=100)
    assert len(train) == 100 and held and not {p.query for p in held} & {p.query for p in train}
    assert judge.fold_of("Request  1") == judge.fold_of("request 1")  # repeats share a fold
    digest = judge.fine_tune_hash("m", train, held, {"lr": 1})
    assert digest == judge.fine_tune_hash("m", list(reversed(train)), held, {"lr": 1})
    assert digest != judge.fine_tune_hash("m", train, held, {"lr": 2})
    assert digest != judge.fine_tune_hash("other", train, held, {"lr": 1})


def test_the_adoption_rule_is_a_sign_test() -> None:
    ones, zeros = np.ones(20), np.zeros(20)
    assert judge.judge((zeros, zeros), (ones, ones)).adopt
    assert not judge.judge((ones, ones), (zeros, zeros)).adopt
    assert not judge.judge((zeros, zeros), (zeros, zeros)).adopt  # a tie keeps the base
    mixed = np.array([1.0] * 11 + [0.0] * 9)
    assert not judge.judge((1 - mixed, 1 - mixed), (mixed, mixed)).adopt  # 11 vs 9: not clear
    recall, rr = judge.scores(np.eye(3, dtype=np.float32), np.eye(3, dtype=np.float32)[[2, 0]],
                            [frozenset({2}), frozenset({1})])
    assert recall.tolist() == [1.0, 1.0] and rr.tolist() == [1.0, 0.5]


def test_negative_and_off_topic_requests_make_no_pair() -> None:
    given = [Example("please restart it", ("tool-0",)), Example("not this", (), ("tool-1",)),
             Example("what is the weather", ())]
    pairs = judge.training_pairs(catalog(), given)
    assert [(p.query, p.skill) for p in pairs] == [("please restart it", "tool-0")]
    assert pairs[0].document == "tool 0: Operates the zorbex unit."


def test_a_bad_mode_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidRequest, match=r"fine_tune_encoder.*auto, on, off"):
        IndexConfig(fine_tune_encoder="sometimes")
    with pytest.raises(InvalidRequest, match="fine_tune_encoder"):
        load_config(env={"SKILL_ROUTER_INDEX_FINE_TUNE_ENCODER": "yes"})
    path = tmp_path / "config.yaml"
    path.write_text("index:\n  fine_tune_encoder: maybe\n")
    with pytest.raises(InvalidRequest, match="'maybe'"):
        load_config(path, env={})
    assert load_config(env={"SKILL_ROUTER_INDEX_FINE_TUNE_ENCODER": "off"}).index \
        .fine_tune_encoder == "off"
    assert IndexConfig().fine_tune_encoder == "auto"
    with pytest.raises(InvalidRequest, match="fine_tune_encoder"):
        Options(mode="always")
    skills = write_catalog(tmp_path / "skills")
    with pytest.raises(SystemExit) as exited:
        main(["index", "--bundled", str(skills), "--no-project", "--no-home", "--out",
              str(tmp_path / "index"), "--model", "hash", "--fine-tune-encoder", "always"])
    assert exited.value.code == 2
    assert "--fine-tune-encoder: invalid choice: 'always'" in capsys.readouterr().err


def test_the_cli_flag_reaches_the_build(tmp_path: Path) -> None:
    skills, out = write_catalog(tmp_path / "skills"), tmp_path / "index"
    assert main(["index", "--bundled", str(skills), "--no-project", "--no-home", "--out",
                 str(out), "--model", "hash", "--fine-tune-encoder", "on"]) == 0
    manifest = read_manifest(out / VERSIONS / (out / "CURRENT").read_text().strip())
    assert manifest["model"] == "hash-256" and manifest["fine_tune"]["mode"] == "on"
    assert json.dumps(manifest["fine_tune"])  # JSON all through


@pytest.mark.parametrize(("device", "epochs", "total", "trained"),
                         [("cpu", 1, 40, 40), ("cpu", 2, 40, 20), ("cuda", 1, 40, 96)])
def test_training_is_bounded_by_pairs_on_a_cpu_and_not_on_a_gpu(
        tmp_path: Path, device: str, epochs: int, total: int, trained: int) -> None:
    trainer = FakeTrainer("good")
    settings = TrainSettings(epochs=epochs)
    options = Options(mode="on", device=device, trainer=trainer, settings=settings,
                      cpu_max_pairs=total)
    build_index(catalog(), [], base_embedder(), tmp_path, examples=examples(),
                stages=Stages(fine_tune=options))
    pairs = judge.training_pairs(catalog(), examples())
    assert len(judge.split(pairs, None)[0]) == 96  # all the training fold: the GPU's share
    assert trainer.calls == [trained]
    record = read_manifest(Path(load_index(tmp_path).info.path))["fine_tune"]
    assert record["pairs"] == trained and record["stopped_early"] is False
    assert record["epochs"] == epochs and record["device"] == device


def test_the_sample_past_the_bound_is_fixed() -> None:
    pairs = judge.training_pairs(catalog(), examples())
    first = judge.sample(pairs, 30)
    assert len(first) == 30 and first == judge.sample(list(reversed(pairs)), 30)
    assert judge.sample(pairs, None) == pairs
