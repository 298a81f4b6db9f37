"""What the server writes that holds users' text is owner-only (a real server on port 0, the
hash embedder): the feedback folder (0700, also when an older server left it 0755), its
segments, compacted files and lock (0600), after compaction and after a Reindex that folds the
learned examples into a new version (its examples.json 0600, its example words' folder 0700)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from router.config import FeedbackConfig
from router.index.example_store import EXAMPLES_JSON, LEXICAL_EXAMPLES
from router.index.versions.layout import current_version
from router.learning.file_store import FileStore
from router.learning.folder import feedback_dir
from router.v1 import router_pb2 as pb
from tests.support.learning import GIT, PDF, activate, make_index, open_engine, route
from tests.support.servers import serving


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_users_text_is_owner_only_after_compaction_and_reindex(tmp_path: Path) -> None:
    index = make_index(tmp_path)
    feedback_dir(index).mkdir(mode=0o755)
    os.chmod(feedback_dir(index), 0o755)  # as an older server left it
    engine = open_engine(index)
    with serving(engine) as served:
        for session in ("a", "b"):
            for message in (PDF, GIT):
                turn = route(served.stub, message, session)
                activate(served.stub, turn.skills[0].name, session, turn.route_id)
        reindexed = served.stub.Reindex(pb.ReindexRequest())
    engine.recorder.close()
    assert reindexed.swapped  # the learned examples made a new version
    assert FileStore(index, FeedbackConfig()).compact()
    folder = feedback_dir(index)
    files = sorted(folder.iterdir())
    assert any(p.name.startswith("compacted-") for p in files)
    assert mode(folder) == 0o700
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    version = index / "versions" / str(current_version(index))
    assert PDF in (version / EXAMPLES_JSON).read_text()  # it holds the users' requests
    assert mode(version / EXAMPLES_JSON) == 0o600
    if (version / LEXICAL_EXAMPLES).exists():
        assert mode(version / LEXICAL_EXAMPLES) == 0o700
