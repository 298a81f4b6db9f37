"""Encoder fine-tuning per catalog, the build stage: it may replace the base embedding model
with a copy fine-tuned on the catalog's example requests (always called *encoder fine-tuning*,
to keep it apart from the fit of the routing settings, ``router.calibration.settings_fit``).

``index.fine_tune_encoder`` (``--fine-tune-encoder``): ``off`` never tunes; ``auto`` (the
default) tunes when the examples hold at least ``MIN_REQUESTS`` distinct positive requests and
adopts the tuned model only when it wins on the held-out requests (``judge.judge``);
``on`` tunes whenever there is any positive example and adopts the result whatever the
held-out figures say (they are still measured and recorded when there is a held-out fold).

Pairs are (request -> skill document) from the positive example rows; one request in five (by
hashed text) is held out, and the model trained on the rest is the one adopted (no second
training). The work is bounded by pairs, never by time: on a CPU at most ``CPU_MAX_PAIRS``
pairs in all (pairs x epochs; a fixed hash-ordered sample beyond), every planned step run, so
the same inputs give the same pairs, steps and model on any CPU, however busy; a GPU has no
bound. Candidate runs (``index.hard_negatives``, ``second_epoch``, ``passed_over_negatives``)
are kept only when they beat the plain run on the held-out requests (``candidates``). A Reindex
with the current version's fine-tune hash reuses its ``encoder/`` (or refusal); the stored
encoder's folder: ``stored``. The requests the adopted model trained on are handed on
(``Outcome.trained``): the settings fit must not judge on them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from router.builder.fine_tune import candidates, judge, negatives
from router.common.checkpoints import checkpoint
from router.config import FINE_TUNE_MODES, IndexConfig
from router.encoders.base import Embedder
from router.encoders.training import Pair, Trained, TrainSettings
from router.errors import IndexUnavailable, InvalidRequest
from router.examples.model import Example, query_key
from router.index.versions.encoder import ENCODER_DIR, base_of, encoder_problem, is_tuned, tuned_id
from router.index.versions.layout import VERSIONS, current_version, read_manifest
from router.skills.model import Skill

log = logging.getLogger(__name__)

MODES = FINE_TUNE_MODES
MIN_REQUESTS = 100  # distinct positive requests before ``auto`` tunes
# pairs presented at most on a CPU (pairs x epochs; a hash-ordered sample beyond): 2,000 pairs,
# 63 steps, trained in 238-294 s on 2 shared cores, so a build with 3,000 example rows stays
# under 10 minutes (484 s measured: docs/routing-quality.md)
CPU_MAX_PAIRS = 2000
RECORD = "fine_tune"  # the manifest key
PAUSE_POINT = "fine-tuning"  # checkpoint after the first training step (kill tests)

Trainer = Callable[..., Trained]


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise InvalidRequest(f"fine_tune_encoder must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


@dataclass(frozen=True)
class Options:
    """How a build fine-tunes its encoder. ``device`` None: CUDA when torch sees one; ``threads``:
    torch's CPU threads while training (half the cores: ``router.encoders.training``);
    ``cpu_max_pairs``: pairs x epochs at most on a CPU, ``gpu_max_pairs`` on a GPU (None: all)."""

    mode: str = "off"
    device: str | None = None
    min_requests: int = MIN_REQUESTS
    cpu_max_pairs: int = CPU_MAX_PAIRS
    gpu_max_pairs: int | None = None
    settings: TrainSettings = field(default_factory=TrainSettings)
    threads: int = field(default_factory=lambda: max(1, (os.cpu_count() or 2) // 2))
    trainer: Trainer | None = None  # default: router.encoders.training.train
    hard_negatives: str = "off"  # the candidate runs' modes (``candidates.OPTIONS``)
    second_epoch: str = "off"
    passed_over_negatives: str = "off"

    def __post_init__(self) -> None:
        check_mode(self.mode)
        for key, mode in self.candidate_modes().items():
            candidates.check_mode(key, mode)

    def candidate_modes(self) -> dict[str, str]:
        return {option.key: getattr(self, option.key) for option in candidates.OPTIONS}

    def hashed_settings(self) -> dict[str, Any]:
        """The hyper-parameters in the fine-tune hash (with each candidate's mode unless off)."""
        return candidates.hashed(self.settings.to_dict(), self.candidate_modes())


def options_for(config: IndexConfig, device: str | None = None) -> Options:
    """The fine-tuning a build does under ``config`` (``index.fine_tune_encoder``)."""
    return Options(mode=config.fine_tune_encoder, device=device,
                   **{option.key: getattr(config, option.key) for option in candidates.OPTIONS})


@dataclass(frozen=True)
class Outcome:
    """The embedder the build uses, its manifest record, the encoder folder to store (None: the
    base model), skill embeddings made (``text_key`` keyed), the requests trained on."""

    embedder: Embedder
    record: dict[str, Any] | None = None
    source: Path | None = None
    known: Mapping[str, np.ndarray] = field(default_factory=dict)
    trained: frozenset[str] = frozenset()


def pair_bound(options: Options, device: str) -> int | None:
    """Training pairs at most on ``device`` (None: no bound): the pairs presented in all
    (``cpu_max_pairs`` or ``gpu_max_pairs``) over the epochs."""
    total = options.cpu_max_pairs if device == "cpu" else options.gpu_max_pairs
    return None if total is None else max(1, total // max(1, options.settings.epochs))


def tunable(embedder: Embedder) -> bool:
    """A sentence-transformers model (on torch or its ONNX export); not the hash embedder."""
    from router.encoders.onnx import OnnxEmbedder
    from router.encoders.sentence import SentenceTransformerEmbedder

    return isinstance(embedder, SentenceTransformerEmbedder | OnnxEmbedder)


def base_embedder(embedder: Embedder) -> Embedder:
    """``embedder`` when it is a base model, else its base model on sentence-transformers."""
    if not is_tuned(embedder.model_id):
        return embedder
    from router.encoders.sentence import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(base_of(embedder.model_id))


class Place(NamedTuple):
    """Where a build fine-tunes (an adopted model is saved into ``staging``); ``reuse`` False:
    no embedding is taken from the current version (a full or repairing build)."""

    root: Path
    staging: Path
    reuse: bool = True


def stage(skills: Sequence[Skill], examples: Sequence[Example], embedder: Embedder,
          options: Options, place: Place, *, progress: bool = False) -> Outcome:
    """Decide, reuse or train; a tuned model adopted is saved into ``place.staging``."""
    if options.mode == "off" or not tunable(embedder):
        why = "off" if options.mode == "off" else f"{embedder.model_id} cannot be fine-tuned"
        record = None if options.mode == "off" else _record(options, False, why)
        return Outcome(base_embedder(embedder) if tunable(embedder) else embedder, record)
    base = base_embedder(embedder)
    pairs = judge.training_pairs(skills, examples)
    requests = len({query_key(p.query) for p in pairs})
    if not pairs or (options.mode == "auto" and requests < options.min_requests):
        why = (f"{requests} distinct example requests; auto tunes from {options.min_requests}"
               if pairs else "no example requests")
        return Outcome(base, _record(options, False, why, base=base.model_id))
    from router.encoders import training
    device = options.device or training.default_device()
    bound = pair_bound(options, device)
    train_pairs, held = judge.split(pairs, bound)
    if not train_pairs or not held:  # too few to hold any out ("on" only): train on all
        train_pairs, held = judge.sample(pairs, bound), []
    seed: dict[str, np.ndarray] = {}
    make = {candidates.HARD_NEGATIVES: lambda: negatives.mine(skills, train_pairs, pairs, base,
                                                              seed),
            candidates.SECOND_EPOCH: lambda: train_pairs,
            candidates.PASSED_OVER: lambda: negatives.passed_over(skills, train_pairs, pairs,
                                                                  examples)}
    total = options.cpu_max_pairs if device == "cpu" else options.gpu_max_pairs
    planned = candidates.plan(options.candidate_modes(), train_pairs, options.settings.epochs,
                              total, make, bool(held))
    digest = judge.fine_tune_hash(base.model_id, train_pairs, held, options.hashed_settings(),
                                  [c.pairs for c in planned if c.pairs])
    reused = _reuse(place.root, digest, options, embedder)
    if reused is None:
        reused = _tune(skills, base, _Split(train_pairs, held, digest, planned, seed), place,
                       options, device, progress)
    if not (reused.record or {}).get("adopted"):
        return reused
    return replace(reused, trained=frozenset(query_key(p.query) for p in train_pairs))


def _record(options: Options, adopted: bool, why: str, **more: Any) -> dict[str, Any]:
    return {"mode": options.mode, "adopted": adopted, "why": why, **more}


def _reuse(root: Path, digest: str, options: Options, embedder: Embedder) -> Outcome | None:
    """The current version's encoder fine-tuning when its hash is ``digest``: its encoder when
    adopted, its refusal under ``auto``; None when it must be done again."""
    try:
        folder = root / VERSIONS / current_version(root)
        manifest = read_manifest(folder)
    except (IndexUnavailable, OSError, ValueError):
        return None
    previous = manifest.get(RECORD)
    if not isinstance(previous, dict) or previous.get("hash") != digest:
        return None
    record = {**previous, "mode": options.mode, "reused_from": folder.name}
    held = previous.get("held_out")
    won = isinstance(held, dict) and bool(held.get("won"))
    if previous.get("adopted") and (options.mode == "on" or won):  # auto: only a winner
        model = tuned_id(str(previous.get("base")), digest)
        if manifest.get("model") != model or encoder_problem(folder) is not None:
            return None
        log.info("encoder fine-tuning unchanged: reusing %s from %s", model, folder.name)
        return Outcome(_tuned_embedder(model, embedder, folder), record, folder / ENCODER_DIR)
    if options.mode == "auto" and held:
        record.update(adopted=False, why=f"no clear gain on held-out requests (judged by "
                                         f"{folder.name}'s build)" if not won else record["why"])
        log.info("encoder fine-tuning unchanged: the base model stays (%s)", record["why"])
        return Outcome(base_embedder(embedder), record)
    return None


def _tuned_embedder(model: str, embedder: Embedder, folder: Path) -> Embedder:
    if embedder.model_id == model:
        return embedder
    from router.encoders.sentence import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(model, path=str(folder / ENCODER_DIR))


class _Split(NamedTuple):
    """Pairs trained on, held out, the fine-tune hash, the candidate runs planned, and the
    base skill vectors made."""

    pairs: Sequence[Pair]
    held: Sequence[Pair]
    digest: str
    planned: Sequence[candidates.Candidate] = ()
    seed: Mapping[str, np.ndarray] = {}


def _tune(skills: Sequence[Skill], base: Embedder, split: _Split, place: Place,
          options: Options, device: str, progress: bool) -> Outcome:
    from router.encoders import training
    from router.encoders.sentence import SentenceTransformerEmbedder

    pairs, held, digest, planned, seed = split
    tried = [c for c in planned if c.pairs]
    log.info("fine-tuning %s on %d pairs (%d held-out requests) on %s, %d run(s)",
             base.model_id, len(pairs), len({p.query for p in held}), device, 1 + len(tried))
    threads = options.threads if device == "cpu" else None
    trainer = options.trainer or training.train
    how = training.TrainRun(device, threads, progress)

    def run(pairs: Sequence[Pair], settings: TrainSettings, **more: Any) -> Trained:
        return trainer(base.model_id, pairs, settings, how, **more)

    model = tuned_id(base.model_id, digest)
    with training.torch_threads(threads):  # training and judging: see encoders.training
        runs = candidates.train(run, pairs, tried, options.settings, _pause_after_first)
        tuned = [SentenceTransformerEmbedder(model, loaded=r.model) for r in runs]
        judged = candidates.judge_runs(skills, base, tuned, held, place.root if place.reuse
                                       else None, progress, seed) if held else []
        kept, more = candidates.summary(planned, runs, [figures for _, figures, _ in judged])
        done, chosen = runs[kept], tried[kept - 1] if kept else None
        if planned:
            more["run"] = chosen.option.label if chosen else "plain"
        record = _record(options, True, "forced by fine_tune_encoder: on", base=base.model_id,
                         hash=digest, pairs=len(pairs), steps=done.steps,
                         planned_steps=done.planned_steps,
                         epochs=options.settings.epochs + bool(chosen and chosen.resume),
                         stopped_early=done.steps < done.planned_steps, device=device,
                         train_seconds=round(sum(r.seconds for r in runs), 1),
                         settings=options.hashed_settings(), **more)
        return _adopt(done, tuned[kept], record, base, judged[kept] if judged else None,
                      place.staging, chosen.option.words if chosen else "")


def _adopt(done: Trained, candidate: Embedder, record: dict[str, Any], base: Embedder,
           judged: tuple[judge.Verdict, dict[str, Any], dict[str, np.ndarray]] | None,
           staging: Path, words: str = "") -> Outcome:
    """Record the held-out judgement of the trained model (``auto`` adopts a winner only);
    save an adopted one into ``staging``. ``words``: the candidate run kept ("": plain)."""
    from router.encoders import training

    known: dict[str, np.ndarray] = {}
    if judged is not None:
        verdict, figures, known = judged
        record["held_out"] = figures
        if record["mode"] == "auto":
            record.update(adopted=verdict.adopt, why=verdict.why)
    if words:
        record["why"] += f" (the run trained with {words})"
    if not record["adopted"]:
        log.info("fine-tuned encoder not adopted (%s); the base model stays", record["why"])
        return Outcome(base, record, None, known)
    training.save(done.model, str(staging))
    log.info("adopted the fine-tuned encoder %s (%s)", candidate.model_id, record["why"])
    return Outcome(candidate, record, staging, known)


def _pause_after_first(step: int) -> None:
    if step == 1:
        checkpoint(PAUSE_POINT)
