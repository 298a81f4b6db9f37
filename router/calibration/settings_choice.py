"""How a build chooses its routing settings from cross-validated figures (pure, numpy only):
the prior (full use of the examples) unless the best combination beats it on the held-out
requests, then the defaults unless it beats those too; each a sign test at ``SIGMAS`` where a
request is won on recall@5 first, then on its reciprocal rank
(``router.calibration.settings_fit`` has the whole story and the measurements)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from router.calibration.settings import FittedSettings
from router.examples.scoring import BOTH, ExampleMode

log = logging.getLogger(__name__)

Combo = tuple[float, ExampleMode, bool]  # dense weight, example mode, BM25 documents expanded
SIGMAS = 2.0  # a setting stays unless beaten on this many sigmas more requests than lost
PRIOR: Combo = (0.7, BOTH, True)  # full use of the evidence


def _describe(combo: Combo) -> str:
    w, mode, expand = combo
    return f"dense {w:.1f}, {mode}, {'expanded' if expand else 'plain'} BM25"


def beats(recall: np.ndarray, rr: np.ndarray, a: int, b: int) -> tuple[bool, int, int]:
    """Whether combination ``a`` wins clearly more held-out requests than ``b`` (recall@5
    first, then the reciprocal rank), with the wins and losses."""
    by_recall = np.round(recall[:, a] - recall[:, b], 9)
    by_rank = np.round(rr[:, a] - rr[:, b], 9)
    sign = np.where(by_recall != 0, np.sign(by_recall), np.sign(by_rank))
    wins, losses = int(np.sum(sign > 0)), int(np.sum(sign < 0))
    return wins - losses > SIGMAS * np.sqrt(wins + losses), wins, losses


def _kept_reason(best: Combo, prior_is_best: bool, wins: int, losses: int) -> str:
    """Why the prior stayed, in words."""
    if prior_is_best:
        return f"full use of the examples ({_describe(PRIOR)}) is the best combination"
    return (f"full use of the examples ({_describe(PRIOR)}) kept: the best alternative "
            f"({_describe(best)}) did better on {wins} held-out requests and worse on "
            f"{losses}, not clearly more")


def _fallback_reason(best_is_default: bool, better: bool, wins: int, losses: int) -> str:
    """After the prior did harm: why the best combination or the defaults serve, in words."""
    if best_is_default:
        return "the defaults are the best combination"
    if better:
        return f"that beat the defaults too ({wins} better, {losses} worse)"
    return f"the defaults kept: it did not beat them ({wins} better, {losses} worse)"


def choose(combos: Sequence[Combo], recall: np.ndarray, rr: np.ndarray, default: Combo,
           folds: int) -> FittedSettings:
    """The prior unless the best combination by mean recall@5 (then MRR@10) beats it; then
    the defaults unless it beats those too (module doc)."""
    mean_recall, mean_rr = recall.mean(axis=0), rr.mean(axis=0)
    best = max(range(len(combos)), key=lambda i: (mean_recall[i], mean_rr[i], -i))
    prior = combos.index(PRIOR) if PRIOR in combos else best
    base = combos.index(default) if default in combos else best
    harm, wins, losses = beats(recall, rr, best, prior)
    if best == prior or not harm:
        chosen = prior
        reason = _kept_reason(combos[best], best == prior, wins, losses)
    else:
        better, wins2, losses2 = beats(recall, rr, best, base)
        chosen = best if better else base
        reason = (f"full use of the examples ({_describe(PRIOR)}) did worse than "
                  f"{_describe(combos[best])} on {wins} held-out requests and better on "
                  f"{losses}; " + _fallback_reason(best == base, better, wins2, losses2))
    w, mode, expand = combos[chosen]
    log.info("routing settings from %d example requests (%d-fold): %s; recall@5 %.3f "
             "(defaults %.3f): %s", len(recall), folds, _describe(combos[chosen]),
             mean_recall[chosen], mean_recall[base], reason)
    return FittedSettings(w, mode, expand, len(recall), float(mean_recall[chosen]),
                         float(mean_rr[chosen]), float(mean_recall[base]), float(mean_rr[base]),
                         float(mean_recall[prior]), float(mean_rr[prior]), reason)
