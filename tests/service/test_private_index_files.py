"""Every file of an index version that holds users' requests or their embeddings is owner-only
whatever the umask (a real server on port 0, the hash embedder): after a Reindex that folds
learned examples in, ``examples.json`` (the requests), ``examples.npy`` (their embeddings) and
every file of ``lexical-examples/`` (their words) are 0600, its folders 0700."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.index.example_store import EXAMPLES_JSON, EXAMPLES_NPY, LEXICAL_EXAMPLES
from router.index.versions.layout import current_version
from router.v1 import router_pb2 as pb
from tests.support.learning import CSV, GIT, PDF, activate, make_index, open_engine, route
from tests.support.servers import serving


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture()
def open_umask() -> Iterator[None]:
    """A umask that leaves new files readable by everyone (0644), as most hosts have it."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("open_umask")
def test_learned_examples_and_their_embeddings_are_owner_only(tmp_path: Path) -> None:
    index = make_index(tmp_path)
    engine = open_engine(index)
    with serving(engine) as served:
        for session in ("a", "b", "c"):
            for message in (PDF, GIT, CSV):
                turn = route(served.stub, message, session)
                activate(served.stub, turn.skills[0].name, session, turn.route_id)
        reindexed = served.stub.Reindex(pb.ReindexRequest())
    engine.recorder.close()
    assert reindexed.swapped  # the learned examples made a new version
    version = index / "versions" / str(current_version(index))
    assert PDF in (version / EXAMPLES_JSON).read_text()  # it holds the users' requests
    assert {name: mode(version / name) for name in (EXAMPLES_JSON, EXAMPLES_NPY)} == {
        EXAMPLES_JSON: 0o600, EXAMPLES_NPY: 0o600}
    words = version / LEXICAL_EXAMPLES
    if words.exists():
        inside = [words, *words.rglob("*")]
        assert {p.name: mode(p) for p in inside} == {
            p.name: 0o700 if p.is_dir() else 0o600 for p in inside}
