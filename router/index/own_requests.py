"""The catalog's own requests at build time (the build's I/O edge for them): sentences of the
skills' bodies (``router.calibration.self_requests``) embedded by the encoder that serves
queries, for the fits that have no example requests: the gate's nearest-request test fitted to
the encoder (``router.calibration.gate_encoder``) and fusion's dense weight
(``router.calibration.fusion_fit``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from router.calibration.fusion_fit import fit_to_own_requests
from router.calibration.self_requests import self_requests
from router.calibration.settings import FittedSettings
from router.encoders.base import Embedder
from router.encoders.kept import encode_kept
from router.index.lexical import LexicalIndex
from router.index.vectors import catalog_centroid


class Catalog(NamedTuple):
    """The skills examples are fitted against: their keys in row order, their vectors, their
    BM25 documents and the index over them, their bodies and how much of one BM25 reads."""

    names: Sequence[str]
    vectors: np.ndarray
    documents: Sequence[str] = ()
    lexical: LexicalIndex | None = None
    bodies: Sequence[str] = ()  # each skill's SKILL.md body, in row order ("" for none)
    body_chars: int = 0


def fit_own(catalog: Catalog, encoder: Embedder, *, gate: bool,
            fusion: bool) -> tuple[np.ndarray | None, FittedSettings | None]:
    """The catalog's own requests embedded by ``encoder`` when the gate is to be fitted to
    them (``gate``), and the dense weight fitted to them when ``fusion``; None for either
    that is not wanted or that the catalog's bodies cannot give."""
    own = self_requests(catalog.names, catalog.bodies, catalog.body_chars) if (
        (gate or fusion) and catalog.bodies) else []
    if not own:
        return None, None
    vectors = encode_kept(encoder, [r.text for r in own])
    tuning = fit_to_own_requests(catalog.vectors, catalog_centroid(catalog.vectors),
                                 catalog.documents, own, vectors,
                                 LexicalIndex.build) if fusion else None
    return (vectors if gate else None), tuning
