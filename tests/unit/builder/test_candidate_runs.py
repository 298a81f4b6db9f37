"""Candidate runs of encoder fine-tuning (router.builder.fine_tune.candidates) with fake models:
a second epoch and traffic's passed-over skills as weak negatives, each kept only when it
beats the plain run on the held-out requests, within the pair bound, recorded in the manifest,
in the fine-tune hash only when on, and the same on every build of the same inputs."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from router.builder.fine_tune import candidates, judge, negatives
from router.builder.fine_tune.stage import Options, options_for
from router.builder.inputs import Stages
from router.builder.version import build_index
from router.config import IndexConfig
from router.encoders.training import Pair, Trained, TrainRun, TrainSettings, batches
from router.errors import InvalidRequest
from router.examples.model import Example, ExampleSource, query_key
from router.index.vectors import embedding_text
from router.index.versions.layout import read_manifest
from tests.support.fine_tune import FakeModel, base_embedder, catalog, examples


class RunTrainer:
    """The ``kinds[i]`` fake model for the i-th run trained (0: the plain run); records each
    run's pairs, settings and the run it resumed."""

    def __init__(self, *kinds: str) -> None:
        self.kinds = kinds
        self.calls: list[tuple[list[Pair], TrainSettings, Trained | None]] = []

    def __call__(self, base: str, pairs: Sequence[Pair], settings: TrainSettings,
                 how: TrainRun, *, on_step: Callable[[int], None] | None = None,
                 resume: Trained | None = None) -> Trained:
        kind = self.kinds[len(self.calls)]
        self.calls.append((list(pairs), settings, resume))
        steps = 3 * settings.epochs  # a resumed run counts the steps of the run it continues
        return Trained(FakeModel(kind), steps, steps, len(pairs) * settings.epochs, 0.01,
                       settings.epochs)


def traffic(per_skill: int = 8) -> list[Example]:
    """The fake catalog's examples as learned from traffic: each turn showed the next skill
    beside the one activated."""
    return [replace(e, source=ExampleSource.TRAFFIC, origin="traffic",
                    passed_over=(f"tool-{(int(e.skills[0].split('-')[1]) + 1) % 16}",))
            for e in examples(per_skill)]


def _build(root: Path, trainer: RunTrainer, given: Sequence[Example] | None = None,
           **options: Any) -> dict[str, Any]:
    chosen = Options(mode="auto", min_requests=40, trainer=trainer,
                     device=options.pop("device", "cpu"), **options)
    info = build_index(catalog(), [], base_embedder(), root,
                       examples=examples() if given is None else given,
                       stages=Stages(fine_tune=chosen))
    return read_manifest(Path(info.path))


def test_a_second_epoch_that_wins_is_kept(tmp_path: Path) -> None:
    trainer = RunTrainer("bad", "good")
    manifest = _build(tmp_path, trainer, second_epoch="always")
    record = manifest["fine_tune"]
    (plain, _, none), (again, longer, resumed) = trainer.calls
    assert none is None and again == plain  # the same pairs, continued
    assert longer.epochs == 2 and resumed is not None and resumed.epochs == 1
    second = record["second_epoch"]
    assert second["tried"] is True and second["won"] is True
    assert candidates.figure(second["two_epochs_held_out"]) > candidates.figure(
        second["plain_held_out"])
    assert record["adopted"] is True and record["run"] == "two_epochs"
    assert record["epochs"] == 2 and record["steps"] == second["two_epochs_steps"] == 6
    assert record["held_out"] == second["two_epochs_held_out"]
    assert "a second epoch" in record["why"] and record["settings"]["second_epoch"] == "always"


def test_a_second_epoch_that_loses_or_ties_keeps_the_plain_run(tmp_path: Path) -> None:
    for name, kinds in (("loses", ("good", "bad")), ("ties", ("good", "good"))):
        manifest = _build(tmp_path / name, RunTrainer(*kinds), second_epoch="always")
        record = manifest["fine_tune"]
        second = record["second_epoch"]
        assert second["tried"] is True and second["won"] is False
        assert record["run"] == "plain" and record["epochs"] == 1 and record["steps"] == 3
        assert record["held_out"] == second["plain_held_out"] and record["adopted"] is True
        assert "second epoch" not in record["why"]


def test_auto_tries_a_second_epoch_only_within_the_pair_bound(tmp_path: Path) -> None:
    roomy = RunTrainer("bad", "good")
    record = _build(tmp_path / "roomy", roomy, second_epoch="auto")["fine_tune"]
    pairs = record["pairs"]
    assert len(roomy.calls) == 2 and record["second_epoch"]["why"].startswith(
        f"room for it: {pairs} + {pairs} pairs presented within the bound of 2,000")
    tight = RunTrainer("good", "good")
    bound = 2 * pairs - 1  # the plain run's pairs fit, not one more epoch of them
    record = _build(tmp_path / "tight", tight, second_epoch="auto",
                    cpu_max_pairs=bound)["fine_tune"]
    assert len(tight.calls) == 1 and record["second_epoch"]["tried"] is False
    assert record["second_epoch"]["why"].startswith("no room for it")
    gpu = RunTrainer("good", "good")
    record = _build(tmp_path / "gpu", gpu, second_epoch="auto", cpu_max_pairs=bound,
                    device="cuda")["fine_tune"]
    assert len(gpu.calls) == 2 and record["second_epoch"]["tried"] is True  # no bound


def test_the_room_is_shared_by_the_candidates_in_order(tmp_path: Path) -> None:
    trainer = RunTrainer("good", "good", "good")
    probe = _build(tmp_path / "probe", RunTrainer("good"))["fine_tune"]
    bound = 2 * probe["pairs"]  # room for one candidate beside the plain run
    record = _build(tmp_path / "shared", trainer, given=traffic(), cpu_max_pairs=bound,
                    hard_negatives="auto", second_epoch="auto",
                    passed_over_negatives="auto")["fine_tune"]
    assert len(trainer.calls) == 2 and all(p.negative for p in trainer.calls[1][0])
    assert record["hard_negatives"]["tried"] is True
    assert record["second_epoch"]["why"].startswith("no room for it")
    assert record["passed_over_negatives"]["why"].startswith("no room for it")


def test_passed_over_skills_reach_the_training_pairs_as_negatives() -> None:
    given = [*traffic(), Example("please restart the purple thing", ("tool-0",),
                                 passed_over=("tool-0", "tool-5"))]  # its right skill too
    pairs = judge.training_pairs(catalog(), given)
    train, _ = judge.split(pairs, None)
    weak = negatives.passed_over(catalog(), train, pairs, given)
    assert negatives.passed_over(catalog(), list(reversed(train)), pairs, given) == list(
        reversed(weak))  # a pair's negative depends on the pair alone
    skills = {s.key: s for s in catalog()}
    by_query = {query_key(e.query): e for e in given}
    for original, pair in zip(train, weak, strict=True):
        assert (pair.query, pair.skill, pair.document) == (
            original.query, original.skill, original.document)
        example = by_query[query_key(pair.query)]
        assert pair.negative_skill in example.passed_over
        assert pair.negative_skill not in example.skills  # never a right skill
        assert pair.negative == embedding_text(skills[pair.negative_skill])
    assert negatives.passed_over(catalog(), train, pairs, examples()) == []  # none passed over


def test_only_traffic_pairs_get_a_weak_negative_and_batches_keep_them_apart() -> None:
    curated = examples(4)
    given = [*curated, *traffic(4)[::2]]
    pairs = judge.training_pairs(catalog(), given)
    weak = negatives.passed_over(catalog(), pairs, pairs, given)
    with_one = {query_key(e.query) for e in given if e.passed_over}
    assert {query_key(p.query) for p in weak if p.negative} == with_one
    assert any(not p.negative for p in weak)
    for batch in batches(weak, 8, 2, seed=0):
        assert len({bool(weak[i].negative) for i in batch}) == 1
        seen = [s for i in batch for s in {weak[i].skill, weak[i].negative_skill} - {""}]
        assert len(seen) == len(set(seen))


def test_passed_over_negatives_are_kept_only_when_they_win(tmp_path: Path) -> None:
    won = RunTrainer("bad", "good")
    record = _build(tmp_path / "won", won, given=traffic(),
                    passed_over_negatives="always")["fine_tune"]
    weak = won.calls[1][0]
    assert [p.negative_skill for p in weak] == [
        f"tool-{(int(p.skill.split('-')[1]) + 1) % 16}" for p in weak]
    passed = record["passed_over_negatives"]
    assert passed["tried"] is True and passed["won"] is True and record["run"] == "passed_over"
    assert record["held_out"] == passed["passed_over_held_out"]
    assert "passed-over negatives" in record["why"]
    lost = RunTrainer("good", "bad")
    record = _build(tmp_path / "lost", lost, given=traffic(),
                    passed_over_negatives="always")["fine_tune"]
    assert record["passed_over_negatives"]["won"] is False and record["run"] == "plain"
    assert record["held_out"] == record["passed_over_negatives"]["plain_held_out"]
    none = RunTrainer("good")
    record = _build(tmp_path / "none", none, passed_over_negatives="always")["fine_tune"]
    assert len(none.calls) == 1 and record["passed_over_negatives"] == {
        "mode": "always", "tried": False, "won": False,
        "why": "no training request has a passed-over skill"}


def test_the_best_of_two_winning_candidates_is_kept() -> None:
    plain = {"tuned_recall_at_5": 0.5, "tuned_mrr_at_10": 0.5}
    better = {"tuned_recall_at_5": 0.6, "tuned_mrr_at_10": 0.5}
    best = {"tuned_recall_at_5": 0.6, "tuned_mrr_at_10": 0.7}
    planned = [candidates.Candidate(option, "always", "always", [Pair("q", "d", "s")])
               for option in candidates.OPTIONS[1:]]
    runs = [Trained(None, 1, 1, 1, 0.0)] * 3
    kept, records = candidates.summary(planned, runs, [plain, better, best])
    assert kept == 2 and records["passed_over_negatives"]["won"] is True
    assert records["second_epoch"]["won"] is False
    assert records["second_epoch"]["why"].endswith("(but passed-over negatives did better)")
    kept, _ = candidates.summary(planned, runs, [plain, best, best])  # a tie: the first
    assert kept == 1


def test_the_hash_is_that_of_before_when_every_option_is_off(tmp_path: Path) -> None:
    record = _build(tmp_path / "off", RunTrainer("good"))["fine_tune"]
    pairs = judge.training_pairs(catalog(), examples())
    train, held = judge.split(pairs, 2000)
    assert "run" not in record and "second_epoch" not in record
    assert record["settings"] == TrainSettings().to_dict()
    assert record["hash"] == judge.fine_tune_hash("fake-base", train, held,
                                                  TrainSettings().to_dict())
    on = _build(tmp_path / "on", RunTrainer("good", "good"), second_epoch="always")
    assert on["fine_tune"]["hash"] != record["hash"]


def test_the_same_inputs_give_the_same_runs_and_record(tmp_path: Path) -> None:
    seen = []
    for name in ("one", "two"):
        trainer = RunTrainer("bad", "good", "good")
        record = _build(tmp_path / name, trainer, given=traffic(), second_epoch="always",
                        passed_over_negatives="always")["fine_tune"]
        calls = [(pairs, settings, None if r is None else r.steps)
                 for pairs, settings, r in trainer.calls]
        kept = {k: v for k, v in record.items() if k not in ("train_seconds",)}
        seen.append((calls, kept))
    assert seen[0] == seen[1]
    assert seen[0][1]["run"] == "two_epochs"  # equal figures: the first candidate


def test_modes_are_checked_and_reach_the_options() -> None:
    with pytest.raises(InvalidRequest):
        Options(second_epoch="twice")
    with pytest.raises(InvalidRequest):
        IndexConfig(passed_over_negatives="sometimes")
    chosen = options_for(IndexConfig(second_epoch="auto", passed_over_negatives="always"))
    assert (chosen.second_epoch, chosen.passed_over_negatives) == ("auto", "always")
    assert IndexConfig().second_epoch == IndexConfig().passed_over_negatives == "off"


def test_info_shows_the_fine_tune_entry_with_its_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from router.cli import main

    record = _build(tmp_path, RunTrainer("bad", "good"), second_epoch="always")["fine_tune"]
    capsys.readouterr()
    assert main(["info", "--index", str(tmp_path)]) == 0
    shown = json.loads(capsys.readouterr().out)["fine_tune"]
    assert shown == record and shown["second_epoch"]["won"] is True
