"""Hubs: an outlying share of unrelated requests, measured against the catalog's own spread."""

from __future__ import annotations

import numpy as np
import pytest

from router.admission.hubs import hit_shares, hubs, probe_requests, robust_z


def scores_with_hub(n_req: int = 40, n_skills: int = 20, hub: int | None = 3) -> np.ndarray:
    rng = np.random.default_rng(7)
    scores = rng.random((n_req, n_skills))
    if hub is not None:
        scores[:, hub] += 0.9  # in every request's top k
    return scores


def test_a_skill_in_every_top_k_is_a_hub() -> None:
    keys = [f"s{i}" for i in range(20)]
    found = hubs(hit_shares(scores_with_hub(), keys))
    assert list(found) == ["s3"]
    assert found["s3"][0].rule == "hub" and "100%" in found["s3"][0].message


def test_no_hub_without_one() -> None:
    keys = [f"s{i}" for i in range(20)]
    assert hubs(hit_shares(scores_with_hub(hub=None), keys)) == {}


def test_a_request_never_counts_for_its_own_skill() -> None:
    keys = [f"s{i}" for i in range(20)]
    scores = scores_with_hub(hub=None)
    scores[:10, 5] += 5.0  # the first ten requests are s5's own
    shares = hit_shares(scores, keys, targets=[5] * 10 + [-1] * 30)
    assert shares.shares[5] < 0.5
    assert hubs(shares) == {}


def test_a_small_catalog_has_no_hubs() -> None:
    keys = [f"s{i}" for i in range(5)]
    assert hubs(hit_shares(scores_with_hub(n_skills=5, hub=0), keys, k=1)) == {}


def test_robust_z() -> None:
    z = robust_z(np.array([0.1, 0.1, 0.12, 0.09, 0.11, 0.9]))
    assert z[-1] > 3.5 and abs(z[0]) < 1
    assert robust_z(np.zeros(4)).tolist() == [0, 0, 0, 0]
    z0 = robust_z(np.array([0.0] * 9 + [0.6]))  # zero MAD: the mean deviation stands in
    assert z0[-1] > 3.5


def test_bad_shapes_are_clear() -> None:
    with pytest.raises(ValueError, match="3 score columns for 2 skills"):
        hit_shares(np.zeros((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="1 targets for 2 requests"):
        hit_shares(np.zeros((2, 2)), ["a", "b"], targets=[0])


def test_the_probes_are_many_and_diverse() -> None:
    probes = probe_requests()
    assert len(probes) >= 50 and len(set(probes)) == len(probes)
