"""Which recorded rows become learned examples: support, per-session caps, labels, purges."""

from __future__ import annotations

from router.config import FeedbackConfig
from router.examples.model import ExampleSource
from router.learning.policy import select_examples
from router.learning.rows import ACTIVATE, DAY_SECONDS, FEEDBACK, PURGE, Row, parse_row

NOW = 1_800_000_000.0
POLICY = FeedbackConfig(min_sessions=2, max_per_session=5, max_rows_per_skill=200,
                        retention_days=30)


def pos(query: str, skill: str, session: str, age: float = 60.0) -> Row:
    return Row(kind=ACTIVATE, ts=NOW - age, session=session, skill=skill, query=query)


def neg(query: str, skill: str, session: str, age: float = 30.0) -> Row:
    return Row(kind=FEEDBACK, ts=NOW - age, session=session, skill=skill, query=query,
               outcome="wrong_skill")


def learned(rows: list[Row], policy: FeedbackConfig = POLICY) -> dict[str, tuple[str, ...]]:
    return {e.query: e.skills for e in select_examples(rows, policy, NOW) if e.skills}


def test_one_session_alone_teaches_nothing() -> None:
    rows = [pos(f"merge these pdfs {i}", "pdf", "attacker") for i in range(5)]
    assert learned(rows) == {}


def test_a_skill_backed_by_enough_sessions_learns_every_supported_request() -> None:
    rows = [pos("merge these PDFs", "pdf", "a"), pos("split a pdf", "pdf", "b")]
    examples = select_examples(rows, POLICY, NOW)
    assert [(e.query, e.skills, e.source, e.origin) for e in examples] == [
        ("merge these PDFs", ("pdf",), ExampleSource.TRAFFIC, "traffic"),
        ("split a pdf", ("pdf",), ExampleSource.TRAFFIC, "traffic")]


def test_identical_requests_merge_case_and_space_insensitively() -> None:
    rows = [pos("Merge  these PDFs", "pdf", "a"), pos("merge these pdfs", "pdf", "b"),
            pos("merge these pdfs", "csv", "c"), pos("chart it", "csv", "d")]
    assert learned(rows) == {"merge these pdfs": ("csv", "pdf"), "chart it": ("csv",)}


def test_one_session_contributes_at_most_max_per_session_of_its_newest() -> None:
    rows = [pos(f"request {i}", "pdf", "busy", age=100.0 - i) for i in range(10)]
    rows.append(pos("other", "pdf", "quiet"))
    policy = FeedbackConfig(min_sessions=2, max_per_session=3)
    assert sorted(learned(rows, policy)) == ["other", "request 7", "request 8", "request 9"]


def test_a_later_wrong_skill_report_turns_the_positive_into_a_negative() -> None:
    rows = [pos("draft an email", "pdf", "a", age=50), neg("draft an email", "pdf", "a", age=40),
            neg("draft an email", "pdf", "b", age=40), pos("merge pdfs", "pdf", "c"),
            pos("split pdfs", "pdf", "d")]
    examples = {e.query: e for e in select_examples(rows, POLICY, NOW)}
    assert examples["draft an email"].skills == ()
    assert examples["draft an email"].negatives == ("pdf",)
    assert examples["merge pdfs"].skills == ("pdf",)


def test_a_pair_labelled_both_ways_keeps_the_label_more_sessions_gave() -> None:
    rows = [pos("q", "pdf", s) for s in ("a", "b", "c")] + [neg("q", "pdf", "d"),
                                                            neg("r", "pdf", "e")]
    examples = {e.query: e for e in select_examples(rows, POLICY, NOW)}
    assert examples["q"].skills == ("pdf",) and examples["q"].negatives == ()


def test_rows_without_a_session_and_rows_past_retention_never_count() -> None:
    old = POLICY.retention_days * DAY_SECONDS + 1
    rows = [pos("q1", "pdf", ""), pos("q2", "pdf", ""), pos("q3", "pdf", "a", age=old),
            pos("q4", "pdf", "b")]
    assert learned(rows) == {}


def test_cap_per_skill_keeps_the_newest() -> None:
    rows = [pos(f"q{i}", "pdf", f"s{i}", age=100.0 - i) for i in range(6)]
    assert sorted(learned(rows, FeedbackConfig(max_rows_per_skill=2))) == ["q4", "q5"]


def test_purges_hide_a_skill_or_old_rows() -> None:
    rows = [pos("merge pdfs", "pdf", "a", age=10 * DAY_SECONDS), pos("split pdfs", "pdf", "b"),
            pos("chart", "csv", "c"), pos("plot", "csv", "d")]
    by_skill = Row(kind=PURGE, ts=NOW, skill="csv", before=NOW)
    assert learned([*rows, by_skill]) == {"merge pdfs": ("pdf",), "split pdfs": ("pdf",)}
    by_age = Row(kind=PURGE, ts=NOW, before=NOW - DAY_SECONDS)
    assert learned([*rows, by_age]) == {"chart": ("csv",), "plot": ("csv",)}  # pdf: 1 session


def test_known_drops_removed_skills() -> None:
    rows = [pos("q1", "pdf", "a"), pos("q2", "pdf", "b"), pos("q3", "gone", "a"),
            pos("q4", "gone", "b")]
    assert sorted(select_examples(rows, POLICY, NOW, known={"pdf"}),
                  key=lambda e: e.query)[0].skills == ("pdf",)
    assert {e.query for e in select_examples(rows, POLICY, NOW, known={"pdf"})} == {"q1", "q2"}


def test_rows_round_trip_and_torn_lines_are_skipped() -> None:
    row = Row(kind="route", ts=NOW, session="s", route_id="r", query="héllo",
              shown=("a", "b"), retrieved=("b",))
    assert parse_row(row.to_json()) == row
    assert parse_row(row.to_json()[:-5]) is None
    assert parse_row('{"kind": "nonsense", "ts": 1, "rid": "x"}') is None
