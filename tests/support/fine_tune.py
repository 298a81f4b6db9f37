"""Fake sentence-transformers models for the encoder fine-tuning tests: the build stage runs
its whole decision (train, judge, adopt, store, reuse) in milliseconds, without torch.

A catalog of ``CODES`` skills ``tool-<i>`` ("tool i: Operates the <code> unit."); its example
requests never share a word with the descriptions, so the base (bag-of-words) model ranks them
badly, a "good" tuned model maps each request to its skill, and a "bad" one to noise."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from router.encoders.base import normalise
from router.encoders.hashing import HashEmbedder
from router.encoders.sentence import SentenceTransformerEmbedder
from router.encoders.training import Pair, Trained, TrainRun, TrainSettings
from router.examples.model import Example
from router.skills.model import Skill
from tests.support.skills import skill_record

CODES = ("zorbex", "quillan", "mavrok", "telvish", "prandor", "gulmet", "hestrix", "vondel",
         "kapsul", "drimmon", "fenwick", "olvath", "sarpen", "tuzgar", "wexlon", "yarrin")
VERBS = ("restart", "refill", "recalibrate", "polish", "inspect", "unlock", "purge", "cool",
         "heat", "sync", "reboot", "weigh", "label", "seal", "drain", "paint")
ADJECTIVES = ("blue", "red", "green", "big", "old", "new", "tall", "small")
DIM = 64


def catalog() -> list[Skill]:
    return [skill_record(f"tool-{i}", f"Operates the {code} unit.") for i, code in
            enumerate(CODES)]


def examples(per_skill: int = 8) -> list[Example]:
    """``per_skill`` requests per skill, each naming the skill's verb, none its words."""
    return [Example(f"please {verb} the {ADJECTIVES[j % len(ADJECTIVES)]} thing number {j}",
                    (f"tool-{i}",))
            for i, verb in enumerate(VERBS) for j in range(per_skill)]


class FakeModel:
    """The part of a SentenceTransformer the build uses: ``encode``, the dimension, ``save``.
    ``base``: bag of words; ``good``: each request on its skill; ``bad``: opposite it."""

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "base", "good" or "bad"
        self._hash = HashEmbedder(DIM)

    def get_embedding_dimension(self) -> int:
        return DIM

    def encode(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        return np.vstack([self._one(t) for t in texts]) if texts else np.zeros((0, DIM))

    def _one(self, text: str) -> np.ndarray:
        if self.kind == "base":
            return self._hash.encode([text])[0]
        out = np.zeros(DIM, dtype=np.float32)
        for i, (code, verb) in enumerate(zip(CODES, VERBS, strict=True)):
            if code in text:
                out[i] = 1.0
            elif verb in text.split():  # "bad": a request lands as far as can be from its skill
                out[i] = 1.0 if self.kind == "good" else -1.0
        out[DIM - 1] = 0.1
        return normalise(out[None, :])[0]

    def save(self, folder: str, **_: Any) -> None:
        Path(folder).mkdir(parents=True)
        (Path(folder) / "modules.json").write_text(json.dumps([{"type": self.kind}]))
        (Path(folder) / "model.safetensors").write_bytes(self.kind.encode() * 100)


def base_embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder("fake-base", loaded=FakeModel("base"))


class FakeTrainer:
    """A trainer that returns a ``kind`` model and counts its calls."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.calls: list[int] = []  # pairs per call

    def __call__(self, base: str, pairs: Sequence[Pair], settings: TrainSettings,
                 how: TrainRun, *, on_step: Callable[[int], None] | None = None) -> Trained:
        self.calls.append(len(pairs))
        return Trained(FakeModel(self.kind), 1, 1, len(pairs), 0.01)
