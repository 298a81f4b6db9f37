"""Which recorded rows become learned examples: support, per-session caps, labels, purges."""

from __future__ import annotations

from dataclasses import replace

from router.config import FeedbackConfig
from router.examples.model import ExampleSource
from router.learning.policy import kept_rows, select_examples
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


def test_a_full_cap_per_skill_evicts_nothing_without_more_support() -> None:
    rows = [pos(f"q{i}", "pdf", f"s{i}", age=100.0 - i) for i in range(6)]
    capped = FeedbackConfig(max_rows_per_skill=2)
    assert sorted(learned(rows, capped)) == ["q0", "q1"]  # the later ones have no more support
    backed = [pos("q5", "pdf", s, age=1.0) for s in ("t1", "t2")]
    assert sorted(learned(rows + backed, capped)) == ["q0", "q5"]  # 3 sessions beat 1


def test_what_one_principal_teaches_one_skill_is_capped_at_its_first() -> None:
    policy = FeedbackConfig(max_per_principal=3, min_sessions=2)
    genuine = [replace(pos(f"genuine {i}", "pdf", f"g{i}", age=500.0 - i), principal="team")
               for i in range(3)]
    flood = [replace(pos(f"planted {i}", "pdf", f"x{i}-{j}", age=100.0 - i), principal="bot")
             for i in range(50) for j in range(3)]
    taught = learned(genuine + flood, policy)
    assert sorted(taught) == ["genuine 0", "genuine 1", "genuine 2", "planted 0", "planted 1",
                              "planted 2"]  # the flood's first three; the genuine ones stay


def test_the_same_session_id_from_two_principals_is_two_sessions() -> None:
    rows = [replace(pos("merge pdfs", "pdf", "s"), principal=p) for p in ("a", "b")]
    assert learned(rows) == {"merge pdfs": ("pdf",)}


def test_compaction_keeps_the_rows_the_selection_keeps() -> None:
    policy = FeedbackConfig(max_rows_per_skill=3, min_sessions=1)
    early = [pos(f"early {i}", "pdf", f"e{i}", age=900.0 - i) for i in range(3)]
    late = [pos(f"late {i}", "pdf", f"l{i}", age=100.0 - i) for i in range(20)]
    kept = kept_rows(early + late, policy)
    assert sorted(r.query for r in kept) == ["early 0", "early 1", "early 2"]
    assert learned(kept, policy) == learned(early + late, policy)


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
