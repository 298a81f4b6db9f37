"""Candidate runs of encoder fine-tuning: beside the plain run, each option of
``OPTIONS`` may train one more run on the same training pairs, judged against the base model on
the same held-out fold. The best candidate is kept only when its held-out recall@5 (then its
MRR@10) is higher than the plain run's (``prefer``: a tie keeps the plain run); the adoption
rule against the base model is then the usual one (``judge.judge``).

Each option is ``off`` (no run), ``auto`` (a run only when the pair bound leaves room for it
beside the runs planned before it: the pairs presented by all runs together within the bound;
always on a GPU, which has none) or ``always`` (a run whatever the bound). The options, in the
order they are planned:

- ``hard_negatives``: the closest wrong skills mined from the catalog (``negatives.mine``);
- ``second_epoch``: the plain run continued for one more epoch (its cost: one epoch of pairs);
- ``passed_over_negatives``: the skills a turn showed beside the one activated, passed over for
  it, as weak negatives of the traffic requests' pairs (``negatives.passed_over``).

Each option not off gets a record under its key in the manifest's ``fine_tune`` entry
(``summary``): ``mode``, ``tried``, ``won``, ``why``, and when tried both runs' held-out
figures, steps and seconds (``plain_*`` and ``<label>_*``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from router.builder.fine_tune import judge
from router.config import CANDIDATE_KEYS, CANDIDATE_MODES
from router.encoders.base import Embedder
from router.encoders.training import Pair, Trained, TrainSettings
from router.errors import InvalidRequest
from router.index.vectors import embedding_text, text_key
from router.skills.model import Skill

MODES = CANDIDATE_MODES
HARD_NEGATIVES, SECOND_EPOCH, PASSED_OVER = CANDIDATE_KEYS  # the index config keys


@dataclass(frozen=True)
class Option:
    key: str  # the index config key and the record's key in the ``fine_tune`` entry
    label: str  # the run's name in the record (``<label>_held_out``, ...)
    words: str  # the run in words: "the run trained with <words>"
    empty: str  # why no run when its pairs cannot be made


OPTIONS = (Option(HARD_NEGATIVES, "mined", "mined hard negatives", "no wrong skill"),
           Option(SECOND_EPOCH, "two_epochs", "a second epoch", "no pairs"),
           Option(PASSED_OVER, "passed_over", "passed-over negatives",
                  "no training request has a passed-over skill"))


def check_mode(key: str, mode: str) -> str:
    if mode not in MODES:
        raise InvalidRequest(f"{key} must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def hashed(settings: Mapping[str, Any], modes: Mapping[str, str]) -> dict[str, Any]:
    """The fine-tune hash's settings: each option's mode joins them unless off (so the hash of
    a build with every option off is the one of before)."""
    return {**settings, **{key: mode for key, mode in modes.items() if mode != "off"}}


@dataclass(frozen=True)
class Candidate:
    """One option's run: its training pairs (empty: not trained) and why (or why not)."""

    option: Option
    mode: str
    why: str
    pairs: Sequence[Pair] = ()

    @property
    def resume(self) -> bool:
        """Continue the plain run for one more epoch instead of training a fresh copy."""
        return self.option.key == SECOND_EPOCH


def room(mode: str, used: int, cost: int, bound: int | None) -> tuple[bool, str]:
    """Whether a run of ``cost`` pairs presented is trained beside runs that present ``used``
    under a bound of ``bound`` pairs presented (None: no bound), and why (or why not)."""
    if mode == "off":
        return False, "off"
    if mode == "always":
        return True, "always: trained whatever the pair bound"
    if bound is None:
        return True, "no pair bound on this device: room for it"
    shown = f"{used:,} + {cost:,} pairs presented"
    if used + cost <= bound:
        return True, f"room for it: {shown} within the bound of {bound:,}"
    return False, f"no room for it: {shown} over the bound of {bound:,}"


def plan(modes: Mapping[str, str], pairs: Sequence[Pair], epochs: int, bound: int | None,
         make: Mapping[str, Callable[[], Sequence[Pair]]], held: bool) -> list[Candidate]:
    """The candidate runs of the options not off, in ``OPTIONS`` order: each within the room
    the runs before it left (the plain run presents ``pairs`` x ``epochs``); ``make[key]()``
    makes an option's pairs, only when it has room (mining costs an embedding of the
    catalog); none without held-out requests (``held`` False) to judge them."""
    used = len(pairs) * max(1, epochs)
    out = []
    for option in OPTIONS:
        mode = modes.get(option.key, "off")
        if mode == "off":
            continue
        cost = len(pairs) if option.key == SECOND_EPOCH else len(pairs) * max(1, epochs)
        fits, why = room(mode, used, cost, bound)
        run = make[option.key]() if fits and held else ()
        if fits and not run:
            why = option.empty if held else "no held-out requests to judge it"
        used += cost if run else 0
        out.append(Candidate(option, mode, why, run))
    return out


def figure(held_out: Mapping[str, Any]) -> tuple[float, float]:
    """A run's held-out figure: its recall@5, then its MRR@10."""
    return float(held_out["tuned_recall_at_5"]), float(held_out["tuned_mrr_at_10"])


def prefer(plain: Mapping[str, Any], other: Mapping[str, Any],
           words: str) -> tuple[bool, str]:
    """Whether a candidate run beats the plain run: only when its held-out figure is higher;
    a tie keeps the plain run. ``words`` name the candidate in the verdict."""
    first, second = figure(plain), figure(other)
    shown = (f"held-out recall@5 / MRR@10 {second[0]:.3f} / {second[1]:.3f} with {words}, "
             f"{first[0]:.3f} / {first[1]:.3f} without")
    if second > first:
        return True, f"{words} won: {shown}"
    return False, f"{words} did not win: {shown}"


def summary(planned: Sequence[Candidate], runs: Sequence[Trained],
            figures: Sequence[Mapping[str, Any]]) -> tuple[int, dict[str, Any]]:
    """The run kept (0: the plain run; i: the i-th run trained) and each option's record.
    ``runs`` and ``figures``: the plain run's, then those of the candidates trained, in order
    (``figures`` empty when nothing was held out: the plain run is kept)."""
    records: dict[str, Any] = {}
    tried = [c for c in planned if c.pairs]
    beat: dict[int, tuple[float, float]] = {}
    verdicts: dict[int, str] = {}
    for i, candidate in enumerate(tried, start=1):
        if len(figures) > i:
            won, verdicts[i] = prefer(figures[0], figures[i], candidate.option.words)
            if won:
                beat[i] = figure(figures[i])
    kept = max(beat, key=lambda i: (beat[i], -i)) if beat else 0  # equal figures: the first
    for candidate in planned:
        record: dict[str, Any] = {"mode": candidate.mode, "tried": bool(candidate.pairs),
                                  "won": False, "why": candidate.why}
        records[candidate.option.key] = record
        if not candidate.pairs:
            continue
        i = tried.index(candidate) + 1
        label = candidate.option.label
        record.update(plain_steps=runs[0].steps, plain_train_seconds=round(runs[0].seconds, 1),
                      **{f"{label}_steps": runs[i].steps,
                         f"{label}_train_seconds": round(runs[i].seconds, 1)})
        if i in verdicts:
            record.update(won=i == kept, why=f"{candidate.why}; {verdicts[i]}",
                          plain_held_out=dict(figures[0]), **{f"{label}_held_out":
                                                              dict(figures[i])})
        if i in beat and i != kept:
            record["why"] += f" (but {tried[kept - 1].option.words} did better)"
    return kept, records


def train(run: Callable[..., Trained], pairs: Sequence[Pair], tried: Sequence[Candidate],
          settings: TrainSettings, first_step: Callable[[int], None]) -> list[Trained]:
    """The plain run (``first_step`` after each of its steps), then each candidate tried; the
    second epoch continues the plain run (``router.encoders.training.train``'s ``resume``).
    ``run(pairs, settings, **more)`` trains."""
    runs = [run(pairs, settings, on_step=first_step)]
    for candidate in tried:
        if candidate.resume:
            runs.append(run(candidate.pairs, replace(settings, epochs=settings.epochs + 1),
                            resume=runs[0]))
        else:
            runs.append(run(candidate.pairs, settings))
    return runs


def judge_runs(skills: Sequence[Skill], base: Embedder, tuned: Sequence[Embedder],
               held: Sequence[Pair], root: Path | None, progress: bool,
               seed: Mapping[str, np.ndarray],
               ) -> list[tuple[judge.Verdict, dict[str, Any], dict[str, np.ndarray]]]:
    """Each run against the base model on the held-out requests (``judge.compare``); the
    catalog is embedded with the base model once (the runs share one model id, so only the
    base model's vectors carry from one to the next)."""
    out = []
    known = dict(seed)
    ours = {text_key(base.model_id, embedding_text(s)) for s in skills}
    for candidate in tuned:
        out.append(judge.compare(skills, base, candidate, held, root, progress, known))
        known.update({k: v for k, v in out[-1][2].items() if k in ours})
    return out
