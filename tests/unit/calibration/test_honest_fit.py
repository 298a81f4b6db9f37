"""The routing settings fit judges only on requests the encoder was not trained on: with a
fine-tuned encoder, never on its training requests; the judging requests (hashed) and the
encoder are recorded in the manifest, and the reason says so in words."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from router.builder.fine_tune import judge
from router.builder.fine_tune.stage import Options, pair_bound
from router.builder.inputs import Stages
from router.builder.version import build_index
from router.calibration.settings import Seen, TunedSettings, request_hash
from router.calibration.settings_fit import MIN_HELD_OUT, ExampleRows, tune
from router.examples.model import query_key
from router.index.lexical import LexicalIndex
from router.index.versions.layout import read_manifest
from tests.support.fine_tune import FakeTrainer, base_embedder, catalog, examples

SKILLS = 40


def _fit_inputs() -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray, list[str]]:
    """Skill vectors, three requests per skill, their skill positions and vectors, documents."""
    skills = np.eye(SKILLS, 48, dtype=np.float32)
    queries = [f"{v} run the zq{i}x job" for i in range(SKILLS)
               for v in ("please", "kindly", "now")]
    skill = np.repeat(np.arange(SKILLS), 3)
    documents = [f"skill {i} handles zq{i}x records" for i in range(SKILLS)]
    return skills, queries, skill, skills[skill], documents


def _lexical(documents: Sequence[str]) -> Callable[[Mapping[int, Sequence[str]]], LexicalIndex]:
    def build(extra: Mapping[int, Sequence[str]]) -> LexicalIndex:
        return LexicalIndex.build([" ".join([d, *extra.get(i, ())])
                                   for i, d in enumerate(documents)])
    return build


def _no_sentences(texts: Sequence[str]) -> np.ndarray:
    return np.zeros((len(texts), 48), dtype=np.float32)


def test_requests_the_encoder_trained_on_never_judge() -> None:
    skills, queries, skill, vectors, documents = _fit_inputs()
    trained = {query_key(q) for q in queries if q.startswith("please")}
    rows = ExampleRows(queries, skill, np.zeros(len(queries), bool), vectors)
    fit = tune(skills, skills.mean(axis=0), rows, _no_sentences, _lexical(documents),
               seen=Seen("base+ft-abc", trained))
    assert fit is not None and fit.settings.judged is not None
    judged = fit.settings.judged
    unseen = {request_hash(query_key(q)) for q in queries if not q.startswith("please")}
    assert set(judged.requests) == unseen and len(judged.requests) == fit.settings.held_out
    assert not set(judged.requests) & {request_hash(k) for k in trained}
    assert judged.left_out == SKILLS and judged.encoder == "base+ft-abc"
    assert len(fit.held_out.best) == len(queries)  # the gate is fitted on every request
    assert f"judged on {len(unseen)} example requests encoder base+ft-abc was not trained " \
           f"on ({SKILLS} it was trained on left out)" in fit.settings.reason
    assert TunedSettings.from_dict(fit.settings.to_dict()) == fit.settings


def test_too_few_unseen_requests_fit_nothing() -> None:
    skills, queries, skill, vectors, documents = _fit_inputs()
    keep = MIN_HELD_OUT - 1
    trained = {query_key(q) for q in queries[keep:]}
    rows = ExampleRows(queries, skill, np.zeros(len(queries), bool), vectors)
    assert tune(skills, skills.mean(axis=0), rows, _no_sentences, _lexical(documents),
                seen=Seen("m", trained)) is None


def _build(root: Path, mode: str) -> dict[str, object]:
    options = Options(mode=mode, device="cpu", min_requests=40, trainer=FakeTrainer("good"))
    info = build_index(catalog(), [], base_embedder(), root, examples=examples(16),
                       stages=Stages(fit_settings=True, fine_tune=options))
    return read_manifest(Path(info.path))


def test_a_build_with_a_tuned_encoder_judges_its_settings_on_the_held_out_fold_only(
        tmp_path: Path) -> None:
    manifest = _build(tmp_path, "auto")
    record, tuning = manifest["fine_tune"], manifest["tuning"]
    assert isinstance(record, dict) and record["adopted"] is True
    assert isinstance(tuning, dict)
    judged = tuning["judged"]
    assert judged["encoder"] == manifest["model"] != "fake-base"
    options = Options(mode="auto", device="cpu")
    train, held = judge.split(judge.training_pairs(catalog(), examples(16)),
                            pair_bound(options, "cpu"))
    trained = {request_hash(query_key(p.query)) for p in train}
    assert len(trained) == record["pairs"] and judged["left_out_trained"] == len(trained)
    assert judged["requests"] and not set(judged["requests"]) & trained
    assert set(judged["requests"]) == {request_hash(query_key(p.query)) for p in held}
    assert "was not trained on" in tuning["reason"]


def test_a_build_with_the_base_encoder_judges_on_every_request(tmp_path: Path) -> None:
    manifest = _build(tmp_path, "off")
    tuning = manifest["tuning"]
    assert isinstance(tuning, dict) and manifest["model"] == "fake-base"
    judged = tuning["judged"]
    assert judged["encoder"] == "fake-base" and judged["left_out_trained"] == 0
    assert len(judged["requests"]) == len(examples(16)) == tuning["held_out"]
    assert "none seen by encoder fake-base" in tuning["reason"]
