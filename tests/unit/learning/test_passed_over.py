"""The skills a turn showed beside the one the model activated are kept as passed over: in the
activate row, through the store, compaction and the selection of learned examples, never as
a should-not-trigger label, and never the skills the request should take."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

from router.config import FeedbackConfig
from router.examples.loading import fingerprint
from router.examples.model import Example
from router.examples.selection import select
from router.learning.file_store import FileStore
from router.learning.policy import select_examples
from router.learning.recorder import Recorder
from router.learning.rows import ACTIVATE, Row, parse_row
from router.learning.traffic import learned_examples
from tests.unit.learning.test_recorder import routed

NOW = 1_800_000_000.0
POLICY = FeedbackConfig(min_sessions=2, max_per_session=50)


def _teach(root: Path, message: str, shown: tuple[str, ...], skill: str,
           sessions: tuple[str, ...] = ("a", "b")) -> None:
    recorder = Recorder(FileStore(root, POLICY))
    for session in sessions:
        recorder.on_route(routed(message, *shown, session=session))
        recorder.on_activate(skill, session)
    recorder.close()


def test_the_activate_row_keeps_what_its_route_showed(tmp_path: Path) -> None:
    _teach(tmp_path, "merge these pdfs", ("pdf", "docx", "git"), "pdf", ("a",))
    rows = [r for r in FileStore(tmp_path).read_rows() if r.kind == ACTIVATE]
    assert len(rows) == 1 and rows[0].query == "merge these pdfs"
    assert rows[0].shown == ("pdf", "docx", "git")  # retrieved only: not the always-on skill
    assert parse_row(rows[0].to_json()) == rows[0]


def test_passed_over_skills_survive_the_store_and_compaction(tmp_path: Path) -> None:
    _teach(tmp_path, "merge these pdfs", ("pdf", "docx", "git"), "pdf")
    # the same request in other sessions (a session's latest label of a request is its own)
    _teach(tmp_path, "Merge these  PDFs", ("pdf", "xlsx"), "pdf", ("c", "d"))
    _teach(tmp_path, "commit my work", ("git", "pdf"), "git")
    first = learned_examples(tmp_path, POLICY)
    assert FileStore(tmp_path, POLICY).compact()  # rewritten into a compacted file: still there
    again = learned_examples(tmp_path, POLICY)
    for found in (first, again):
        by_query = {" ".join(e.query.lower().split()): e for e in found}
        pdfs = by_query["merge these pdfs"]
        assert len(found) == 2 and pdfs.skills == ("pdf",) and pdfs.negatives == ()
        assert pdfs.passed_over == ("docx", "git", "xlsx")
        assert by_query["commit my work"].passed_over == ("pdf",)


def test_the_right_skills_and_removed_skills_are_never_passed_over() -> None:
    rows = [Row(kind=ACTIVATE, ts=NOW - 60, session=s, skill=skill, query="fix the build",
                shown=("ci", "git", "docker"))
            for s in ("a", "b") for skill in ("ci", "git")]
    (example,) = select_examples(rows, POLICY, NOW)
    assert example.skills == ("ci", "git") and example.passed_over == ("docker",)
    (known,) = select_examples(rows, POLICY, NOW, known={"ci", "git"})
    assert known.passed_over == ()
    # A single session's passed-over skills come only with the activations that count.
    lone = [Row(kind=ACTIVATE, ts=NOW - 60, session="a", skill="ci", query="deploy",
                shown=("ci", "docker"))]
    assert select_examples(lone, POLICY, NOW) == []


def test_passed_over_skills_are_no_should_not_trigger_rows() -> None:
    example = Example("fix the build", ("ci",), passed_over=("docker",))
    rows = select([example], {"ci", "docker"}).rows
    assert [(r.skill, r.negative) for r in rows] == [("ci", False)]


def test_the_examples_fingerprint_changes_only_where_skills_were_passed_over() -> None:
    plain = [Example("fix the build", ("ci",), ("docker",)), Example("commit", ("git",))]
    rows = sorted(json.dumps([e.query, sorted(e.skills), sorted(e.negatives)]) for e in plain)
    assert fingerprint(plain) == hashlib.sha256("\n".join(rows).encode()).hexdigest()
    passed = [replace(plain[0], passed_over=("git",)), plain[1]]
    assert fingerprint(passed) != fingerprint(plain)
