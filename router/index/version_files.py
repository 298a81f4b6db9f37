"""What a build writes into a version folder besides the manifest's bookkeeping: the records,
the vectors, the FAISS and BM25 files; the JSON writer; and the build's own record (library
versions, device and precision)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from router.common.collector import paused
from router.common.json_text import compact as compact_json
from router.encoders.base import Embedder
from router.index import dense
from router.index.lexical import LexicalIndex
from router.skills.model import DEFAULT_CATALOG, Diagnostic, Level, Skill


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("skill-router", "faiss-cpu", "bm25s", "numpy", "sentence-transformers"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return out


# skills: larger manifests are written on one line (C JSON encoder; indented, 10k skills' took
# 0.3 s of a Reindex)
COMPACT_FROM = 1_000


def build_record(embedder: Embedder) -> dict[str, str]:
    """Where the build embedded (``device``, ``precision``): informational only. It is not a
    Reindex input and not part of ``model``, so CPU- and GPU-made vectors mix (reuse, shards)."""
    record = getattr(embedder, "build_record", None)
    return dict(record()) if callable(record) else {"device": "cpu", "precision": "fp32"}


def write_files(folder: Path, skills: Sequence[Skill], diagnostics: Sequence[Diagnostic],
                vectors: np.ndarray, lexical: LexicalIndex, dense_index: Any) -> None:
    write_json(folder / "skills.json", compact=True, data={
        "skills": [s.to_dict() for s in skills],
        "diagnostics": [d.to_dict() for d in diagnostics],
    })
    np.save(folder / "vectors.npy", vectors)
    dense.save(dense_index, folder / "dense.faiss")
    (folder / "lexical").mkdir()
    lexical.save(folder / "lexical")


def write_json(path: Path, data: Any, *, compact: bool = False,
               text: str | None = None) -> None:
    """``compact``: one line, through json's C encoder (``skills.json`` of 1M skills); an
    indented dump runs the pure-Python encoder, several times slower. ``text``: ``data``'s
    compact text already made (written as it is)."""
    if text is None:
        text = (compact_json(data) if compact
                else json.dumps(data, ensure_ascii=False, indent=1))
    with path.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def read_records(path: Path) -> tuple[tuple[Skill, ...], tuple[Diagnostic, ...]]:
    with paused():  # the records hold no cycles; see router.common.collector
        records = json.loads(path.read_text(encoding="utf-8"))
        skills = tuple(Skill.from_dict(d) for d in records["skills"])
        diagnostics = tuple(Diagnostic(Level(d["level"]), d["path"], d["message"],
                                       d.get("catalog", DEFAULT_CATALOG))
                            for d in records["diagnostics"])
        del records  # freed before the collector runs again
    return skills, diagnostics
