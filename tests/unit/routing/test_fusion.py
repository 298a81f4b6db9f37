"""Hybrid fusion, the relevance gate, query views and history helpers."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from router.index.vectors import catalog_centroid
from router.routing import fusion
from router.routing.fusion import Fused, FusionConfig, Hits, fuse, fuse_views, gate, query_views
from router.routing.model import DropReason

CFG = FusionConfig()


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
    assert CFG.tail_ratio == 0.45
    assert CFG.history_weight == 0.4
    assert CFG.history_turns == 2
    doc = fusion.__doc__ or ""
    for text in ("``dense_weight`` 0.5", "0.18 is the highest threshold", "``tail_ratio`` 0.45"):
        assert text in doc
    # the tail cut must never remove a retriever's own best hit
    assert CFG.tail_ratio < min(CFG.dense_weight, 1 - CFG.dense_weight)


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
    result = gate(fused, CFG)
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
    kept, dropped = gate(single, CFG)
    assert [f.index for f in kept] == [2, 4, 11]
    assert [(f.index, reason) for f, reason in dropped] == [(9, DropReason.SCORE_GAP)]
