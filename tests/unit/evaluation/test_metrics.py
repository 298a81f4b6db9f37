import pytest

from router.evaluation.metrics import Labelled, Outcome, misses, per_skill, score, split_of


def _o(expected: tuple[str, ...], ranked: tuple[str, ...], rid: str = "x") -> Outcome:
    return Outcome(Labelled(rid, "q", expected), ranked)


def test_recall_mrr_complete_and_nothing() -> None:
    outcomes = [
        _o(("a", "b"), ("a", "c", "d", "e", "f", "b")),  # R@1 .5, R@5 .5, rr 1
        _o(("z",), ("c", "z")),  # R@1 0, R@3 1, rr .5
        _o((), ()),  # off-topic, correctly nothing
        _o((), ("c",)),  # off-topic, wrongly triggered
    ]
    s = score(outcomes)
    assert s.on_topic == 2 and s.off_topic == 2
    assert s.recall_at[1] == pytest.approx(0.25)
    assert s.recall_at[3] == pytest.approx(0.75)
    assert s.recall_at[5] == pytest.approx(0.75)
    assert s.mrr10 == pytest.approx(0.75)
    assert s.all_at5 == pytest.approx(0.5)
    assert s.nothing_rate == pytest.approx(0.5)


def test_split_is_fixed_and_roughly_sixty_forty() -> None:
    ids = [f"q-{i}" for i in range(2000)]
    splits = [split_of(i) for i in ids]
    assert splits == [split_of(i) for i in ids]
    share = splits.count("validation") / len(splits)
    assert 0.35 < share < 0.45


def test_misses_and_per_skill_name_what_took_the_place() -> None:
    outcomes = [_o(("a",), ("b", "c")), _o(("a",), ("a",)), _o(("d",), ("b",))]
    found = misses(outcomes, k=5)
    assert [(m.skill, m.rank) for m in found] == [("a", None), ("d", None)]
    report = {r.skill: r for r in per_skill(outcomes)}
    assert report["a"].expected == 2 and report["a"].found == 1
    assert report["a"].instead[0] == ("b", 1)


def test_an_expected_always_on_skill_counts_as_found_first() -> None:
    o = Outcome(Labelled("x", "q", ("always", "b")), ("c", "b"), always_on=("always",))
    s = score([o])
    assert s.recall_at[1] == pytest.approx(0.5)
    assert s.recall_at[3] == pytest.approx(1.0)
    assert s.mrr10 == pytest.approx(1.0)
    assert o.top(2) == ("always", "c", "b")  # always-on skills are shown on top of k
