"""Example selection and scoring, the calibrated gate, and the guards around them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from router.builder.version import build_index
from router.calibration import gate
from router.config import Config
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.examples.model import Example, ExampleSource
from router.examples.scoring import best_cosines, example_index, with_examples
from router.examples.selection import TRAFFIC_CAP, bound, select
from router.index.store import load_index
from router.routing.model import Reason, RouteQuery
from router.skills.model import Level, Skill
from tests.support.snapshots import snapshot_of


def _unit(*rows: list[float]) -> np.ndarray:
    m = np.array(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_select_caps_learned_rows_per_skill_keeping_supported_then_newest() -> None:
    traffic = ExampleSource.TRAFFIC
    examples = [Example(f"q{i}", ("a",), (), traffic) for i in range(5)]
    examples += [Example("Q0", ("a",), (), traffic), Example("z", ("gone",)),
                 Example("hi", ()), Example("no", (), ("a",), ExampleSource.TRIGGER)]
    chosen = select(examples, {"a", "b"}, traffic_cap=3)
    positives = [r.query for r in chosen.rows if not r.negative]
    assert positives == ["Q0", "q4", "q3"]  # q0 said twice (support), then the newest
    assert [r.query for r in chosen.rows if r.negative] == ["no"]
    assert chosen.unknown_skills == ("gone",) and chosen.off_topic == ("hi",)


def test_curated_rows_past_the_learned_cap_are_all_kept() -> None:
    # A popular skill named by 50 multi-skill requests in a curated file: every row counts.
    curated = [Example(f"book {i} and pay", ("book", "pay")) for i in range(50)]
    learned = [Example(f"booking {i}", ("book",), (), ExampleSource.TRAFFIC)
               for i in range(30)]
    chosen = select([*curated, *learned], {"book", "pay"})
    rows = [(r.skill, r.source) for r in chosen.rows]
    assert rows.count(("pay", ExampleSource.FILE)) == 50
    assert rows.count(("book", ExampleSource.FILE)) == 50
    assert rows.count(("book", ExampleSource.TRAFFIC)) == TRAFFIC_CAP  # 30 learned, capped
    # A learned request that a curated file also holds is curated: never cut by the cap.
    again = [Example(f"booking {i}", ("book",)) for i in range(30)]
    assert len(select([*again, *learned], {"book"}).rows) == 30


def test_curated_rows_are_bounded_per_catalog_with_a_warning_naming_the_file() -> None:
    first = [Example(f"a{i}", ("s", "t"), (), ExampleSource.FILE, "one.jsonl")
             for i in range(3)]
    second = [Example(f"b{i}", ("s",), (), ExampleSource.FILE, "two.jsonl") for i in range(3)]
    learned = [Example("c", ("s",), (), ExampleSource.TRAFFIC, "traffic")]
    kept, problems = bound([*first, *second, *learned], limit=7)
    assert [e.query for e in kept] == ["a0", "a1", "a2", "b0", "c"]  # 6 + 1 rows; traffic free
    assert [(p.path, p.level) for p in problems] == [("two.jsonl", Level.WARNING)]
    assert "2 example requests left out" in problems[0].message
    assert "7 (request, skill) rows" in problems[0].message
    assert bound(first, limit=6) == (first, [])


SKILL_VECTORS = _unit([0, 0, 1], [0, 0.2, 1], [0.2, 0, 1])


def test_example_view_lifts_its_skill_and_names_the_closest_example() -> None:
    index = example_index(("ask one", "ask two", "ask three"), np.array([1, 1, 2]),
                          np.array([False, False, False]),
                          _unit([1, 0, 0], [1, 0.3, 0], [0, 1, 0]), SKILL_VECTORS)
    assert index.view_skill.tolist() == [1, 2]
    view = _unit([1, 0, 0], [1, 0.3, 0]).mean(axis=0) + SKILL_VECTORS[1]
    assert np.allclose(index.views[0], view / np.linalg.norm(view), atol=1e-3)
    query = _unit([1, 0.05, 0.3])[0]
    got = with_examples(np.array([0, 1]), np.array([0.5, 0.2], np.float32), index, query)
    assert got.ids.tolist()[0] == 1 and got.matched[1] == 0  # "ask one" is the closest
    assert abs(float(got.scores[0]) - float(index.views[0] @ query)) < 1e-6


def test_a_skill_never_scores_below_its_description() -> None:
    index = example_index(("far away",), np.array([0]), np.array([False]), _unit([0, 1, 0]),
                          SKILL_VECTORS)
    query = SKILL_VECTORS[0]
    got = with_examples(np.array([0]), np.array([1.0], np.float32), index, query)
    assert got.ids.tolist() == [0] and abs(float(got.scores[0]) - 1.0) < 1e-6
    assert got.matched == {}


def test_a_closer_negative_pushes_the_skill_down() -> None:
    index = example_index(("don't",), np.array([0]), np.array([True]), _unit([1, 0, 0]),
                          SKILL_VECTORS)
    assert len(index.views) == 0  # no positive example: no example view
    query = _unit([1, 0.2, 0])[0]
    got = with_examples(np.array([0, 1]), np.array([0.5, 0.4], np.float32), index, query)
    assert got.ids.tolist() == [1, 0] and got.scores[1] < 0.5 and got.matched == {}


def test_best_cosines_reads_descriptions_and_example_views() -> None:
    skills = _unit([1, 0, 0])
    index = example_index(("p", "n"), np.array([0, 0]), np.array([False, True]),
                          _unit([0, 1, 0], [0, 0, 1]), skills)
    best = best_cosines(_unit([1, 1, 0], [0, 0, 1]), skills, index)
    assert np.allclose(best, [1.0, 0.0], atol=1e-6)


def test_calibration_is_a_quantile_and_refusal_needs_both_tests() -> None:
    calibration = gate.calibrate(np.linspace(0.0, 1.0, 101), catalog_requests=2)
    assert calibration is not None and abs(calibration.min_dense - 0.9) < 1e-9
    assert gate.Calibration.from_dict(calibration.to_dict()) == calibration
    assert gate.calibrate(np.array([])) is None
    assert gate.refuses(0.5, 0.5 + gate.MARGIN + 0.01, calibration)
    assert not gate.refuses(0.5, 0.5 + gate.MARGIN - 0.01, calibration)  # not closer enough
    assert not gate.refuses(0.95, 0.99, calibration)  # above the gate
    assert not gate.refuses(0.1, 0.9, None)


def test_the_two_retriever_test_refuses_only_what_neither_retriever_finds() -> None:
    calibration = gate.calibrate(np.linspace(0.0, 1.0, 101), lexical=np.linspace(0, 10, 101))
    assert calibration is not None
    assert abs(calibration.dense_low - 0.7) < 1e-6 and abs(calibration.lexical - 9.0) < 1e-6
    assert gate.Calibration.from_dict(calibration.to_dict()) == calibration
    far = 0.0  # no off-topic request is near: only the two-retriever test can refuse
    assert gate.refuses(0.6, far, calibration, lexical=5.0)
    assert not gate.refuses(0.6, far, calibration, lexical=9.5)  # BM25 finds its words
    assert not gate.refuses(0.75, far, calibration, lexical=1.0)  # near a skill in meaning
    assert not gate.refuses(0.6, far, calibration, lexical=None)  # BM25 not searched
    words_unknown = gate.calibrate(np.linspace(0.0, 1.0, 101))
    assert words_unknown is not None and words_unknown.lexical == 0.0
    assert not gate.refuses(0.6, far, words_unknown, lexical=1.0)  # older index: test off
    assert gate.Calibration.from_dict({"min_dense": 0.3}) == gate.Calibration(0.3, 0.9, 0, 0)


def test_example_modes_score_by_the_view_the_closest_example_or_both() -> None:
    skills = _unit([1, 0, 0], [0, 1, 0])
    # Skill 0 has two examples pulling different ways; its view is their mean with it.
    index = example_index(("a", "b"), np.array([0, 0]), np.array([False, False]),
                          _unit([0, 0, 1], [0, 1, 1]), skills)
    query = _unit([0, 0, 1])[0]
    ids, scores = np.array([0, 1]), np.array([0.0, 0.0], np.float32)
    view = with_examples(ids, scores, index, query, "view")
    closest = with_examples(ids, scores, index, query, "closest")
    both = with_examples(ids, scores, index, query, "both")
    by_id = {m: dict(zip(e.ids.tolist(), e.scores.tolist(), strict=True))
             for m, e in (("view", view), ("closest", closest), ("both", both))}
    assert abs(by_id["closest"][0] - 1.0) < 1e-6  # the example itself
    assert 0.3 < by_id["view"][0] < 0.9  # the view sits between the description and examples
    assert by_id["both"][0] == max(by_id["view"][0], by_id["closest"][0])
    assert closest.matched == {0: 0} and both.matched == {0: 0}
    # The gate reads the same evidence the mode scores with; negatives never count.
    negative = example_index(("n",), np.array([1]), np.array([True]), _unit([0, 0, 1]), skills)
    assert abs(best_cosines(query[None, :], skills, index, "closest")[0] - 1.0) < 1e-6
    assert best_cosines(query[None, :], skills, index, "view")[0] < 0.9
    assert best_cosines(query[None, :], skills, negative, "closest")[0] < 1e-6


def test_bundled_off_topic_requests_are_many_and_distinct() -> None:
    requests = gate.bundled_requests()
    assert len(requests) >= 300 and len(set(requests)) == len(requests)


def _skill(name: str, description: str) -> Skill:
    return Skill(name=name, description=description, location=f"/s/{name}/SKILL.md",
                 base_dir=f"/s/{name}", content_hash=description)


SKILLS = [_skill("pdf-tools", "Extracts tables from PDF files."),
          _skill("git-helper", "Writes git commit messages."),
          _skill("csv-stats", "Summarises CSV spreadsheets.")]
TAUGHT = Example("zebra quokka marmalade", ("csv-stats",))


def _engine(root: Path, skills: list[Skill], examples: list[Example]) -> Engine:
    build_index(skills, [], HashEmbedder(), root, examples=examples)
    return Engine.open(root, Config(), HashEmbedder())


def test_examples_route_and_removed_skills_lose_them(tmp_path: Path) -> None:
    engine = _engine(tmp_path, SKILLS, [TAUGHT])
    result = engine.explain(RouteQuery(message="zebra quokka marmalade"))
    assert next(s.name for s in result.skills if s.reason is Reason.RETRIEVED) == "csv-stats"
    assert result.candidates[0].matched_example == TAUGHT.query
    engine = _engine(tmp_path, SKILLS[:2], [TAUGHT])
    assert load_index(tmp_path).examples is None
    assert engine.info().example_count == 0
    assert all(s.name != "csv-stats" for s in engine.route(RouteQuery(message=TAUGHT.query))
               .skills)


def test_a_turn_neither_retriever_finds_gets_no_retrieved_skill() -> None:
    snap = snapshot_of(SKILLS)
    calibration = snap.calibration
    assert calibration is not None and calibration.dense_low <= calibration.min_dense
    assert calibration.lexical == 0.0  # most everyday requests share no word with these
    # The BM25 null is the quantile of the off-topic requests' best BM25 scores over the
    # catalog: a skill in everyday words lifts it.
    chatty = snapshot_of([*SKILLS, _skill("trivia", "Says what is good, what should be done, "
                                          "how many there are and what the world does best.")])
    best_words = [float(max(chatty.lexical.search(text, 1)[1], default=0.0))
                  for text in dict.fromkeys(gate.bundled_requests())]
    expected = round(float(np.quantile(best_words, gate.LEXICAL_QUANTILE)), 6)
    assert chatty.calibration is not None and chatty.calibration.lexical == expected > 0
    ask = RouteQuery(message="extracts tables from spreadsheets")

    def retrieved(dense_low: float, lexical: float) -> list[str]:
        # min_dense 0 turns the nearest-request test off: only the two-retriever test refuses.
        tuned = replace(calibration, min_dense=0.0, dense_low=dense_low, lexical=lexical)
        engine = Engine(replace(snap, calibration=tuned), Config(), HashEmbedder())
        return [s.name for s in engine.route(ask).skills if s.reason is Reason.RETRIEVED]

    assert retrieved(0.0, 0.0)  # both tests off
    assert retrieved(1.0, 1e6) == []  # under both nulls: refused
    assert retrieved(1.0, 1e-6)  # BM25 finds its words: routed
    assert retrieved(-1.0, 1e6)  # near a skill in meaning: routed


def test_the_gate_is_made_stricter_only_as_far_as_the_catalogs_requests_allow() -> None:
    null = np.linspace(0.0, 1.0, 101)  # quantiles 0.7 / 0.8 / 0.9 are 0.7 / 0.8 / 0.9
    base = gate.calibrate(null, lexical=np.linspace(0, 10, 101))
    assert base is not None and (base.margin, base.dense_quantile) == (0.3, 0.7)
    far, words = np.zeros(200), np.zeros(200)  # no off-topic request near; no word found

    def fitted(best: np.ndarray) -> tuple[float, float]:
        got = gate.fit_to_catalog(base, null, [(best, far, words)])
        assert gate.Calibration.from_dict(got.to_dict()) == got
        return got.dense_quantile, got.margin

    assert fitted(np.full(200, 0.95)) == (0.9, 0.1)  # every on-topic request scores high
    # One request the strictest would refuse: the two-retriever test goes up to 0.8 only.
    assert fitted(np.r_[np.full(199, 0.95), np.full(1, 0.85)]) == (0.8, 0.2)
    assert fitted(np.r_[np.full(199, 0.95), np.full(1, 0.75)]) == (0.7, 0.3)
    # Requests the defaults refuse already do not hold the gate back.
    assert fitted(np.r_[np.full(199, 0.95), np.full(1, 0.5)]) == (0.9, 0.1)
    assert gate.fit_to_catalog(base, null, [(np.zeros(0), np.zeros(0), np.zeros(0))]) == base
    # Every evidence must allow it: scored without examples, a request may sit lower.
    high, low = np.full(200, 0.95), np.r_[np.full(199, 0.95), np.full(1, 0.75)]
    assert gate.fit_to_catalog(base, null, [(high, far, words), (low, far, words)]) == base
    # The margin moves the nearest-request test: a request 0.15 closer to an off-topic request
    # than to any skill, under the gate, is refused at margin 0.1, not at 0.3.
    strict = replace(base, margin=0.1)
    assert gate.refuses(0.5, 0.65, strict) and not gate.refuses(0.5, 0.65, base)


def test_a_build_with_examples_keeps_its_zero_shot_gate(tmp_path: Path) -> None:
    build_index(SKILLS, [], HashEmbedder(), tmp_path / "plain")
    assert load_index(tmp_path / "plain").zero_shot is None  # its gate is the zero-shot one
    build_index(SKILLS, [], HashEmbedder(), tmp_path / "taught", examples=[TAUGHT])
    plain, taught = load_index(tmp_path / "plain"), load_index(tmp_path / "taught")
    zero_shot = taught.zero_shot
    assert zero_shot is not None
    # Calibrated on the descriptions alone: the gate the catalog has without examples.
    assert zero_shot.calibration == plain.calibration
    assert plain.off_topic is not None
    assert np.allclose(zero_shot.nearest, plain.off_topic)
    assert -1.0 < zero_shot.taught < 1.0  # no off-topic request repeats the taught one
    only_negative = [Example("chit chat", ())]  # an off-topic example teaches no skill
    build_index(SKILLS, [], HashEmbedder(), tmp_path / "negative", examples=only_negative)
    negative = load_index(tmp_path / "negative").zero_shot
    assert negative is None or negative.taught == 2.0  # nothing is close to a taught request


def test_learning_does_not_open_the_gate_to_what_it_did_not_teach() -> None:
    snap = snapshot_of(SKILLS, examples=[TAUGHT])
    assert snap.calibration is not None and snap.zero_shot is not None
    # The examples' gate lets every turn through; the zero-shot one refuses every turn its
    # two-retriever test sees (under both nulls) unless it is a taught request.
    open_gate = replace(snap.calibration, min_dense=0.0, dense_low=0.0, lexical=0.0)
    shut = replace(snap.calibration, min_dense=0.0, dense_low=1.5, lexical=1e6)

    def retrieved(message: str, taught: float) -> list[str]:
        zero_shot = gate.ZeroShotGate(shut, snap.zero_shot.nearest, taught)
        engine = Engine(replace(snap, calibration=open_gate, zero_shot=zero_shot), Config(),
                        HashEmbedder())
        return [s.name for s in engine.route(RouteQuery(message=message)).skills
                if s.reason is Reason.RETRIEVED]

    # closer than off-topic ones: let through, the taught skill first
    assert retrieved(TAUGHT.query, taught=0.99)[:1] == ["csv-stats"]
    assert retrieved(TAUGHT.query, taught=1.01) == []  # not closer: the zero-shot gate holds
    assert retrieved("zebra quokka summarises spreadsheets", taught=1.01) == []


def test_the_zero_shot_gate_lets_taught_requests_through() -> None:
    calibration = gate.calibrate(np.linspace(0.0, 1.0, 101), lexical=np.linspace(0, 10, 101))
    assert calibration is not None
    zero_shot = gate.ZeroShotGate(calibration, np.zeros((0, 2), dtype=np.float32), 0.6)
    views = _unit([1.0, 0.0])
    why = zero_shot.refusal(0.1, 0.59, views, 0.0)  # under both nulls, no taught request near
    assert why.startswith("the catalog's gate without examples") and "0.590 < 0.600" in why
    assert zero_shot.refusal(0.1, 0.6, views, 0.0) == ""  # as close as no off-topic request is
    assert zero_shot.refusal(0.95, -1.0, views, 0.0) == ""  # its descriptions reach it
    assert zero_shot.to_dict()["taught"] == 0.6
    assert gate.Calibration.from_dict(zero_shot.to_dict()) == calibration


def test_the_refusal_in_words_is_the_vectorised_test() -> None:
    calibration = gate.calibrate(np.linspace(0.0, 1.0, 101), lexical=np.linspace(0, 10, 101))
    assert calibration is not None
    rng = np.random.default_rng(3)
    best, near, words = rng.uniform(0, 1, 500), rng.uniform(0, 1.2, 500), rng.uniform(0, 12, 500)
    vectorised = gate.refused(calibration, best, near, words)
    said = [gate.refusal(b, n, calibration, w) for b, n, w in zip(best, near, words, strict=True)]
    assert [bool(s) for s in said] == vectorised.tolist() and 0 < vectorised.sum() < 500
    assert any(s.startswith("best cosine") for s in said)  # the nearest-request test
    assert any(s.startswith("neither retriever") for s in said)  # the two-retriever test
    assert gate.refusal(0.1, 0.9, None) == ""  # no calibration: no refusal


def test_explain_names_the_configured_floor_when_it_refuses() -> None:
    from router.routing.fusion import FusionConfig

    uncalibrated = replace(snapshot_of(SKILLS), calibration=None, off_topic=None)
    ask = RouteQuery(message="extracts tables from spreadsheets")

    def explained(floor: float) -> tuple[list[str], str]:
        engine = Engine(uncalibrated, Config(), HashEmbedder(), FusionConfig(min_dense=floor))
        result = engine.explain(ask)
        return [s.name for s in result.skills if s.reason is Reason.RETRIEVED], result.refused

    routed, why = explained(0.01)
    assert routed and why == ""
    routed, why = explained(0.999)
    assert routed == [] and why.startswith("best cosine ") and "configured floor" in why
