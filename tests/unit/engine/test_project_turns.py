"""What a turn's project skills may cost: a budget on what is new to the caller, a server-wide
cap on the turns embedding at once, work that stops at the caller's deadline; caches keyed by
caller; and a turn whose project skills are all denied answers."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from router.access.model import ROUTE, Principal
from router.config import IndexConfig, RoutingConfig
from router.engine.project_turns import EMBED_BATCH, ProjectTurns, Slots
from router.errors import DeadlineExceeded, TooLarge
from router.routing.deadline import NO_DEADLINE, Deadline
from router.routing.model import InlineSkill, RouteQuery
from tests.support.catalogs import three_catalogs
from tests.support.embedders import CountingEmbedder
from tests.support.indexes import open_engine
from tests.support.skills import skill_record
from tests.support.snapshots import snapshot_of

ALICE = Principal("alice", frozenset({ROUTE}))
BOB = Principal("bob", frozenset({ROUTE}))
SNAP = snapshot_of([skill_record("pdf-tools", "PDF files."),
                    skill_record("git-commit", "Commit messages.")])


def inline(count: int, chars: int, start: int = 0) -> tuple[InlineSkill, ...]:
    return tuple(InlineSkill(f"proj-{i}", (f"Skill {i} " + "word " * chars)[:chars],
                             f"/p/proj-{i}/SKILL.md") for i in range(start, start + count))


def lay(turns: ProjectTurns, skills: Sequence[InlineSkill], embedder: CountingEmbedder,
        caller: Principal = ALICE, until: Deadline = NO_DEADLINE) -> int:
    """Lay ``skills`` for ``caller``; the number of texts embedded for it."""
    before = len(embedder.texts)
    query = RouteQuery("lint it", project_skills=tuple(skills), caller=caller, until=until)
    turns.lay(SNAP, SNAP.everything, query, caller, embedder)
    return len(embedder.texts) - before


def test_a_flood_of_new_long_project_skills_is_refused_before_any_work() -> None:
    turns, embedder = ProjectTurns(IndexConfig(), None), CountingEmbedder()
    with pytest.raises(TooLarge) as caught:
        lay(turns, inline(256, 1024), embedder)
    message = str(caught.value)
    assert "256 skills new to this caller" in message and "budget of 16384" in message
    assert "fewer or shorter" in message and "already sent cost nothing" in message
    assert embedder.texts == []


def test_fifty_normal_project_skills_pass_on_a_first_turn() -> None:
    turns, embedder = ProjectTurns(IndexConfig(), None), CountingEmbedder()
    assert lay(turns, inline(50, 300), embedder) == 50
    assert lay(turns, inline(50, 1024, start=100), embedder) == 50  # the longest allowed too


def test_only_skills_new_to_the_caller_count_against_the_budget() -> None:
    turns, embedder = ProjectTurns(IndexConfig(), None), CountingEmbedder()
    with pytest.raises(TooLarge):
        lay(turns, inline(70, 1024), embedder)  # ~18,000 tokens, all new
    assert lay(turns, inline(40, 1024), embedder) == 40
    assert lay(turns, inline(70, 1024), embedder) == 30  # the 40 sent before cost nothing
    with pytest.raises(TooLarge):
        lay(turns, inline(70, 1024), embedder, caller=BOB)  # what alice sent is new to bob


def test_a_budget_of_zero_is_none() -> None:
    turns = ProjectTurns(IndexConfig(), None, RoutingConfig(project_embed_budget_tokens=0))
    assert lay(turns, inline(256, 1024), CountingEmbedder()) == 256


def test_embedding_stops_between_batches_once_the_caller_went_away() -> None:
    turns, embedder = ProjectTurns(IndexConfig(), None), CountingEmbedder()
    gone = Deadline(gone=lambda: len(embedder.texts) > 0)  # cancels once the first batch ran
    with pytest.raises(DeadlineExceeded, match="while embedding project skills"):
        lay(turns, inline(40, 100), embedder, until=gone)
    assert len(embedder.texts) == EMBED_BATCH < 40
    assert turns.slots.admitted == 0  # the slot was given back
    assert lay(turns, inline(40, 100), embedder) == 40 - EMBED_BATCH  # what was made is kept


def test_a_turn_without_a_slot_waits_until_its_deadline() -> None:
    turns = ProjectTurns(IndexConfig(), None, RoutingConfig(project_embed_concurrency=1))
    embedder = CountingEmbedder()
    turns.slots.hold(NO_DEADLINE)  # another turn embedding
    with pytest.raises(DeadlineExceeded, match="waiting to embed"):
        lay(turns, inline(3, 100), embedder, until=Deadline.within(0.05))
    assert embedder.texts == [] and turns.slots.admitted == 1
    turns.slots.release()
    assert lay(turns, inline(3, 100), embedder, until=Deadline.within(60)) == 3
    assert lay(turns, inline(3, 100), embedder, until=Deadline.within(0)) == 0  # cached: no slot


def test_beyond_the_running_and_waiting_turns_one_is_refused_at_once() -> None:
    slots = Slots(1)
    slots.hold(NO_DEADLINE)
    waited = threading.Event()

    def wait() -> None:
        slots.hold(NO_DEADLINE)
        waited.set()

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    until = time.monotonic() + 30  # the waiter admitted (it then blocks on the slot)
    while slots.admitted < 2 and time.monotonic() < until:
        time.sleep(0.005)
    assert slots.admitted == 2
    with pytest.raises(TooLarge, match="retry shortly"):
        slots.hold(Deadline.within(60))
    slots.release()
    assert waited.wait(30)
    slots.release()
    waiter.join(30)
    assert slots.admitted == 0


def test_a_turn_whose_project_skills_are_all_denied_answers(tmp_path: Path) -> None:
    engine = open_engine(three_catalogs(tmp_path))
    denying = Principal("pay", frozenset({ROUTE}), ("payments", "org"), ("internal-*",))
    hidden = (InlineSkill("internal-notes", "Lint internal notes files.", "/r/notes/SKILL.md"),
              InlineSkill("internal-wiki", "Edit the internal wiki.", "/r/wiki/SKILL.md"))
    result = engine.route(RouteQuery("lint internal notes", project_skills=hidden,
                                     caller=denying))
    assert result.index_version
    assert not {"internal-notes", "internal-wiki"} & {s.name for s in result.skills}
    assert [d.message for d in result.diagnostics] == [
        "project skill 'internal-notes' is denied to this caller; skipped",
        "project skill 'internal-wiki' is denied to this caller; skipped"]
    engine.close()


def test_a_message_one_caller_sent_is_a_cache_miss_for_another(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    engine = open_engine(three_catalogs(tmp_path), embedder)
    message = "deploy the payments service"
    engine.route(RouteQuery(message, caller=ALICE))
    after_alice = len(embedder.texts)
    engine.route(RouteQuery(message, caller=ALICE))
    assert len(embedder.texts) == after_alice  # alice's own repeat: a hit
    engine.route(RouteQuery(message, caller=BOB))
    assert len(embedder.texts) > after_alice  # bob's first: a miss, as for a new message
    assert message in embedder.texts[after_alice:]
    engine.close()


def test_project_vectors_are_cached_per_caller() -> None:
    turns, embedder = ProjectTurns(IndexConfig(), None), CountingEmbedder()
    skills = inline(2, 50)
    query = RouteQuery("x", project_skills=skills, caller=ALICE, until=Deadline.within(60))
    layered, _ = turns.lay(SNAP, SNAP.everything, query, ALICE, embedder)
    again, _ = turns.lay(SNAP, SNAP.everything, query, BOB, embedder)
    assert layered is not None and again is not None
    assert np.array_equal(layered.vectors, again.vectors) and len(embedder.texts) == 4
