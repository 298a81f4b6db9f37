"""The query-embedding cache: keyed by caller as well as text, so a text one caller sent is a
miss for another; batches with a check before each, what was made kept."""

from __future__ import annotations

import numpy as np
import pytest

from router.encoders.cache import QueryCache
from tests.support.embedders import CountingEmbedder


def test_a_text_cached_for_one_caller_is_a_miss_for_another() -> None:
    cache, embedder = QueryCache(size=8), CountingEmbedder()
    first = cache.encode(embedder, ["deploy the preview"], "tenant-a")
    assert cache.missing(embedder.model_id, ["deploy the preview"], "tenant-a") == []
    assert cache.missing(embedder.model_id, ["deploy the preview"], "tenant-b") == [0]
    again = cache.encode(embedder, ["deploy the preview"], "tenant-b")
    assert embedder.texts == ["deploy the preview", "deploy the preview"]  # b's was a miss
    assert np.array_equal(first, again)
    cache.encode(embedder, ["deploy the preview"], "tenant-a")
    assert len(embedder.texts) == 2  # a's own second time is a hit


def test_the_bound_holds_across_callers() -> None:
    cache, embedder = QueryCache(size=4), CountingEmbedder()
    for caller in ("a", "b", "c"):
        cache.encode(embedder, ["one", "two"], caller)
    assert len(cache._data) == 4


class Stop(Exception):
    pass


def test_batches_stop_at_the_check_and_keep_what_was_made() -> None:
    cache, embedder = QueryCache(), CountingEmbedder()
    texts = [f"text {i}" for i in range(10)]
    checks: list[int] = []

    def before() -> None:
        checks.append(len(embedder.texts))
        if len(checks) == 2:
            raise Stop

    with pytest.raises(Stop):
        cache.encode(embedder, texts, "a", batch=4, before=before)
    assert checks == [0, 4] and len(embedder.texts) == 4
    assert cache.missing(embedder.model_id, texts, "a") == list(range(4, 10))
    rows = cache.encode(embedder, texts, "a", batch=4)
    assert rows.shape[0] == 10 and embedder.texts[4:] == texts[4:]
