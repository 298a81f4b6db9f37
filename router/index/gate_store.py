"""The per-catalog gate evidence of one index version (the build's I/O edge).

An index of several catalogs stores, beside ``examples.json`` (which names the columns under
``gate_catalogs``), ``gate-catalogs.npy``: float32 (4, calibration requests, catalogs), each
calibration request's best cosine, best BM25 score, best description cosine and closest
positive example against each catalog alone (``router.calibration.catalog_gate``). A version
without it (one catalog, or built before it) serves the whole index's gate to every view.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from router.calibration.catalog_gate import CatalogEvidence, evidence
from router.examples.scoring import ExampleIndex, ExampleMode
from router.index.lexical import LexicalIndex
from router.skills.model import key_parts

GATE_CATALOGS = "gate_catalogs"  # examples.json: the evidence's columns
GATE_CATALOGS_NPY = "gate-catalogs.npy"


def best_bm25(texts: Sequence[str], lexical: LexicalIndex | None) -> np.ndarray | None:
    """Each text's best BM25 score over ``lexical`` (None without it)."""
    if lexical is None:
        return None
    out = []
    for text in texts:
        _, scores = lexical.search(text, 1)
        out.append(float(scores[0]) if len(scores) else 0.0)
    return np.asarray(out, dtype=np.float64)


def measure(keys: Sequence[str], skill_vectors: np.ndarray, index: ExampleIndex | None,
            mode: ExampleMode, queries: np.ndarray, texts: Sequence[str],
            lexical: LexicalIndex | None) -> CatalogEvidence | None:
    """The calibration requests' (``texts``, embedded as ``queries``) evidence against each
    catalog of the skills keyed ``keys`` (row order); None with fewer than two catalogs."""
    catalogs = list(dict.fromkeys(key_parts(k)[0] for k in keys))
    if len(catalogs) < 2:
        return None
    column = {name: i for i, name in enumerate(catalogs)}
    catalog_of = np.array([column[key_parts(k)[0]] for k in keys], dtype=np.int64)

    def best_words(group: np.ndarray, groups: int) -> np.ndarray:
        assert lexical is not None
        return np.stack([lexical.best_by_group(t, group, groups) for t in texts])

    return evidence(queries, skill_vectors, catalog_of, catalogs, index, mode,
                    best_words if lexical is not None else None)


def private_file(path: Path, mode: str, encoding: str | None = None) -> IO[Any]:
    """``path`` created owner-only (0600, whatever the umask) and opened with ``mode``."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), mode,
                     encoding=encoding)


def write(folder: Path, found: CatalogEvidence | None) -> dict[str, list[str]]:
    """Write the evidence (derived from users' requests: owner-only); what ``examples.json``
    records of it."""
    if found is None:
        return {}
    with private_file(folder / GATE_CATALOGS_NPY, "wb") as binary:
        np.save(binary, found.stacked(), allow_pickle=False)
    return {GATE_CATALOGS: list(found.catalogs)}


def load(folder: Path, data: Mapping[str, Any], requests: int) -> CatalogEvidence | None:
    """The evidence ``examples.json`` (``data``) names, for ``requests`` calibration rows."""
    catalogs = data.get(GATE_CATALOGS)
    if not isinstance(catalogs, list) or not catalogs:
        return None
    found = CatalogEvidence.unstacked([str(c) for c in catalogs],
                                      np.load(folder / GATE_CATALOGS_NPY, allow_pickle=False))
    if found.best.shape[0] != requests:
        raise ValueError(f"{GATE_CATALOGS_NPY} has {found.best.shape[0]} requests, "
                         f"{requests} are listed")
    return found
