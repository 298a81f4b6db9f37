"""The product codes' code books kept from one version to the next while the catalog has barely
changed (``router.index.dense``: from 2,048 to 20,000 skills the dense index is 4-bit product
codes, and training their code books is most of the graph's build time, 1.5 s at 10k).

A version records what its code books were trained on (``dense_codebooks`` in the manifest:
the version that trained them, how many rows it had, and how many rows have been added,
changed or removed since). A build whose rows differ from the current version's by so few that
the total since the training stays within ``REFIT_SHARE`` of the catalog takes the current
code books and encodes every row with them; past that, or when the codes made with them miss
more exact neighbours than the dense index's recall check allows, new ones are trained. This
is not exact: code books trained on the new rows would differ a little. The tolerance is the
share above and the recall check, which the kept code books pass like new ones.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from router.errors import IndexUnavailable
from router.index import dense
from router.index.versions.layout import VERSIONS, current_version, read_manifest

log = logging.getLogger(__name__)

RECORD = "dense_codebooks"  # the manifest's key
REFIT_SHARE = 0.01  # rows added, changed or removed since the training, of the catalog


@dataclass(frozen=True)
class Kept:
    """The current version's product codes to take the code books from (None: train new
    ones) and the record the new version keeps if they are taken."""

    index: Any = None
    record: Mapping[str, Any] | None = None

    def written(self, built: Any, version: str) -> dict[str, Any]:
        """The manifest's record for ``built`` (the new dense index) made in ``version``."""
        if dense.kind_of(built) != dense.FLAT_PQ:
            return {}
        if self.record is not None and _same_books(built, self.index):
            return {RECORD: dict(self.record)}
        return {RECORD: {"trained_in": version, "rows": int(built.ntotal), "since": 0}}


def kept(root: Path, previous: Mapping[str, np.ndarray], keys: Sequence[str]) -> Kept:
    """What the build of rows ``keys`` (their cache keys) can keep of the current version
    under ``root``, whose rows are ``previous`` (by the same keys; empty: nothing kept)."""
    if not previous:
        return Kept()
    try:
        folder = root / VERSIONS / current_version(root)
        record = read_manifest(folder).get(RECORD)
        if not isinstance(record, Mapping):
            return Kept()
        new = sum(1 for k in keys if k not in previous)
        since = int(record["since"]) + new + max(0, len(previous) - (len(keys) - new))
        if since > REFIT_SHARE * len(keys):
            return Kept()
        index = dense.load(folder / "dense.faiss")
    except (IndexUnavailable, OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        log.info("no code books to keep (%s)", exc)
        return Kept()
    if dense.kind_of(index) != dense.FLAT_PQ:
        return Kept()
    return Kept(index, {"trained_in": str(record["trained_in"]), "rows": int(record["rows"]),
                        "since": since})


def _same_books(built: Any, kept_index: Any) -> bool:
    import faiss

    if kept_index is None:
        return False
    ours, theirs = (faiss.vector_to_array(i.pq.centroids) for i in (built, kept_index))
    return bool(ours.shape == theirs.shape and np.array_equal(ours, theirs))
