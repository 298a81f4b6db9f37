"""A Feedback that ends NOT_FOUND claims nothing: the session id it named stays free for the
principal that uses it next (over the Engine, with and without a feedback store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.access.model import Principal
from router.config import Config
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.errors import NotFound
from router.routing.model import RouteQuery
from tests.support.skills import skill_record
from tests.support.snapshots import snapshot_of

SKILLS = [skill_record("pdf-tools", "Extracts text and tables from PDF files."),
          skill_record("git-helper", "Writes git commit messages.")]


@pytest.mark.parametrize("stored", [False, True])
def test_a_not_found_feedback_leaves_its_session_unclaimed(tmp_path: Path,
                                                          stored: bool) -> None:
    served = Engine(snapshot_of(SKILLS), Config(), HashEmbedder(),
                    index_dir=tmp_path if stored else None)
    with pytest.raises(NotFound):
        served.feedback("no-such-skill", "conv-a", "success", principal_name="bob",
                        caller=Principal("bob"))
    # alice may still start conv-a: bob's failed Feedback made it nobody's
    assert served.route(RouteQuery(message="extract a pdf table", session_id="conv-a",
                                   caller=Principal("alice"))).skills
    served.feedback("pdf-tools", "conv-a", "success", principal_name="alice",
                    caller=Principal("alice"))
    served.close()
