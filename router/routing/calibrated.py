"""What an index calibrated for its catalog, applied to a turn (pure): the fusion settings
fitted from the catalog's examples (``router.calibration.settings_fit``) and the relevance
gate (``router.calibration.gate``; a view of some of an index's catalogs has the gate calibrated
on those, ``router.calibration.catalog_gate``), read from the snapshot and applied with
calibration's pure functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from router.access.view import View
from router.calibration.catalog_gate import ViewGate
from router.calibration.gate import refusal
from router.examples.scoring import VIEW, ExampleMode
from router.index.store import IndexSnapshot
from router.routing.fusion import DENSE, LEXICAL, Fused, FusionConfig


def fitted_fusion(snap: IndexSnapshot, fusion: FusionConfig) -> FusionConfig:
    """``fusion`` with the dense weight the index fitted to its catalog (if any); the tail cut
    stays under ``min(w, 1 - w)`` so that it never drops either retriever's top hit. The
    floor ``min_dense`` is scaled to the query encoder's cosines (``Calibration.floor_scale``)."""
    scale = snap.calibration.floor_scale if snap.calibration else 1.0
    if scale != 1.0:
        fusion = replace(fusion, min_dense=round(fusion.min_dense * scale, 6))
    if snap.tuning is None:
        return fusion
    w = snap.tuning.dense_weight
    return replace(fusion, dense_weight=w, tail_ratio=min(fusion.tail_ratio, 0.9 * min(w, 1 - w)))


def example_mode(snap: IndexSnapshot) -> ExampleMode:
    """Which example evidence scores a skill on this index (``router.examples.scoring``)."""
    return snap.tuning.example_mode if snap.tuning else VIEW


def gate_of(snap: IndexSnapshot, view: View) -> ViewGate:
    """The gate of ``view``'s turns: calibrated on its catalogs where the index recorded them
    apart (``router.calibration.catalog_gate``), else the whole index's."""
    if view.whole or snap.gates is None:
        return ViewGate(snap.calibration, snap.off_topic, snap.zero_shot)
    return snap.gates.of(view.catalogs)


def gate_in_force(gate: ViewGate, fusion: FusionConfig) -> float:
    """The cosine under which a turn may be refused: the view's calibrated gate, never below
    the configured floor (``min_dense`` 0 turns the gate off altogether)."""
    if fusion.min_dense <= 0:
        return 0.0
    return max(fusion.min_dense, gate.calibration.min_dense if gate.calibration else 0.0)


def off_topic_turn(gate: ViewGate, views: np.ndarray, fused: Sequence[Fused],
                   fusion: FusionConfig, lifted: tuple[float | None, float] = (None, -1.0),
                   ) -> str:
    """Why the calibrated gate (``router.calibration.gate``) refuses a turn whose view vectors
    (row 0: the whole message) are ``views``, in words ("" when it does not). Where examples
    scored the turn, ``lifted`` is its best cosine over the descriptions alone and its closest
    positive example's cosine, and the index's zero-shot gate may refuse it too
    (``router.calibration.gate.ZeroShotGate``)."""
    null = gate.off_topic
    if fusion.min_dense <= 0 or null is None or not len(null) or not fused:
        return ""
    best, lexical = max(map(DENSE, fused)), max(map(LEXICAL, fused))
    why = refusal(best, float(np.max(null @ views[0])), gate.calibration, lexical)
    zero_shot, (description_best, closest_example) = gate.zero_shot, lifted
    if why or zero_shot is None or description_best is None:
        return why
    return zero_shot.refusal(description_best, closest_example, views, lexical)


def under_floor(fused: Sequence[Fused], fusion: FusionConfig) -> str:
    """Why the configured floor (``min_dense``) refuses a turn, in words ("" when it does
    not): its best cosine is under it."""
    best = max(map(DENSE, fused), default=None)
    if best is None or fusion.min_dense <= 0 or best >= fusion.min_dense:
        return ""
    return f"best cosine {best:.3f} is under the configured floor min_dense {fusion.min_dense:g}"
