"""What fusion is made of, written once for the settings fit (``router.calibration``) and for
the turn (``router.routing.fusion``, whose module doc has the measurements): its settings, one
retriever's hits, the views of a request, the pooled vector, and each retriever's score
normalisation (pure, numpy only)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9\"'(\[])|\n+")


@dataclass(frozen=True)
class FusionConfig:
    """Every fitted constant of fusion and gating, with its measured default."""

    dense_weight: float = 0.5  # lexical weight is 1 - dense_weight
    depth: int = 50  # top-N asked from each retriever per view
    max_segments: int = 6  # sentence views per message; 0 or 1 disables them
    # words a view may hold: the encoder reads 256 word-pieces (~190 words) of a text, so a
    # longer sentence is cut into pieces of this size and a long message gets more views
    # (at most MAX_VIEWS), so every word of it is read
    segment_words: int = 160
    min_segment_words: int = 3  # shorter sentences are merged into the one before
    min_dense: float = 0.18  # gate: the turn's best cosine must reach this; 0 disables
    min_fused: float = 0.0  # gate: a candidate's fused score must reach this
    tail_ratio: float = 0.0  # drop candidates below tail_ratio * best fused; 0 disables
    history_weight: float = 0.4  # weight of earlier turns (vector mix and lexical view)
    history_turns: int = 2  # earlier user turns considered

    def __post_init__(self) -> None:
        for name in ("dense_weight", "tail_ratio", "history_weight"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1], got {getattr(self, name)}")
        if self.depth < 1:
            raise ValueError(f"depth must be at least 1, got {self.depth}")
        if self.segment_words < 0:
            raise ValueError(f"segment_words must be 0 or more, got {self.segment_words}")


@dataclass(frozen=True)
class Hits:
    """One retriever's top-N for one view: row ids and raw scores, best first."""

    ids: np.ndarray
    scores: np.ndarray
    weight: float = 1.0


MAX_VIEWS = 16  # views of one message at most: 16 x 160 words, about 15,000 characters


def query_views(message: str, config: FusionConfig) -> list[str]:
    """The whole message, then its sentences when there are at least two of them: at most
    ``max_segments``, or as many more (up to ``MAX_VIEWS``) as it takes to hold
    ``segment_words`` words each; a sentence longer than that is cut into pieces of it."""
    text = message.strip()
    if config.max_segments < 2 or not text:
        return [text]
    segments = [piece for sentence in split_sentences(text, config.min_segment_words)
                for piece in _word_pieces(sentence, config.segment_words)]
    if len(segments) < 2:
        return [text]
    words = sum(len(segment.split()) for segment in segments)
    wanted = -(-words // config.segment_words) if config.segment_words > 0 else 0
    return [text, *_merge_to(segments, min(MAX_VIEWS, max(config.max_segments, wanted)))]


def _word_pieces(sentence: str, size: int) -> list[str]:
    """``sentence`` cut into runs of at most ``size`` words (whole when ``size`` is 0)."""
    words = sentence.split()
    if size <= 0 or len(words) <= size:
        return [sentence]
    return [" ".join(words[i:i + size]) for i in range(0, len(words), size)]


def split_sentences(text: str, min_words: int = 3) -> list[str]:
    """Sentences of ``text``; fragments under ``min_words`` words join the previous sentence."""
    out: list[str] = []
    for part in filter(None, (p.strip() for p in _SENTENCE_END.split(text))):
        if out and len(part.split()) < min_words:
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def _merge_to(segments: list[str], limit: int) -> list[str]:
    """Join neighbouring segments so that at most ``limit`` remain, keeping all text."""
    if len(segments) <= limit:
        return segments
    bounds = np.linspace(0, len(segments), limit + 1).round().astype(int).tolist()
    return [" ".join(segments[a:b]) for a, b in itertools.pairwise(bounds)]


def unit(vector: np.ndarray) -> np.ndarray:
    """``vector`` as float32 scaled to length 1 (a zero vector stays zero)."""
    row = np.asarray(vector, dtype=np.float32).reshape(1, -1)
    norms = np.linalg.norm(row, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray = np.ascontiguousarray(row / norms, dtype=np.float32)[0]
    return out


def pool(vectors: np.ndarray) -> np.ndarray:
    """Normalised mean of (at least one) sentence vectors. Stands in for embedding the whole
    message: as good on the dev set, cheaper, and free of the model's input length cut-off."""
    return unit(np.asarray(vectors, dtype=np.float32).mean(axis=0))


@dataclass(frozen=True)
class DenseScale:
    """The dense side's normalisation for one turn: ``(cos - baseline) / (top - baseline)`` in
    [0, 1], ``top`` the turn's best cosine over its views and ``baseline`` the message's cosine
    to the catalog centroid (every score 1 when ``top`` is not above it); ``floor`` is the
    highest of the views' lowest returned cosines, given to ids no view returned."""

    top: float
    floor: float
    baseline: float

    @classmethod
    def of(cls, views: Sequence[Hits], baseline: float) -> DenseScale | None:
        """The scale over the views that returned anything (None when none did)."""
        raws = [np.asarray(v.scores, dtype=np.float64) for v in views if len(v.ids)]
        if not raws:
            return None
        return cls(max(float(r.max()) for r in raws), max(float(r.min()) for r in raws),
                   baseline)

    def __call__(self, raw: np.ndarray) -> np.ndarray:
        span = self.top - self.baseline
        if span <= 0:
            return np.ones_like(raw)
        return np.asarray(np.clip((raw - self.baseline) / span, 0.0, 1.0))

    @property
    def floor_score(self) -> float:
        return float(self(np.array([self.floor]))[0])


def lexical_scale(raw: np.ndarray) -> np.ndarray | None:
    """One view's BM25 scores over its best, in [0, 1] (None when it matched nothing)."""
    top = float(raw.max()) if len(raw) else 0.0
    return np.clip(raw / top, 0.0, 1.0) if top > 0 else None
