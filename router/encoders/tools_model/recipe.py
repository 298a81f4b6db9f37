"""The recipe of the product's encoder: read the pairs file, mine a hard negative per training
request with the base model, fine-tune the base model on every (request, needed tool) pair
(``router.encoders.training``, seeded: the same file and settings give the same model on a
CPU), blend the tuned weights with the base's (``blend``: ``Recipe.blend`` of the way from the
base to the tuned model), measure base and tuned on the held-back requests, and write the model
(fp16 safetensors, tokenizer and config) with ``training.json``, the record of how it was made
and what it scored. ``reblend`` blends a model already trained without training it again.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from router.config import BASE_MODEL
from router.encoders.base import resolve_model_path
from router.encoders.sentence import SentenceTransformerEmbedder
from router.encoders.tools_model import mining, validation
from router.encoders.tools_model.blend import blend_folder
from router.encoders.tools_model.rows import Row, capped, file_digest, read_rows, to_pairs
from router.encoders.training import TrainRun, TrainSettings, train

log = logging.getLogger(__name__)

RECORD = "training.json"
WEIGHTS = "model.safetensors"
CARD = "README.md"  # the model card: written by hand, kept when the model is rebuilt


@dataclass(frozen=True)
class Recipe:
    """What a run trains from: the base model, at most ``per_source`` training requests of
    each public source (0: all), ``hard_negatives`` mined or in-batch negatives only, and
    ``blend``, how far the written weights go from the base's towards the tuned ones (1.0: the
    tuned model as trained; ``router.encoders.tools_model.blend``)."""

    base: str = BASE_MODEL
    per_source: int = 0
    hard_negatives: bool = True
    settings: TrainSettings = field(default_factory=lambda: TrainSettings(learning_rate=2e-5))
    blend: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {"base": self.base, "per_source": self.per_source,
                "hard_negatives": self.hard_negatives, **self.settings.to_dict(),
                "blend": self.blend}


def run(pairs_file: Path, out: Path, recipe: Recipe, how: TrainRun) -> dict[str, Any]:
    """Train, validate and write the model to ``out`` (replaced whole, its model card kept);
    returns the record written as ``out/training.json``."""
    started = time.perf_counter()
    rows = read_rows(pairs_file)
    held = [r for r in rows if r.split == "validation"]
    chosen = capped([r for r in rows if r.split == "train"], recipe.per_source,
                    recipe.settings.seed)
    base = SentenceTransformerEmbedder(recipe.base)
    negatives: dict[str, Any] = {}
    if recipe.hard_negatives:
        log.info("mining hard negatives for %d requests with %s", len(chosen), recipe.base)
        negatives = mining.mine(chosen, mining.candidate_tools(chosen, held), base)
    pairs = to_pairs(chosen, negatives)
    log.info("training %s on %d pairs of %d requests", recipe.base, len(pairs), len(chosen))
    trained = train(recipe.base, pairs, recipe.settings, how)
    staged = out.with_name(out.name + ".staged")
    shutil.rmtree(staged, ignore_errors=True)
    trained.model.half()  # fp16 on disk: half the size; loaded back in float32
    trained.model.save(str(staged), create_model_card=False)
    if recipe.blend < 1.0:
        tuned_weights = file_digest(staged / WEIGHTS)
        blend_folder(Path(resolve_model_path(recipe.base)), staged, recipe.blend, staged)
    record = {
        "base": recipe.base, "pairs_file": pairs_file.name,
        "pairs_digest": file_digest(pairs_file), "recipe": recipe.to_dict(),
        "requests": dict(sorted(Counter(r.source for r in chosen).items())),
        "pairs": len(pairs), "hard_negatives": len(negatives), "steps": trained.steps,
        "planned_steps": trained.planned_steps, "train_seconds": round(trained.seconds),
        "weights": file_digest(staged / WEIGHTS),
        "validation": _validate(held, base, staged),
    }
    if recipe.blend < 1.0:
        record["tuned_weights"] = tuned_weights
    record["seconds"] = round(time.perf_counter() - started)
    (staged / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    _replace(staged, out)
    return record


def reblend(pairs_file: Path, tuned: Path, weight: float, out: Path) -> dict[str, Any]:
    """Blend the model trained (not blended) in ``tuned`` with its base by ``weight``, measure
    it on ``pairs_file``'s held-back requests and write it to ``out``: the same weights as a
    run of the same recipe with ``blend=weight``."""
    record: dict[str, Any] = json.loads((tuned / RECORD).read_text(encoding="utf-8"))
    if record.get("recipe", {}).get("blend", 1.0) != 1.0:
        raise ValueError(f"{tuned} is already blended ({record['recipe']['blend']}); "
                         "blend the model as trained")
    base_name = record.get("base", BASE_MODEL)
    staged = out.with_name(out.name + ".staged")
    blend_folder(Path(resolve_model_path(base_name)), tuned, weight, staged)
    held = [r for r in read_rows(pairs_file) if r.split == "validation"]
    record["recipe"] = {**record.get("recipe", {}), "blend": weight}
    record["tuned_weights"] = record.get("weights")
    record["weights"] = file_digest(staged / WEIGHTS)
    record["validation"] = _validate(held, SentenceTransformerEmbedder(base_name), staged)
    (staged / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    _replace(staged, out)
    return record


def validate(pairs_file: Path, model: str | Path) -> dict[str, Any]:
    """Base and ``model`` (a folder) on the held-back requests of ``pairs_file``."""
    held = [r for r in read_rows(pairs_file) if r.split == "validation"]
    record = json.loads((Path(model) / RECORD).read_text(encoding="utf-8"))
    base = SentenceTransformerEmbedder(record.get("base", BASE_MODEL))
    return _validate(held, base, Path(model))


def _validate(held: list[Row], base: SentenceTransformerEmbedder,
              folder: Path) -> dict[str, Any]:
    tuned = SentenceTransformerEmbedder(folder.name, path=str(folder))
    base_rows, tuned_rows = validation.embedded(held, base), validation.embedded(held, tuned)
    before, after = validation.measure(held, base_rows), validation.measure(held, tuned_rows)
    mean, low, high = validation.compare(before, after)
    by_source = {}
    for source in sorted({r.source for r in held}):
        some = [r for r in held if r.source == source]
        by_source[source] = {"base": validation.measure(some, base_rows).to_dict(),
                             "tuned": validation.measure(some, tuned_rows).to_dict()}
    return {"base": before.to_dict(), "tuned": after.to_dict(),
            "recall@5_gain": {"mean": round(mean, 4), "low": round(low, 4),
                              "high": round(high, 4)},
            "by_source": by_source}


def _replace(staged: Path, out: Path) -> None:
    """``staged`` becomes ``out``; an existing model card moves across."""
    if (out / CARD).is_file():
        shutil.copyfile(out / CARD, staged / CARD)
    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    staged.rename(out)
    shutil.rmtree(old, ignore_errors=True)
