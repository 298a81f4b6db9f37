"""The relevance gate a build calibrates for its catalog (pure, numpy only): from the off-topic
requests' evidence (``router.calibration.gate``), made stricter as far as the catalog's held-out
example requests allow (``router.calibration.settings_fit``), with the zero-shot gate kept
beside it when examples lift every cosine. The index build embeds the requests and stores
what this returns (``router.index.example_store``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from router.calibration import gate
from router.calibration.gate_encoder import fit_to_encoder
from router.calibration.settings import Fit
from router.examples.scoring import VIEW, ExampleIndex, best_cosines, closest_positive


@dataclass(frozen=True)
class GateFit:
    """The gate calibrated for a catalog, the calibration rows its nearest-request test compares
    with, and the zero-shot gate and its rows (each None / empty when there is none)."""

    calibration: gate.Calibration | None = None
    nearest: tuple[int, ...] = ()
    zero_shot: gate.ZeroShotGate | None = None
    nearest_zero_shot: tuple[int, ...] = ()


def calibrate_gate(null: np.ndarray, skill_vectors: np.ndarray, index: ExampleIndex | None,
                   words: np.ndarray | None, catalog_requests: int,
                   fit: Fit | None, asked: np.ndarray | None = None,
                   own: np.ndarray | None = None) -> GateFit:
    """The gate from the calibration requests' vectors ``null`` (the last ``catalog_requests``
    of them the catalog's own off-topic examples) and their best BM25 scores ``words`` against
    the catalog with its examples ``index``, fitted to the held-out requests of ``fit``.
    ``asked``: the same requests as the encoder that serves queries embeds them, when its
    vectors are not ``null``'s (an int8 copy): every threshold then comes from those, and the
    fixed floor is scaled to them, while a turn is still compared with ``null``. ``own``: the
    catalog's own requests (``router.calibration.self_requests``) as that encoder embeds them;
    with no held-out example requests the gate and margin are fitted to them
    (``router.calibration.gate_encoder``)."""
    mode = fit.settings.example_mode if fit is not None else VIEW
    asked = null if asked is None else asked
    plain = best_cosines(asked, skill_vectors, None)  # the catalog-wide product, made once
    best = best_cosines(asked, skill_vectors, index, mode, plain=plain)
    calibration = gate.calibrate(best, catalog_requests=catalog_requests, lexical=words)
    if calibration is not None and asked is not null:
        calibration = replace(calibration, floor_scale=gate.floor_scale(
            best_cosines(null, skill_vectors, None), plain))
    if calibration is not None and fit is None and own is not None:
        calibration = fit_to_encoder(calibration, best, null, skill_vectors, own)
    nearest = _under(best, calibration)
    if fit is not None and calibration is not None and nearest:
        held = fit.held_out
        near = (held.vectors @ null[list(nearest)].T).max(axis=1)
        calibration = gate.fit_to_catalog(calibration, best, [
            (held.best, near, held.lexical),
            (held.untaught_best, near, held.untaught_lexical)])
    fitted = GateFit(calibration, nearest)
    if index is None or calibration is None:
        return fitted
    # Examples lift every request's best cosine, off-topic ones too: the gate the catalog
    # would have without them is kept beside it (router.calibration.gate.ZeroShotGate).
    zero = gate.calibrate(plain, catalog_requests=catalog_requests, lexical=words)
    if zero is None:
        return fitted
    nearest_zero = _under(plain, zero)
    reach = closest_positive(asked, index)
    taught = float(np.max(reach)) if np.any(reach > -1.0) else 2.0  # 2: no positive example
    return GateFit(calibration, nearest, gate.ZeroShotGate(zero, null[list(nearest_zero)], taught),
                   nearest_zero)


def _under(best: np.ndarray, calibration: gate.Calibration | None) -> tuple[int, ...]:
    """Rows under the gate. Requests a catalog reaches above its own gate (a travel request
    where a travel policy skill exists) are not what an off-topic turn looks like there."""
    return tuple(i for i, b in enumerate(best.tolist())
                 if calibration is None or b < calibration.min_dense)
