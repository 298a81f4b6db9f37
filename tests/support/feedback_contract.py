"""The one contract every feedback store backend runs (``router.learning.store.FeedbackStore``).

A backend's test module subclasses ``FeedbackStoreContract`` as ``Test<Backend>`` and defines
``open(place, policy)``: a store at ``place``, where opening the same ``place`` again is the same
rows seen by another replica, or by this one after a restart (the file store: an index folder;
a database backend maps it to a schema of its own). The base is not collected by itself.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.access.ownership import check_session_owner
from router.admission.approvals import legacy_path, write_file
from router.admission.policy import Approval
from router.config import FeedbackConfig
from router.errors import PermissionDenied
from router.learning.approvals import approve, revoke, stored_approvals
from router.learning.policy import visible
from router.learning.routes import WINDOW, ShownRoute
from router.learning.rows import ACTIVATE, COUNT, FEEDBACK, PURGE, ROUTE, Row
from router.learning.stats import ROUTE_KEEP_SECONDS, skill_stats
from router.learning.store import FeedbackStore

POLICY = FeedbackConfig(max_rows_per_skill=3, min_sessions=1)
NOW = float(int(time.time()))  # whole seconds: a stored timestamp keeps six decimals


def example(query: str, skill: str, session: str, ago: float = 0.0,
            principal: str = "") -> Row:
    """A positive example: ``skill`` activated after a Route of ``query``."""
    return Row(kind=ACTIVATE, ts=NOW - ago, session=session, skill=skill, query=query,
               route_id=f"route-{session}-{query}", shown=(skill, "other"), principal=principal)


def route(route_id: str, session: str, principal: str = "", ago: float = 0.0) -> Row:
    return Row(kind=ROUTE, ts=NOW - ago, session=session, route_id=route_id,
               query=f"message of {route_id}", shown=("pdf", "csv"), retrieved=("pdf",),
               principal=principal)


class FeedbackStoreContract:
    """What callers rely on, whatever keeps the rows."""

    def open(self, place: Path, policy: FeedbackConfig = POLICY) -> FeedbackStore:
        raise NotImplementedError  # each backend's subclass opens its store at ``place``

    @pytest.fixture
    def place(self, tmp_path: Path) -> Path:
        return tmp_path

    @pytest.fixture
    def store(self, place: Path) -> Iterator[FeedbackStore]:
        opened = self.open(place)
        yield opened
        opened.close()

    def replica(self, place: Path, policy: FeedbackConfig = POLICY) -> FeedbackStore:
        """Another process's store on the same rows."""
        return self.open(place, policy)

    # rows in, rows out

    def test_appended_rows_read_back_whole(self, store: FeedbackStore) -> None:
        rows = [route("r1", "s1", principal="alice"),
                example("merge pdfs", "pdf", "s1", principal="alice"),
                Row(kind=FEEDBACK, ts=NOW, skill="pdf", outcome="wrong_skill", session="s1",
                    query="split a pdf", route_id="r1", principal="alice")]
        store.append(rows[0], durable=False)
        for row in rows[1:]:
            store.append(row)
        assert sorted(store.read_rows(), key=lambda r: r.rid) == sorted(rows,
                                                                        key=lambda r: r.rid)

    def test_an_empty_store_reads_nothing(self, store: FeedbackStore) -> None:
        assert store.read_rows() == []
        assert store.find_route("no-such-route") is None
        assert store.session_routes("no-such-session") == []

    def test_rows_outlive_the_process_and_reach_every_replica(self, place: Path) -> None:
        first = self.open(place)
        first.append(example("merge pdfs", "pdf", "a"))
        first.append(route("r1", "a"), durable=False)
        first.flush()  # a Route's row may wait a moment before every replica reads it
        other = self.replica(place)
        assert {r.kind for r in other.read_rows()} == {ACTIVATE, ROUTE}  # while it runs
        first.close()
        again = self.open(place)  # after a restart
        assert {(r.kind, r.session) for r in again.read_rows()} == {(ACTIVATE, "a"),
                                                                    (ROUTE, "a")}
        again.append(example("split pdfs", "pdf", "b"))  # writable again
        assert len(other.read_rows()) == 3
        for opened in (other, again):
            opened.close()

    # compaction and purges

    def test_compaction_keeps_what_the_policy_keeps(self, place: Path) -> None:
        writer = self.open(place)
        for i in range(10):  # the cap keeps the first three: the later ones have no more support
            writer.append(example(f"q{i}", "pdf", f"s{i}", ago=100 - i))
        writer.append(example("ancient", "csv", "old", ago=91 * 86_400.0))  # past retention
        writer.append(route("stale", "s0", ago=2 * ROUTE_KEEP_SECONDS), durable=False)
        writer.append(route("fresh", "s0"), durable=False)
        writer.append(Row(kind=FEEDBACK, ts=NOW, skill="pdf", outcome="success", session="s0"))
        writer.close()  # as when its process ends
        before = skill_stats(writer.read_rows(), POLICY, NOW)
        store = self.open(place)
        assert store.compact(NOW)
        rows = store.read_rows()
        assert sorted(r.query for r in rows if r.kind == ACTIVATE) == ["q0", "q1", "q2"]
        assert {r.route_id for r in rows if r.kind == ROUTE} == {"fresh"}
        assert not any(r.query == "ancient" for r in rows)
        assert not any(r.kind == FEEDBACK for r in rows)  # lives on in the counters
        assert any(r.kind == COUNT for r in rows)
        assert skill_stats(rows, POLICY, NOW) == before
        assert store.compact(NOW)  # again: nothing changes
        assert skill_stats(store.read_rows(), POLICY, NOW) == before
        store.close()

    def test_a_purge_hides_at_once_and_compacts(self, place: Path) -> None:
        store = self.open(place)
        store.append(example("merge pdfs", "pdf", "a", ago=10))
        store.append(example("plot", "csv", "b", ago=10))
        store.close()
        other = self.replica(place)
        assert store.purge("pdf", NOW, NOW)  # nobody else is compacting: it ran
        rows = other.read_rows()
        assert {r.query for r in visible(rows, POLICY, NOW) if r.is_example} == {"plot"}
        assert not any(r.skill == "pdf" and r.query for r in rows)  # gone from storage
        assert [r.skill for r in rows if r.kind == PURGE] == ["pdf"]  # hides what comes late
        assert store.purge("", NOW, NOW)  # every skill's
        assert not [r for r in visible(other.read_rows(), POLICY, NOW) if r.is_example]
        for opened in (store, other):
            opened.close()

    # the Routes an activation names

    def test_a_route_is_found_by_its_id_on_every_replica(self, place: Path) -> None:
        store = self.open(place)
        row = route("r1", "s1", principal="alice")
        store.append(row, durable=False)
        expected = ShownRoute("r1", "s1", row.query, ("pdf",), NOW, "alice", False)
        assert store.find_route("r1") == expected  # at once here
        store.flush()
        assert self.replica(place).find_route("r1") == expected
        assert store.find_route("r2") is None
        store.close()

    def test_a_route_past_its_keep_is_not_found_elsewhere(self, place: Path) -> None:
        store = self.open(place)
        store.append(route("old", "s1", ago=2 * ROUTE_KEEP_SECONDS), durable=False)
        assert self.replica(place).find_route("old") is None
        store.close()

    def test_a_session_keeps_its_last_routes_oldest_first(self, store: FeedbackStore) -> None:
        for i in range(WINDOW + 1):
            store.append(route(f"r{i}", "s1", ago=10 - i), durable=False)
        store.append(route("elsewhere", "s2"), durable=False)
        assert [r.route_id for r in store.session_routes("s1")] == [
            f"r{i}" for i in range(1, WINDOW + 1)]

    # who owns a session

    def test_a_session_is_its_first_claimants(self, store: FeedbackStore) -> None:
        assert store.claim_session("s1", "alice") == "alice"
        assert store.claim_session("s1", "bob") == "alice"
        assert store.claim_session("s1", "alice") == "alice"
        assert store.claim_session("", "bob") == "bob"  # an empty id is nobody's
        with pytest.raises(PermissionDenied):
            check_session_owner(store.claim_session("s1", "bob"), "bob")

    def test_a_session_routed_by_someone_is_theirs(self, place: Path) -> None:
        store = self.open(place)
        store.append(route("r1", "s1", principal="alice"), durable=False)
        assert store.claim_session("s1", "bob") == "alice"
        store.flush()
        other = self.replica(place)
        assert other.find_route("r1") is not None  # the other replica has looked it up
        assert other.claim_session("s1", "bob") == "alice"
        store.close()

    # approvals of quarantined skills

    def test_approvals_replace_per_skill_and_reach_every_replica(self, place: Path) -> None:
        store = self.open(place)
        assert store.read_approvals() == []
        assert not store.drop_approval("vendor/tool")
        first = Approval("vendor/tool", "sha256:" + "a" * 64, "alice", NOW, "reviewed")
        store.put_approval(first)
        store.put_approval(Approval("other", "sha256:" + "c" * 64, "bob", NOW))
        second = Approval("vendor/tool", "sha256:" + "b" * 64, "bob", NOW + 1)
        store.put_approval(second)  # a new digest: the old approval admits nothing any more
        other = self.replica(place)
        assert [a.key for a in other.read_approvals()] == ["other", "vendor/tool"]
        assert other.read_approvals()[1] == second
        assert other.drop_approval("other")
        store.close()
        again = self.open(place)  # after a restart
        assert again.read_approvals() == [second]
        for opened in (other, again):
            opened.close()

    def test_the_index_folders_old_approvals_move_into_the_store_once(self,
                                                                      place: Path) -> None:
        digest = "sha256:" + "d" * 64
        write_file(legacy_path(place), [Approval("kept", digest, "alice", NOW - 10),
                                        Approval("both", digest, "alice", NOW - 10)])
        store = self.open(place)
        newer = approve(store, place, "both", digest, "bob", now=NOW)  # moves the file first
        assert not legacy_path(place).exists()
        assert stored_approvals(store, place) == [newer, Approval("kept", digest, "alice",
                                                                  NOW - 10)]
        assert revoke(store, place, "kept")
        other = self.replica(place)
        assert [a.key for a in stored_approvals(other, place)] == ["both"]
        for opened in (store, other):
            opened.close()
