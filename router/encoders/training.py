"""Contrastive fine-tuning of a sentence-transformers model on (request -> skill document) pairs.

The loss is sentence-transformers' ``MultipleNegativesRankingLoss``: every other document of a
batch is a negative for a request (in-batch negatives), and a pair's explicit negative
(``Pair.negative``: a mined hard negative or a passed-over skill, a third column) is one more, so
a batch never holds two pairs of one skill (``batches``: sentence-transformers' "no duplicates"
sampling, done here so the training needs neither ``datasets`` nor ``accelerate``) and holds
pairs with a negative or pairs without, never both. The loop is seeded (order, dropout) and so
deterministic on a CPU; AdamW with a linear warm-up over the first tenth of the steps, then a
linear decay, as sentence-transformers' ``fit`` does. Training texts are truncated to
``max_seq_length`` tokens (the saved model keeps the base model's length).

On a CPU it runs on ``threads`` torch threads: on a small shared machine one thread measured
3-8x faster per step than two (two threads contending with other work spin and stall).
It always runs every step it planned: the caller bounds the work by the pairs it hands in
(``router.builder.fine_tune``), never by elapsed time, so the same pairs give the same model on a
busy machine as on an idle one. ``resume`` continues a trained run on a copy of its model
through the epochs it has not run (the same seeded plan: a 1-epoch run continued to 2 epochs
sees the second epoch of a 2-epoch plan, with its own warm-up and decay). torch loads only
when a model is trained.
"""

from __future__ import annotations

import copy
import logging
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from router.encoders.base import load_sentence_model, resolve_model_path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainSettings:
    """Hyper-parameters (all in the encoder fine-tune hash)."""

    batch_size: int = 32
    learning_rate: float = 3e-5
    epochs: int = 1
    max_seq_length: int = 128
    warmup_fraction: float = 0.1
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "learning_rate": self.learning_rate,
                "epochs": self.epochs, "max_seq_length": self.max_seq_length,
                "warmup_fraction": self.warmup_fraction, "seed": self.seed,
                "loss": "MultipleNegativesRankingLoss"}


@dataclass(frozen=True)
class TrainRun:
    """Where and how a run trains (none of it in the fine-tune hash): torch's ``device``, its
    CPU ``threads`` while training (None: torch's default), and ``progress``, a bar with the
    steps done and an estimate of the time left."""

    device: str
    threads: int | None = None
    progress: bool = False


@dataclass(frozen=True)
class Pair:
    query: str
    document: str
    skill: str  # a batch holds at most one pair per skill
    negative: str = ""  # an explicit negative's document ("": in-batch negatives only)
    negative_skill: str = ""  # its skill: never another pair's skill in the same batch
    # the request's other right skills (a request that needs several): never in its batch,
    # where they would be taught as wrong
    also: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Trained:
    model: Any  # the tuned SentenceTransformer, in eval mode
    steps: int
    planned_steps: int
    pairs_seen: int
    seconds: float
    epochs: int = 1


def batches(pairs: Sequence[Pair], batch_size: int, epochs: int,
            seed: int) -> list[list[int]]:
    """Pair indices per step: each epoch shuffled (seeded), filled greedily so a batch holds
    one pair per skill (a pair that would repeat one waits for the next batch); a pair's
    negative skill and its request's other right skills (``Pair.also``) count as its skills,
    so no request's right skill is a negative; a batch holds only pairs with a negative or only
    pairs without (as its first pair)."""
    rng = random.Random(seed)
    plan: list[list[int]] = []
    for _ in range(max(1, epochs)):
        waiting = list(range(len(pairs)))
        rng.shuffle(waiting)
        while waiting:
            batch: list[int] = []
            seen: set[str] = set()
            rest: list[int] = []
            kind = bool(pairs[waiting[0]].negative)
            for i in waiting:
                skills = ({pairs[i].skill, pairs[i].negative_skill} | pairs[i].also) - {""}
                if (len(batch) < batch_size and not skills & seen
                        and bool(pairs[i].negative) == kind):
                    batch.append(i)
                    seen.update(skills)
                else:
                    rest.append(i)
            if len(batch) > 1:  # a batch of one has no negative to learn from
                plan.append(batch)
            # a batch of one ends the epoch of the pairs of its kind; the other kind goes on
            waiting = rest if len(batch) > 1 else [i for i in rest
                                                   if bool(pairs[i].negative) != kind]
    return plan


def default_device() -> str:
    """``cuda`` when torch sees a GPU, else ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_base(model: str, device: str) -> Any:
    """A fresh copy of ``model`` (name or folder) to train, from local files only."""
    return load_sentence_model(resolve_model_path(model), device)


def train(base: str, pairs: Sequence[Pair], settings: TrainSettings, how: TrainRun, *,
          on_step: Callable[[int], None] | None = None,
          resume: Trained | None = None) -> Trained:
    """Fine-tune a copy of ``base`` on ``pairs`` on the device, threads and progress bar of
    ``how``; ``on_step(n)`` runs after step n. ``resume``: a run of the same pairs and
    settings but fewer epochs, continued on a copy of its model (left unchanged) through
    ``settings.epochs``; its steps and pairs count in the result."""
    with torch_threads(how.threads):
        return _train(base, pairs, settings, how, on_step, resume)


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op CPU threads set to ``threads`` inside the block (None: unchanged)."""
    import torch

    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(max(1, threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _train(base: str, pairs: Sequence[Pair], settings: TrainSettings, how: TrainRun,
           on_step: Callable[[int], None] | None, resume: Trained | None = None) -> Trained:
    import torch
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    started, device = time.perf_counter(), how.device
    torch.manual_seed(settings.seed)
    model = load_base(base, device) if resume is None else copy.deepcopy(resume.model)
    full_length = model.max_seq_length
    model.max_seq_length = min(full_length, settings.max_seq_length)
    loss = MultipleNegativesRankingLoss(model)
    plan = batches(pairs, settings.batch_size, settings.epochs, settings.seed)
    if resume is not None:  # the steps of the epochs it has run (a prefix of the plan)
        plan = plan[len(batches(pairs, settings.batch_size, resume.epochs, settings.seed)):]
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    warmup = max(1, int(len(plan) * settings.warmup_fraction))
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(
        (s + 1) / warmup, max(0.0, (len(plan) - s) / max(1, len(plan) - warmup))))
    bar = _bar(len(plan), how.progress)
    steps = seen = 0
    model.train()
    try:
        for batch in plan:
            _step(model, loss, optimizer, schedule, [pairs[i] for i in batch], device)
            steps, seen = steps + 1, seen + len(batch)
            if bar is not None:
                bar.update(1)
            else:
                _log_progress(steps, len(plan), time.perf_counter() - started)
            if on_step is not None:
                on_step(steps)
    finally:
        if bar is not None:
            bar.close()
    model.eval()
    model.max_seq_length = full_length
    seconds = time.perf_counter() - started
    log.info("encoder fine-tuned: %d steps, %d pairs in %.0fs", steps, seen, seconds)
    if resume is not None:
        return Trained(model, resume.steps + steps, resume.planned_steps + len(plan),
                       resume.pairs_seen + seen, seconds, settings.epochs)
    return Trained(model, steps, len(plan), seen, seconds, settings.epochs)


def _step(model: Any, loss: Any, optimizer: Any, schedule: Any, batch: Sequence[Pair],
          device: str) -> None:
    import torch

    features = []
    columns = [[p.query for p in batch], [p.document for p in batch]]
    if all(p.negative for p in batch):  # (anchor, positive, negative): one more candidate each
        columns.append([p.negative for p in batch])
    for texts in columns:
        encoded = _tokenizer(model)(texts)
        features.append({k: v.to(device) if isinstance(v, torch.Tensor) else v
                         for k, v in encoded.items()})
    value = loss(features, None)
    value.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad()


def _tokenizer(model: Any) -> Any:
    """``preprocess`` (sentence-transformers 6), ``tokenize`` before it."""
    return getattr(model, "preprocess", None) or model.tokenize


def _log_progress(steps: int, total: int, elapsed: float) -> None:
    """Without a bar: a log line at every tenth of the steps, with the time left estimated
    from the pace so far."""
    tenth = max(1, total // 10)
    if steps % tenth == 0 and steps < total:
        log.info("fine-tuning encoder: step %d of %d, about %.0fs left", steps, total,
                 elapsed / steps * (total - steps))


def _bar(total: int, progress: bool) -> Any:
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="step", desc="fine-tuning encoder")


def save(model: Any, folder: str) -> None:
    """Write ``model`` as a local sentence-transformers folder (no model card: reproducible)."""
    model.save(folder, create_model_card=False)
