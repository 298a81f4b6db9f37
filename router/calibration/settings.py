"""Routing settings a build fitted to its catalog from the catalog's example requests (the
record only; ``router.calibration.settings_fit`` fits them, the router applies them)."""

from __future__ import annotations

import hashlib
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from router.examples.scoring import MODES, ExampleMode


@dataclass(frozen=True)
class FittedSettings:
    """The fusion dense weight, which example evidence scores a skill, and whether the skill's
    BM25 document holds its examples' text; with the cross-validated figures behind them."""

    dense_weight: float
    example_mode: ExampleMode
    expand_lexical: bool
    held_out: int = 0  # example requests routed to choose them
    recall: float = 0.0  # recall@5 of these settings over those requests
    mrr: float = 0.0
    default_recall: float = 0.0  # recall@5 of the default settings over them
    default_mrr: float = 0.0
    prior_recall: float = 0.0  # recall@5 of full use of the examples (the fit's prior)
    prior_mrr: float = 0.0
    reason: str = ""  # why these settings were chosen, in words
    judged: Judged | None = None  # which requests judged them, with which encoder

    def to_dict(self) -> dict[str, Any]:
        return {"dense_weight": self.dense_weight, "example_mode": self.example_mode,
                "expand_lexical": self.expand_lexical, "held_out": self.held_out,
                "recall_at_5": round(self.recall, 4), "mrr_at_10": round(self.mrr, 4),
                "default_recall_at_5": round(self.default_recall, 4),
                "default_mrr_at_10": round(self.default_mrr, 4),
                "prior_recall_at_5": round(self.prior_recall, 4),
                "prior_mrr_at_10": round(self.prior_mrr, 4), "reason": self.reason,
                "judged": self.judged.to_dict() if self.judged else None}

    @classmethod
    def from_dict(cls, data: Any) -> FittedSettings | None:
        """The record from a manifest (None when there is none); ValueError when malformed."""
        if data is None:
            return None
        if not isinstance(data, dict) or data.get("example_mode") not in MODES:
            raise ValueError(f"malformed fitted settings: {data!r}")
        weight = float(data["dense_weight"])
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"fitted dense_weight {weight} is outside [0, 1]")
        return cls(weight, ExampleMode(data["example_mode"]), bool(data["expand_lexical"]),
                   int(data.get("held_out", 0)), float(data.get("recall_at_5", 0.0)),
                   float(data.get("mrr_at_10", 0.0)),
                   float(data.get("default_recall_at_5", 0.0)),
                   float(data.get("default_mrr_at_10", 0.0)),
                   float(data.get("prior_recall_at_5", 0.0)),
                   float(data.get("prior_mrr_at_10", 0.0)), str(data.get("reason", "")),
                   Judged.from_dict(data.get("judged")))


@dataclass(frozen=True)
class Judged:
    """The example requests a settings fit judged on (``request_hash`` of each, never the
    text), the encoder whose vectors scored them, and how many example requests were left out
    because that encoder was trained on them."""

    encoder: str
    requests: tuple[str, ...]
    left_out: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"encoder": self.encoder, "requests": list(self.requests),
                "left_out_trained": self.left_out}

    def reason(self) -> str:
        """Which requests judged, in words."""
        who = f"encoder {self.encoder}" if self.encoder else "the encoder"
        if not self.left_out:
            return f"judged on {len(self.requests)} example requests, none seen by {who}"
        return (f"judged on {len(self.requests)} example requests {who} was not trained on "
                f"({self.left_out} it was trained on left out)")

    @classmethod
    def from_dict(cls, data: Any) -> Judged | None:
        if not isinstance(data, dict):
            return None
        return cls(str(data.get("encoder", "")), tuple(str(h) for h in data.get("requests", [])),
                   int(data.get("left_out_trained", 0)))


class Seen(NamedTuple):
    """The encoder a settings fit scores with (its model id) and the requests (``query_key``)
    it was fine-tuned on: they never judge."""

    encoder: str = ""
    trained: AbstractSet[str] = frozenset()


def request_hash(key: str) -> str:
    """The recorded name of an example request: 16 hex digits of the SHA-256 of its
    ``query_key`` (the text is never recorded)."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class HeldOut:
    """What the chosen settings saw of each held-out example request (the catalog's on-topic
    requests, each scored without itself): its best cosine, best BM25 score and
    whole-request vector; and its best cosine and BM25 score with no examples at all, as a
    request for a skill no example teaches is scored. The relevance gate is fitted on both
    (``router.calibration.gate_fit``)."""

    best: np.ndarray
    lexical: np.ndarray
    vectors: np.ndarray
    untaught_best: np.ndarray
    untaught_lexical: np.ndarray


@dataclass(frozen=True)
class Fit:
    """The settings fit's answer: the settings, and the held-out requests' evidence under them."""

    settings: FittedSettings
    held_out: HeldOut
