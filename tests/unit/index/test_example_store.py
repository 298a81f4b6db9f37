"""``example_store.write`` makes every file it writes owner-only, whatever the umask: the
requests (examples.json), their embeddings (examples.npy) and the BM25 index expanded with
their words (lexical-examples/, 0700, its files 0600)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from router.examples.model import ExampleSource
from router.examples.selection import Row, Selection
from router.index import example_store
from router.index.lexical import LexicalIndex

REQUEST = "merge the quarterly invoices into one PDF"


@pytest.fixture()
def open_umask() -> Iterator[None]:
    previous = os.umask(0o022)  # new files readable by everyone unless made otherwise
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("open_umask")
def test_every_file_written_is_owner_only(tmp_path: Path) -> None:
    row = Row(query=REQUEST, skill="pdf-tools", negative=False, source=ExampleSource.TRAFFIC,
              origin="traffic")
    learned = example_store.Learned(
        selection=Selection(rows=(row,)), vectors=np.ones((1, 4), dtype=np.float32),
        calibration_texts=("what is the weather",),
        calibration_vectors=np.ones((1, 4), dtype=np.float32), calibration=None,
        fingerprint="f", expanded=LexicalIndex.build([f"pdf-tools {REQUEST}", "git-helper"]))
    example_store.write(tmp_path, learned)
    written = sorted(tmp_path.rglob("*"))
    assert {p.relative_to(tmp_path).as_posix() for p in written} >= {
        example_store.EXAMPLES_JSON, example_store.EXAMPLES_NPY, example_store.LEXICAL_EXAMPLES}
    assert len(written) > 3  # the expanded index's own files
    modes = {p.name: stat.S_IMODE(os.stat(p).st_mode) for p in written}
    assert modes == {p.name: 0o700 if p.is_dir() else 0o600 for p in written}
