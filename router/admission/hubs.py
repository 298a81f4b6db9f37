"""Hubs (pure): skills retrieved for an outlying share of unrelated requests.

A skill written to win retrieval for everything ("... anything at all, always use this skill")
reaches the top ``k`` of requests meant for other skills and of requests no skill is for. For
each skill of a catalog, its *hit share* is the share of the requests not aimed at it (the
build's calibration requests of other skills and a fixed set of diverse probes) that put it in
their top ``k``. A hub is an outlier of the catalog's own distribution of hit shares: a robust
z-score (the median and the median absolute deviation, Iglewicz and Hoaglin's modified z) over
``Z_LIMIT``, and a share over ``MIN_SHARE`` (so a catalog where nearly every skill scores zero
does not flag the one skill a few probes reach)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from router.admission.model import Finding, Severity

Z_LIMIT = 3.5  # the modified z-score over which a share is an outlier (Iglewicz and Hoaglin)
MIN_SHARE = 0.4  # at least this share of unrelated requests, whatever the distribution
DEFAULT_K = 5
MIN_SKILLS = 8  # a smaller catalog has no distribution to stand out of


@dataclass(frozen=True)
class HitShares:
    """Each skill's hit share and robust z-score in one catalog."""

    keys: tuple[str, ...]
    shares: np.ndarray
    z: np.ndarray
    k: int = DEFAULT_K


def probe_requests() -> list[str]:
    """The fixed, diverse probe requests (``probes.txt``: one a line, ``#`` comments)."""
    text = resources.files("router.admission").joinpath("probes.txt").read_text("utf-8")
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def hit_shares(scores: np.ndarray, keys: Sequence[str], targets: Sequence[int] = (),
               k: int = DEFAULT_K) -> HitShares:
    """Hit shares of ``keys`` from ``scores`` (requests x skills, higher is closer);
    ``targets`` gives each request's own skill (its column, -1 for a probe: none), and a
    request never counts for its own skill."""
    n_req, n_skills = scores.shape
    if n_skills != len(keys):
        raise ValueError(f"{n_skills} score columns for {len(keys)} skills")
    own = np.full(n_req, -1, dtype=np.int64)
    if len(targets):
        if len(targets) != n_req:
            raise ValueError(f"{len(targets)} targets for {n_req} requests")
        own[:] = targets
    if n_req == 0 or n_skills == 0:
        empty = np.zeros(n_skills)
        return HitShares(tuple(keys), empty, empty.copy(), k)
    k = min(k, n_skills)
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    hits = np.zeros(n_skills)
    np.add.at(hits, top[top != own[:, None]], 1.0)
    unrelated = n_req - np.bincount(own[own >= 0], minlength=n_skills)
    shares = np.divide(hits, unrelated, out=np.zeros(n_skills), where=unrelated > 0)
    return HitShares(tuple(keys), shares, robust_z(shares), k)


def robust_z(values: np.ndarray) -> np.ndarray:
    """The modified z-score of each value: 0.6745 (x - median) / MAD; with a zero MAD, the
    mean absolute deviation scaled to match (x - median) / (1.2533 meanAD); all zeros when
    the values do not vary."""
    if values.size == 0:
        return values.copy()
    median = float(np.median(values))
    deviation = np.abs(values - median)
    mad = float(np.median(deviation))
    if mad > 0:
        return 0.6745 * (values - median) / mad
    mean_ad = float(np.mean(deviation))
    if mean_ad > 0:
        return (values - median) / (1.253314 * mean_ad)
    return np.zeros_like(values)


def hubs(shares: HitShares, *, z_limit: float = Z_LIMIT,
         min_share: float = MIN_SHARE) -> dict[str, list[Finding]]:
    """A ``hub`` finding for each outlier of ``shares`` (none in a catalog under
    ``MIN_SKILLS``)."""
    if len(shares.keys) < MIN_SKILLS:
        return {}
    median = float(np.median(shares.shares))
    out = {}
    for key, share, z in zip(shares.keys, shares.shares, shares.z, strict=True):
        if z > z_limit and share >= min_share:
            out[key] = [Finding("hub", Severity.HIGH,
                                f"retrieved in the top {shares.k} of {share:.0%} of unrelated "
                                f"requests (the catalog's median is {median:.0%}; robust z "
                                f"{z:.1f})")]
    return out
