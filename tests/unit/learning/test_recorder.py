"""The Recorder without a server: the in-process window, disabled mode, an unwritable store."""

from __future__ import annotations

from pathlib import Path

from router.config import FeedbackConfig
from router.learning.file_store import FileStore
from router.learning.recorder import Recorder, RoutedTurn, ShownSkill


def routed(message: str, *retrieved: str, session: str = "s",
           always: str = "style") -> RoutedTurn:
    """A Route of ``message`` that showed ``always`` and retrieved ``retrieved``."""
    skills = (ShownSkill("default", always),
              *(ShownSkill("default", name, retrieved=True) for name in retrieved))
    return RoutedTurn(session, "", message, skills)


def test_the_window_and_what_counts_as_shown(tmp_path: Path) -> None:
    recorder = Recorder(FileStore(tmp_path, FeedbackConfig()))
    recorder.on_route(routed("merge pdfs", "pdf"))
    for message in ("a", "b"):
        recorder.on_route(routed(message, "git"))
    recorder.on_activate("style", "s")  # always-on: in every catalog, teaches nothing
    recorder.on_activate("pdf", "s")  # retrieved two Routes ago: inside the window
    recorder.on_route(routed("c", "git"))
    recorder.on_activate("pdf", "s")  # now four Routes ago: outside it
    rows = [(r.skill, r.query) for r in FileStore(tmp_path).read_rows() if r.kind == "activate"]
    assert rows == [("style", ""), ("pdf", "merge pdfs"), ("pdf", "")]


def test_a_disabled_recorder_hands_out_no_ids(tmp_path: Path) -> None:
    recorder = Recorder(FileStore(tmp_path, FeedbackConfig(enabled=False)))
    assert recorder.on_route(routed("merge pdfs")) == ""
    assert not recorder.on_feedback("pdf", "s", "success")
    assert not (tmp_path / "feedback").exists()


def test_an_unwritable_store_never_fails_a_route(tmp_path: Path) -> None:
    (tmp_path / "feedback").write_text("not a folder", encoding="utf-8")
    recorder = Recorder(FileStore(tmp_path, FeedbackConfig()))
    assert recorder.on_route(routed("merge pdfs", "pdf")) == ""
    recorder.on_activate("pdf", "s")
    assert not recorder.on_feedback("pdf", "s", "success")
