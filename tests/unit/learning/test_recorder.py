"""The Recorder without a server: the in-process window, disabled mode, an unwritable store."""

from __future__ import annotations

from pathlib import Path

from router.config import FeedbackConfig
from router.learning.file_store import FileStore
from router.learning.recorder import Recorder
from router.routing.model import Reason, RoutedSkill, RouteQuery, RouteResult


def result(*retrieved: str, always: str = "style") -> RouteResult:
    skills = [RoutedSkill(always, "", "", 1.0, Reason.ALWAYS_ON)]
    skills += [RoutedSkill(name, "", "", 0.5, Reason.RETRIEVED) for name in retrieved]
    return RouteResult(tuple(skills), "", "v1", 0, 0)


def test_the_window_and_what_counts_as_shown(tmp_path: Path) -> None:
    recorder = Recorder(FileStore(tmp_path, FeedbackConfig()))
    recorder.on_route(RouteQuery(message="merge pdfs", session_id="s"), result("pdf", "csv"))
    for message in ("a", "b"):
        recorder.on_route(RouteQuery(message=message, session_id="s"), result("git"))
    recorder.on_activate("style", "s")  # always-on: in every catalog, teaches nothing
    recorder.on_activate("pdf", "s")  # retrieved two Routes ago: inside the window
    recorder.on_route(RouteQuery(message="c", session_id="s"), result("git"))
    recorder.on_activate("csv", "s")  # now four Routes ago: outside it
    rows = [(r.skill, r.query) for r in FileStore(tmp_path).read_rows() if r.kind == "activate"]
    assert rows == [("style", ""), ("pdf", "merge pdfs"), ("csv", "")]


def test_a_repeated_activation_in_a_conversation_is_not_recorded(tmp_path: Path) -> None:
    recorder = Recorder(FileStore(tmp_path, FeedbackConfig()))
    for session in ("s1", "s2"):
        recorder.on_route(RouteQuery(message="merge pdfs", session_id=session), result("pdf"))
        recorder.on_activate("pdf", session)
        recorder.on_activate("pdf", session)  # Activate answers already_active
    rows = [(r.skill, r.session, r.query) for r in FileStore(tmp_path).read_rows()
            if r.kind == "activate"]
    assert rows == [("pdf", "s1", "merge pdfs"), ("pdf", "s2", "merge pdfs")]


def test_a_disabled_recorder_hands_out_no_ids(tmp_path: Path) -> None:
    recorder = Recorder(FileStore(tmp_path, FeedbackConfig(enabled=False)))
    assert recorder.on_route(RouteQuery(message="merge pdfs", session_id="s"), result()) == ""
    assert not recorder.on_feedback("pdf", "s", "success")
    assert not (tmp_path / "feedback").exists()


def test_an_unwritable_store_never_fails_a_route(tmp_path: Path) -> None:
    (tmp_path / "feedback").write_text("not a folder", encoding="utf-8")
    recorder = Recorder(FileStore(tmp_path, FeedbackConfig()))
    assert recorder.on_route(RouteQuery(message="merge pdfs", session_id="s"),
                             result("pdf")) == ""
    recorder.on_activate("pdf", "s")
    assert not recorder.on_feedback("pdf", "s", "success")
