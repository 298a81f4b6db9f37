"""The gate's nearest-request test fitted to the index's encoder from the catalog's own
requests: for two fake encoders whose cosines are scaled differently (the second adds one
direction to every vector, raising every cosine as a fine-tuned encoder does), the fitted gate
refuses held-out off-topic requests and lets held-out on-topic ones through, where the
constants fitted to another encoder let most off-topic requests through on the second; the
record round-trips."""

from __future__ import annotations

import numpy as np
import pytest

from router.calibration import gate
from router.calibration.gate_encoder import FITTED_ON, MIN_REQUESTS, fit_to_encoder, fits


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


RNG = np.random.default_rng(1)
DIM = 64
SKILLS = _unit(RNG.normal(size=(20, DIM)))
EVERYDAY = _unit(RNG.normal(size=DIM))  # what everyday requests share
SHARED = _unit(RNG.normal(size=DIM))  # the second encoder adds it to every vector


def _on_topic(n: int) -> np.ndarray:
    rows = RNG.integers(0, len(SKILLS), n)
    return _unit(SKILLS[rows] + 0.9 * _unit(RNG.normal(size=(n, DIM))))


def _off_topic(n: int) -> np.ndarray:
    return _unit(0.9 * EVERYDAY + _unit(RNG.normal(size=(n, DIM))))


OWN, ON_TEST, NULL, OFF_TEST = _on_topic(60), _on_topic(200), _off_topic(300), _off_topic(200)


def _refused(calibration: gate.Calibration, null: np.ndarray, null_best: np.ndarray,
             skills: np.ndarray, turns: np.ndarray) -> float:
    under = null[null_best < calibration.min_dense]
    best, near = (turns @ skills.T).max(axis=1), (turns @ under.T).max(axis=1)
    return float(np.mean([gate.refuses(float(b), float(n), calibration)
                          for b, n in zip(best, near, strict=True)]))


@pytest.mark.parametrize("shift", [0.0, 0.8])
def test_the_fitted_gate_refuses_off_topic_requests_whatever_the_encoders_scale(
        shift: float) -> None:
    def encode(rows: np.ndarray) -> np.ndarray:
        return _unit(rows + shift * SHARED)

    skills, null = encode(SKILLS), encode(NULL)
    null_best = (null @ skills.T).max(axis=1)
    constants = gate.calibrate(null_best)
    assert constants is not None
    fitted = fit_to_encoder(constants, null_best, null, skills, encode(OWN))
    assert fitted.self_requests == len(OWN) and fitted.quantile > constants.quantile
    assert _refused(fitted, null, null_best, skills, encode(OFF_TEST)) >= 0.9
    assert _refused(fitted, null, null_best, skills, encode(ON_TEST)) <= 0.01
    under = null[null_best < fitted.min_dense]
    reasons = [gate.refusal(float((skills @ t).max()), float((under @ t).max()), fitted)
               for t in encode(OFF_TEST[:20])]
    assert any(reasons)  # Explain's reason says the gate was fitted, and on what
    assert all(f"on {len(OWN)} of the catalog's own requests" in r for r in reasons if r)
    if shift:  # the constants do not carry over to the shifted encoder's cosines
        assert _refused(constants, null, null_best, skills, encode(OFF_TEST)) < 0.5


def test_too_few_of_the_catalogs_own_requests_keep_the_constants() -> None:
    null_best = (NULL @ SKILLS.T).max(axis=1)
    constants = gate.calibrate(null_best)
    assert constants is not None
    assert fit_to_encoder(constants, null_best, NULL, SKILLS,
                          OWN[: MIN_REQUESTS - 1]) == constants


def test_the_encoder_the_constants_were_fitted_on_keeps_them() -> None:
    assert not any(fits(name) for name in FITTED_ON) and "all-MiniLM-L6-v2" in FITTED_ON
    assert fits("skill-router-tools-l6-v1")


def test_the_fitted_gate_round_trips_through_the_manifest() -> None:
    null_best = (NULL @ SKILLS.T).max(axis=1)
    constants = gate.calibrate(null_best)
    assert constants is not None
    fitted = fit_to_encoder(constants, null_best, NULL, SKILLS, OWN)
    assert gate.Calibration.from_dict(fitted.to_dict()) == fitted
    assert gate.Calibration.from_dict({**constants.to_dict()}) == constants
