"""Routing settings fitted to a catalog from its examples (router.calibration.settings_fit), and
how a build stores them and the router applies them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from router.builder.inputs import Stages
from router.builder.version import build_index
from router.calibration.settings import FittedSettings
from router.calibration.settings_choice import PRIOR, choose
from router.calibration.settings_fit import (
    FOLDS,
    MIN_HELD_OUT,
    WEIGHTS,
    ExampleRows,
    fit_to_examples,
    fuse_all,
)
from router.config import Config
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.examples.model import Example, ExampleSource
from router.index.example_store import LEXICAL_EXAMPLES
from router.index.lexical import LexicalIndex
from router.index.store import load_index
from router.routing.fusion import FusionConfig, Hits, fuse_views
from router.routing.model import RouteQuery
from router.skills.model import Skill

SKILLS = 40
FIT = Stages(fit_settings=True)  # a version build that fits its settings


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _lexical(documents: Sequence[str]):  # type: ignore[no-untyped-def]
    def build(extra: Mapping[int, Sequence[str]]) -> LexicalIndex:
        return LexicalIndex.build([" ".join([d, *extra.get(i, ())])
                                   for i, d in enumerate(documents)])
    return build


def _no_sentences(texts: Sequence[str]) -> np.ndarray:
    raise AssertionError(f"one-sentence requests need no sentence vectors: {texts}")


def test_fusing_every_weight_at_once_ranks_as_fuse_views_does() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        dense, lexical = [], []
        for _ in range(int(rng.integers(0, 3))):
            k = int(rng.integers(1, 12))
            dense.append(Hits(rng.choice(30, k, replace=False), np.sort(rng.random(k))[::-1]))
        for _ in range(int(rng.integers(0, 3))):
            k = int(rng.integers(1, 12))
            lexical.append(Hits(rng.choice(30, k, replace=False),
                                np.sort(rng.random(k) * 6)[::-1], float(rng.choice([1, 0.4]))))
        baseline = float(rng.random() * 0.3)
        ids, top = fuse_all(dense, lexical, baseline, np.asarray(WEIGHTS))
        for j, w in enumerate(WEIGHTS):
            expected = fuse_views(dense, lexical, FusionConfig(dense_weight=w),
                                  dense_baseline=baseline)[:10]
            assert ids[top[j]].tolist() == [f.index for f in expected]


def _catalog(code_words_in_descriptions: bool) -> tuple[list[str], list[str], np.ndarray]:
    """Skill documents, three example requests per skill (each naming the skill's code word)
    and their skill positions."""
    documents, queries, skill = [], [], []
    for i in range(SKILLS):
        code = f"zq{i}x"
        documents.append(f"skill {i} handles topic{i} records"
                         + (f" {code}" if code_words_in_descriptions else ""))
        for variant in ("please", "kindly", "now"):
            queries.append(f"{variant} run the {code} job")
            skill.append(i)
    return documents, queries, np.array(skill, dtype=np.int64)


def test_expanding_bm25_with_examples_is_chosen_where_only_the_examples_know_the_words(
) -> None:
    # Vectors carry no signal and no description holds the words users type: only a BM25
    # document expanded with the other folds' examples finds a held-out request's skill.
    documents, queries, skill = _catalog(code_words_in_descriptions=False)
    rng = np.random.default_rng(3)
    skills = _unit(rng.normal(size=(SKILLS, 32)))
    vectors = _unit(rng.normal(size=(len(queries), 32)))
    rows = ExampleRows(queries, skill, np.zeros(len(queries), bool), vectors)
    fit = fit_to_examples(skills, skills.mean(axis=0), rows, _no_sentences, _lexical(documents))
    assert fit is not None
    got = fit.settings
    assert got.expand_lexical
    assert got.held_out == len(queries)
    # Each held-out request's evidence under the chosen settings, for the gate: BM25 now finds
    # its words (expanded documents); the vectors are the requests' own.
    assert len(fit.held_out.best) == len(fit.held_out.lexical) == len(queries)
    assert np.all(fit.held_out.lexical > 0)
    # Without examples, as a request for an untaught skill: no word found, no lift.
    assert np.all(fit.held_out.untaught_lexical == 0)
    assert np.all(fit.held_out.untaught_best <= fit.held_out.best + 1e-6)
    assert {tuple(np.round(v, 5)) for v in fit.held_out.vectors} \
        == {tuple(np.round(v, 5)) for v in vectors}
    assert got.recall > 0.9 and got.default_recall < 0.3
    assert got.dense_weight < 0.5  # the dense side is noise here


def test_full_use_of_the_examples_stays_when_nothing_beats_it() -> None:
    # Every combination finds every skill first: the prior (all the evidence) is kept.
    documents, queries, skill = _catalog(code_words_in_descriptions=True)
    skills = np.eye(SKILLS, 48, dtype=np.float32)
    vectors = skills[skill]
    rows = ExampleRows(queries, skill, np.zeros(len(queries), bool), vectors)
    fit = fit_to_examples(skills, skills.mean(axis=0), rows, _no_sentences, _lexical(documents))
    assert fit is not None
    got = fit.settings
    assert (got.dense_weight, got.example_mode, got.expand_lexical) == PRIOR
    assert got.recall == got.default_recall == got.prior_recall == 1.0
    assert got.reason.startswith("full use of the examples (dense 0.7, both, expanded BM25)")


def _choose_between(recall: np.ndarray, rr: np.ndarray) -> FittedSettings:
    """``choose`` over three combinations: the prior, the defaults and another."""
    combos = [PRIOR, (0.5, "view", False), (0.3, "closest", False)]
    return choose(combos, recall, rr, (0.5, "view", False), FOLDS)


def test_ranks_separate_combinations_that_find_every_request() -> None:
    # Learned traffic: every combination finds every held-out request in its top 5 (recall
    # 1.0 everywhere), so only ranks can tell them apart.
    n = 60
    recall = np.ones((n, 3))
    rr = np.tile([0.5, 1.0, 1.0], (n, 1))  # the prior ranks every skill second
    got = _choose_between(recall, rr)
    assert (got.dense_weight, got.example_mode, got.expand_lexical) == (0.5, "view", False)
    assert "did worse than" in got.reason and "the defaults are the best" in got.reason
    assert got.prior_mrr == 0.5 and got.mrr == 1.0
    # Ranks a little better on a few requests only: not clearly better; the prior stays.
    rr = np.ones((n, 3))
    rr[:3, 1:] = 2.0
    got = _choose_between(recall, rr)
    assert (got.dense_weight, got.example_mode, got.expand_lexical) == PRIOR
    assert "better on 3 held-out requests and worse on 0, not clearly more" in got.reason


def test_after_harm_the_defaults_stay_unless_the_best_beats_them_too() -> None:
    n = 100
    recall = np.ones((n, 3))
    rr = np.ones((n, 3))
    recall[:30, 0] = 0.0  # the prior loses 30 requests
    recall[:2, 1] = 0.0  # the defaults lose 2, the third combination none: not clearly better
    got = _choose_between(recall, rr)
    assert (got.dense_weight, got.example_mode) == (0.5, "view")
    assert "the defaults kept: it did not beat them (2 better, 0 worse)" in got.reason
    recall[:20, 1] = 0.0  # now the defaults lose 20: the third combination is served
    got = _choose_between(recall, rr)
    assert (got.dense_weight, got.example_mode) == (0.3, "closest")
    assert "that beat the defaults too (20 better, 0 worse)" in got.reason
    assert got.default_recall == 0.8 and got.prior_recall == 0.7 and got.recall == 1.0


def test_too_few_examples_fit_nothing() -> None:
    documents, queries, skill = _catalog(code_words_in_descriptions=False)
    few = MIN_HELD_OUT - 1
    skills = np.eye(SKILLS, 48, dtype=np.float32)
    rows = ExampleRows(queries[:few], skill[:few], np.zeros(few, bool), skills[skill[:few]])
    assert fit_to_examples(skills, skills.mean(axis=0), rows, _no_sentences,
                           _lexical(documents)) is None


def test_settings_round_trip_and_refuse_malformed_records() -> None:
    settings = FittedSettings(0.3, "closest", True, 120, 0.91, 0.8, 0.5, 0.4, 0.6, 0.5,
                             "why, in words")
    assert FittedSettings.from_dict(settings.to_dict()) == settings
    assert FittedSettings.from_dict(None) is None
    with pytest.raises(ValueError):
        FittedSettings.from_dict({"dense_weight": 0.3, "example_mode": "nearest"})
    with pytest.raises(ValueError):
        FittedSettings.from_dict({**settings.to_dict(), "dense_weight": 1.5})


def _skills() -> list[Skill]:
    documents, _, _ = _catalog(code_words_in_descriptions=False)
    return [Skill(name=f"skill-{i}", description=documents[i], location=f"/s/{i}/SKILL.md",
                  base_dir=f"/s/{i}", content_hash=str(i)) for i in range(SKILLS)]


def _examples() -> list[Example]:
    _, queries, skill = _catalog(code_words_in_descriptions=False)
    return [Example(q, (f"skill-{s}",), (), ExampleSource.FILE, "test")
            for q, s in zip(queries, skill.tolist(), strict=True)]


def test_a_build_stores_the_fitted_settings_and_routing_applies_them(tmp_path: Path) -> None:
    info = build_index(_skills(), [], HashEmbedder(), tmp_path, examples=_examples(),
                       stages=FIT)
    manifest = json.loads((Path(info.path) / "manifest.json").read_text(encoding="utf-8"))
    fitted = FittedSettings.from_dict(manifest["tuning"])
    assert fitted is not None and fitted.held_out == SKILLS * 3
    snap = load_index(tmp_path)  # checksums include the expanded BM25 index, if any
    assert snap.tuning == fitted
    assert (snap.lexical_examples is not None) == fitted.expand_lexical
    assert (Path(info.path) / LEXICAL_EXAMPLES).is_dir() == fitted.expand_lexical
    assert FittedSettings.from_dict(json.loads(snap.info.tuning_json)) == fitted
    engine = Engine(snap, Config(), HashEmbedder(), FusionConfig())
    turn = engine.explain(RouteQuery(message="kindly run the zq7x job"))
    assert turn.dense_weight == fitted.dense_weight
    assert turn.example_mode == fitted.example_mode
    assert turn.lexical_with_examples == fitted.expand_lexical
    assert turn.settings_reason == fitted.reason != ""
    assert turn.skills[0].name == "skill-7"
    # A turn naming a skill explicitly is ranked without any example evidence.
    explicit = engine.explain(RouteQuery(message="/skill-3 kindly run the zq7x job"))
    assert explicit.example_mode == "" and not explicit.lexical_with_examples
    assert explicit.settings_reason == ""


def test_a_build_without_the_fit_or_examples_serves_the_defaults(tmp_path: Path) -> None:
    build_index(_skills(), [], HashEmbedder(), tmp_path / "untuned", examples=_examples())
    build_index(_skills(), [], HashEmbedder(), tmp_path / "bare", stages=FIT)
    for name in ("untuned", "bare"):
        snap = load_index(tmp_path / name)
        assert snap.tuning is None and snap.lexical_examples is None
        assert snap.info.tuning_json == ""
        turn = Engine(snap, Config(), HashEmbedder()).explain(RouteQuery(message="run zq1x"))
        assert turn.dense_weight == FusionConfig().dense_weight


def test_explain_and_info_on_the_command_line_show_the_fitted_settings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from router.cli import main

    build_index(_skills(), [], HashEmbedder(), tmp_path, examples=_examples(), stages=FIT)
    fitted = load_index(tmp_path).tuning
    assert fitted is not None
    assert main(["explain", "--index", str(tmp_path), "--format", "json",
                 "kindly run the zq7x job"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["dense_weight"] == fitted.dense_weight
    assert shown["example_mode"] == fitted.example_mode
    assert shown["lexical_with_examples"] == fitted.expand_lexical
    assert shown["settings_reason"] == fitted.reason
    assert main(["explain", "--index", str(tmp_path), "kindly run the zq7x job"]) == 0
    printed = capsys.readouterr().out
    assert f"dense weight {fitted.dense_weight:.1f}; examples: {fitted.example_mode}" in printed
    assert f"settings: {fitted.reason}" in printed and "refused:" not in printed
    assert main(["explain", "--index", str(tmp_path), "good morning! how are you today?"]) == 0
    assert "\nrefused: " in capsys.readouterr().out  # the gate says why it gave nothing
    assert main(["info", "--index", str(tmp_path)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert FittedSettings.from_dict(json.loads(info["tuning_json"])) == fitted


@pytest.mark.parametrize("fit", ["true", "false"])
def test_index_fits_settings_unless_switched_off(tmp_path: Path, fit: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from router.builder.plan import BuildPlan
    from router.cli import main
    from router.config import load_config
    from tests.support.indexes import index_argv
    from tests.support.skills import write_catalog

    skills, out, examples = write_catalog(tmp_path / "skills", 20), tmp_path / "index", \
        tmp_path / "examples.jsonl"
    examples.write_text("".join(json.dumps({"query": f"{v} run the zq{i}x job",
                                            "skills": [f"skill-{i}"]}) + "\n"
                                for i in range(20) for v in ("please", "kindly", "now")))
    monkeypatch.setenv("SKILL_ROUTER_INDEX_FIT_SETTINGS", fit)
    config = load_config(None)
    assert BuildPlan.from_config(config, config.discovery).stages.fit_settings == (fit == "true")
    assert main([*index_argv(skills, out), "--examples", str(examples)]) == 0
    assert (load_index(out).tuning is not None) == (fit == "true")


def test_the_example_mode_is_read_into_its_enum_and_recorded_as_its_word() -> None:
    import json

    from router.examples.scoring import ExampleMode

    fitted = FittedSettings.from_dict({"dense_weight": 0.5, "example_mode": "closest",
                                       "expand_lexical": False})
    assert fitted is not None and fitted.example_mode is ExampleMode.CLOSEST
    assert json.loads(json.dumps(fitted.to_dict()))["example_mode"] == "closest"
