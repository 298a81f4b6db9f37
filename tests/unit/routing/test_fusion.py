"""Hybrid fusion, the relevance gate, query views and history helpers."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from router.calibration.fusion_terms import MAX_VIEWS, DenseScale, lexical_scale
from router.index.vectors import catalog_centroid
from router.routing import fusion
from router.routing.fusion import Fused, FusionConfig, Hits, fuse, fuse_views, gate, query_views
from router.routing.model import DropReason

CFG = FusionConfig()
CUT = FusionConfig(tail_ratio=0.45)  # the score-gap cut the defaults had


def hits(pairs: dict[int, float], weight: float = 1.0) -> Hits:
    ordered = sorted(pairs.items(), key=lambda p: -p[1])
    ids = np.array([i for i, _ in ordered], dtype=np.int64)
    scores = np.array([s for _, s in ordered], dtype=np.float32)
    return Hits(ids, scores, weight)


def by_index(fused: list[Fused]) -> dict[int, Fused]:
    return {f.index: f for f in fused}


def test_defaults_match_the_documented_measurements() -> None:
    assert CFG.dense_weight == 0.5
    assert CFG.depth == 50
    assert CFG.max_segments == 6
    assert CFG.min_dense == 0.18
    assert CFG.tail_ratio == 0.0  # no cut by default: the gate alone refuses a turn
    assert CFG.history_weight == 0.4
    assert CFG.history_turns == 2
    doc = fusion.__doc__ or ""
    for text in ("``dense_weight`` 0.5", "0.18 is the highest threshold", "``tail_ratio`` 0"):
        assert text in doc
    # a tail cut must never remove a retriever's own best hit
    assert CUT.tail_ratio < min(CUT.dense_weight, 1 - CUT.dense_weight)


@pytest.mark.parametrize(
    "changes",
    [{"dense_weight": 1.5}, {"tail_ratio": -0.1}, {"history_weight": 2.0}, {"depth": 0}],
)
def test_config_rejects_out_of_range_values(changes: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        dataclasses.replace(CFG, **changes)


def test_a_skill_only_the_lexical_side_finds_survives_fusion() -> None:
    dense = [hits({0: 0.62, 1: 0.55, 2: 0.50, 3: 0.20})]
    lexical = [hits({7: 12.0, 0: 8.0})]
    fused = fuse_views(dense, lexical, CFG, dense_baseline=0.05)
    ranked = [f.index for f in fused]
    assert set(ranked) == {0, 1, 2, 3, 7}
    assert ranked[0] == 0  # first on both sides
    assert ranked[1] == 7  # lexical-only but the best keyword match beats dense-only runners-up
    only_lex = by_index(fused)[7]
    assert only_lex.lexical == 12.0
    assert only_lex.dense == pytest.approx(0.20)  # upper bound: the lowest returned cosine
    assert {f.index for f in gate(fused, CFG).kept} >= {0, 7}


def test_raw_scores_are_kept_for_explain_and_fused_is_bounded() -> None:
    fused = fuse_views([hits({3: 0.7, 4: 0.4})], [hits({4: 5.0, 9: 2.5})], CFG, dense_baseline=0.1)
    got = by_index(fused)
    assert got[3].dense == pytest.approx(0.7) and got[3].lexical == 0.0
    assert got[4].lexical == pytest.approx(5.0)
    assert all(0.0 <= f.fused <= 1.0 for f in fused)
    assert got[3].fused == pytest.approx(0.5)  # dense 1.0, lexical 0
    assert got[4].fused == pytest.approx(0.5 * (0.4 - 0.1) / (0.7 - 0.1) + 0.5)


def test_ties_break_on_lower_index_and_order_is_best_first() -> None:
    fused = fuse_views([], [hits({5: 2.0, 2: 2.0, 8: 1.0})], CFG)
    assert [f.index for f in fused] == [2, 5, 8]


def test_dense_normalisation_ignores_a_models_cosine_offset_and_scale() -> None:
    cos = {0: 0.61, 1: 0.42, 2: 0.33, 3: 0.20}
    lexical = [hits({2: 9.0, 3: 4.0})]
    plain = fuse_views([hits(cos)], lexical, CFG, dense_baseline=0.08)
    shifted = {i: 0.7 + 0.3 * c for i, c in cos.items()}
    squeezed = fuse_views([hits(shifted)], lexical, CFG, dense_baseline=0.7 + 0.3 * 0.08)
    assert [f.index for f in plain] == [f.index for f in squeezed]
    np.testing.assert_allclose([f.fused for f in plain], [f.fused for f in squeezed], atol=1e-6)


def test_a_skill_matching_one_sentence_well_ranks_high() -> None:
    whole = hits({0: 0.45, 1: 0.44, 2: 0.30})
    second_sentence = hits({9: 0.60, 0: 0.20})
    fused = fuse_views([whole, second_sentence], [hits({0: 4.0}), hits({}), hits({9: 6.0})], CFG)
    assert fused[0].index == 9
    assert by_index(fused)[9].dense == pytest.approx(0.60)


def test_a_history_view_counts_less_than_the_message() -> None:
    message = hits({1: 3.0})
    history = hits({2: 3.0}, weight=CFG.history_weight)
    fused = by_index(fuse_views([], [message, history], CFG))
    assert fused[1].fused == pytest.approx(0.5)
    assert fused[2].fused == pytest.approx(0.5 * CFG.history_weight)


def test_gate_drops_everything_when_every_cosine_is_low() -> None:
    fused = fuse_views([hits({0: 0.17, 1: 0.12})], [hits({0: 1.0, 5: 0.9})], CFG)
    result = gate(fused, CFG)
    assert result.kept == ()
    assert len(result.dropped) == len(fused)
    assert {reason for _, reason in result.dropped} == {DropReason.BELOW_THRESHOLD}


def test_gate_keeps_a_turn_when_the_dense_side_was_not_searched() -> None:
    fused = fuse_views([], [hits({0: 3.0, 1: 2.5})], CFG)
    assert [f.index for f in gate(fused, CFG, dense_used=False).kept] == [0, 1]
    assert gate(fused, CFG).kept == ()


def test_tail_ratio_drops_far_weaker_candidates_with_a_score_gap_reason() -> None:
    dense = [hits({0: 0.80, 1: 0.78, 2: 0.40})]
    fused = fuse_views(dense, [hits({0: 10.0})], CFG, dense_baseline=0.1)
    result = gate(fused, CUT)
    assert [f.index for f in result.kept] == [0, 1]
    assert [(f.index, r) for f, r in result.dropped] == [(2, DropReason.SCORE_GAP)]
    assert len(gate(fused, dataclasses.replace(CFG, tail_ratio=0.0)).kept) == 3


def test_min_fused_drops_weak_candidates() -> None:
    fused = fuse_views([hits({0: 0.8, 1: 0.5})], [], CFG, dense_baseline=0.2)
    result = gate(fused, dataclasses.replace(CFG, min_fused=0.3, tail_ratio=0.0))
    assert [f.index for f in result.kept] == [0]
    assert result.dropped[0][1] == DropReason.BELOW_THRESHOLD


def test_empty_inputs() -> None:
    assert fuse_views([], [], CFG) == []
    assert fuse_views([hits({})], [hits({})], CFG) == []
    assert gate([], CFG).kept == ()


def test_query_views_split_multi_request_messages() -> None:
    one = "Convert this CSV file to JSON please."
    assert query_views(one, CFG) == [one]
    two = "Convert this CSV file to JSON. Then email the result to Ana."
    assert query_views(two, CFG) == [
        two,
        "Convert this CSV file to JSON.",
        "Then email the result to Ana.",
    ]
    short = "Find the weather in Paris. Thanks! Then book a table for two."
    assert query_views(short, CFG)[1:] == [
        "Find the weather in Paris. Thanks!",
        "Then book a table for two.",
    ]
    assert query_views(two, dataclasses.replace(CFG, max_segments=0)) == [two]
    assert query_views("  ", CFG) == [""]


def test_long_messages_are_merged_into_at_most_max_segments_keeping_all_text() -> None:
    sentences = [f"Please do task number {i} now." for i in range(10)]
    views = query_views(" ".join(sentences), dataclasses.replace(CFG, max_segments=4))
    assert len(views) == 5
    assert " ".join(views[1:]) == " ".join(sentences)


def test_a_message_longer_than_the_encoder_reads_is_read_whole_in_more_views() -> None:
    # one 1,000-word sentence (no punctuation): pieces of at most segment_words words
    words = [f"w{i}" for i in range(1000)]
    views = query_views(" ".join(words), CFG)
    assert all(len(v.split()) <= CFG.segment_words for v in views[1:])
    assert " ".join(views[1:]).split() == words  # every word read, in order
    assert len(views) == 1 + -(-1000 // CFG.segment_words)
    # a task of 40 short sentences keeps max_segments views: each fits the encoder already
    sentences = [f"Step {i}: do the thing with care today." for i in range(40)]
    assert len(query_views(" ".join(sentences), CFG)) == 1 + CFG.max_segments
    # the longest message allowed still has a bounded number of views
    assert len(query_views("word " * 6000, CFG)) == 1 + MAX_VIEWS
    assert len(query_views(" ".join(words), dataclasses.replace(CFG, segment_words=0))) == 1


def test_history_helpers() -> None:
    assert fusion.history_text(["a", " ", "b", "c"], CFG) == "b\nc"
    assert fusion.history_text(["a"], dataclasses.replace(CFG, history_turns=0)) == ""
    message = np.array([1.0, 0.0], dtype=np.float32)
    context = np.array([0.0, 1.0], dtype=np.float32)
    mixed = fusion.mix_history(message, context, 0.4)
    assert float(np.linalg.norm(mixed)) == pytest.approx(1.0)
    assert 0.0 < float(mixed[1]) < float(mixed[0])
    pooled = fusion.pool(np.stack([message, context]))
    np.testing.assert_allclose(pooled, [2**-0.5, 2**-0.5], rtol=1e-6)
    centroid = catalog_centroid(np.stack([message, context]))
    assert float(message @ centroid) == pytest.approx(0.5)


def test_single_view_fuse_and_pair_unpacking_of_the_gate() -> None:
    ids = np.array([4, 2, 9], dtype=np.int64)
    cos = np.array([0.7, 0.5, 0.3], dtype=np.float32)
    lex_ids = np.array([2, 11], dtype=np.int64)
    bm25 = np.array([6.0, 3.0], dtype=np.float32)
    single = fuse(ids, cos, lex_ids, bm25, CFG, dense_baseline=0.1)
    views = fuse_views([Hits(ids, cos)], [Hits(lex_ids, bm25)], CFG, dense_baseline=0.1)
    assert single == views
    assert len(gate(single, CFG).kept) == 4  # no cut by default
    kept, dropped = gate(single, CUT)
    assert [f.index for f in kept] == [2, 4, 11]
    assert [(f.index, reason) for f, reason in dropped] == [(9, DropReason.SCORE_GAP)]


# fuse_views works on arrays; it must rank exactly as the candidate-by-candidate rule.
def _reference(dense: Sequence[Hits], lexical: Sequence[Hits], config: FusionConfig,
               baseline: float) -> list[Fused]:
    """The rule written one candidate at a time: per id the view with the highest
    normalised score (the earliest on ties), the floor for ids no dense view returned."""
    def keep(best: dict[int, tuple[float, float]], view: Hits, raw: np.ndarray,
             norm: np.ndarray) -> None:
        for i, r, n in zip(view.ids.tolist(), raw.tolist(), norm.tolist(), strict=True):
            if i not in best or n > best[i][1]:
                best[i] = (r, n)

    d_best: dict[int, tuple[float, float]] = {}
    d_floor = (0.0, 0.0)
    scale = DenseScale.of(dense, baseline)
    if scale is not None:
        d_floor = (scale.floor, scale.floor_score)
        for view in dense:
            if len(view.ids):
                raw = np.asarray(view.scores, dtype=np.float64)
                keep(d_best, view, raw, scale(raw) * view.weight)
    l_best: dict[int, tuple[float, float]] = {}
    for view in lexical:
        raw = np.asarray(view.scores, dtype=np.float64)
        scaled = lexical_scale(raw)
        if scaled is not None:
            keep(l_best, view, raw, scaled * view.weight)
    w = config.dense_weight
    out = []
    for i in d_best.keys() | l_best.keys():
        d_raw, d_norm = d_best.get(i, d_floor)
        l_raw, l_norm = l_best.get(i, (0.0, 0.0))
        out.append(Fused(int(i), d_raw, l_raw, w * d_norm + (1.0 - w) * l_norm))
    out.sort(key=lambda f: (-f.fused, f.index))
    return out


def _views(rng: np.random.Generator, n_views: int, rows: int, depth: int, lexical: bool,
           ) -> list[Hits]:
    out = []
    for v in range(n_views):
        size = int(rng.integers(0, min(depth, rows) + 1))
        ids = rng.choice(rows, size=size, replace=False).astype(np.int64)
        if lexical:  # BM25: coarse scores, many ties, some views matching nothing
            scores = rng.integers(0, 4, size=size).astype(np.float32) * 1.5
            keep = scores > 0
            ids, scores = ids[keep], scores[keep]
        else:  # cosines on a coarse grid, so views tie with each other
            scores = (rng.integers(-2, 20, size=size) / 20.0).astype(np.float32)
        order = np.lexsort((ids, -scores))
        out.append(Hits(ids[order], scores[order], 1.0 if v == 0 else 0.4 * (v % 3 + 1)))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_fuse_views_ranks_as_the_candidate_by_candidate_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 120))
    n_views = int(rng.integers(0, 5))
    dense = _views(rng, n_views, rows, 50, lexical=False)
    lexical = _views(rng, n_views + int(rng.integers(0, 2)), rows, 50, lexical=True)
    config = FusionConfig(dense_weight=float(rng.choice([0.0, 0.3, 0.5, 1.0])))
    baseline = float(rng.choice([0.0, 0.2, 0.99]))  # 0.99: no cosine above it, every score 1
    got = fuse_views(dense, lexical, config, dense_baseline=baseline)
    want = _reference(dense, lexical, config, baseline)
    assert got == want  # the same candidates, scores bit for bit, and order
    assert all(type(f.index) is int and type(f.fused) is float for f in got)


def test_no_view_returned_anything() -> None:
    empty = Hits(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
    assert fuse_views([empty], [empty], FusionConfig()) == []
    assert fuse_views([], [], FusionConfig()) == []


@pytest.mark.parametrize("seed", range(20))
def test_one_view_a_side_ranks_as_the_candidate_by_candidate_rule(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)  # most turns: one view each side
    rows = int(rng.integers(1, 120))
    dense, lexical = _views(rng, 1, rows, 50, False), _views(rng, 1, rows, 50, True)
    config = FusionConfig(dense_weight=float(rng.choice([0.0, 0.5, 1.0])))
    got = fuse_views(dense, lexical, config, dense_baseline=0.1)
    assert got == _reference(dense, lexical, config, 0.1)


def test_an_id_twice_in_one_view_keeps_its_better_score() -> None:
    dense = [Hits(np.array([4, 2, 4]), np.array([0.9, 0.5, 0.3], dtype=np.float32))]
    lexical = [Hits(np.array([2, 7, 2]), np.array([3.0, 2.0, 1.0], dtype=np.float32))]
    got = fuse_views(dense, lexical, CFG, dense_baseline=0.1)
    assert got == _reference(dense, lexical, CFG, 0.1)
    assert sorted(f.index for f in got) == [2, 4, 7]  # each id once


def _gate_reference(fused: Sequence[Fused], config: FusionConfig,
                    ) -> tuple[list[Fused], list[tuple[Fused, DropReason]]]:
    """The gate written one candidate at a time."""
    if not fused:
        return [], []
    if config.min_dense > 0 and max(f.dense for f in fused) < config.min_dense:
        return [], [(f, DropReason.BELOW_THRESHOLD) for f in fused]
    top = max(f.fused for f in fused)
    kept, dropped = [], []
    for f in fused:
        if f.fused < config.min_fused:
            dropped.append((f, DropReason.BELOW_THRESHOLD))
        elif config.tail_ratio > 0 and f.fused < config.tail_ratio * top:
            dropped.append((f, DropReason.SCORE_GAP))
        else:
            kept.append(f)
    return kept, dropped


@pytest.mark.parametrize("seed", range(30))
def test_the_gate_keeps_and_drops_as_the_candidate_by_candidate_rule(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(0, 120))
    grid = rng.integers(0, 11, size=n) / 10.0  # coarse: candidates on the cut itself
    fused = [Fused(i, float(rng.integers(0, 10)) / 20.0, 1.0, float(s))
             for i, s in zip(rng.permutation(n).tolist(), grid.tolist(), strict=True)]
    config = FusionConfig(min_fused=float(rng.choice([0.0, 0.2, 0.3])),
                          tail_ratio=float(rng.choice([0.0, 0.3, 0.5])),
                          min_dense=float(rng.choice([0.0, 0.1, 0.45])))
    kept, dropped = gate(fused, config)
    assert (list(kept), list(dropped)) == _gate_reference(fused, config)
