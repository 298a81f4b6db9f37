"""What a build takes from served traffic: the learned examples that count, and a fingerprint
of them so a Reindex can tell new ones appeared (and build and swap even when no skill changed).

A build (``router.builder.recipe``) compacts the store (``compact_traffic``), then reads it
(``read_traffic``, no side effect): the ``Traffic`` examples join the build's others (whose
fingerprint the build pipeline compares with the served version's), and its ``inputs``
(``learned_settings``) record their count and fingerprint in the manifest ``settings``.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from router.config import FeedbackConfig
from router.examples.loading import fingerprint as examples_fingerprint
from router.examples.model import Example
from router.learning.backends import open_store
from router.learning.policy import check_policy, select_examples

SETTINGS_KEY = "learned_examples"


@dataclass(frozen=True)
class Traffic:
    """The examples learned from traffic that a build folds in."""

    examples: tuple[Example, ...] = ()

    @property
    def inputs(self) -> dict[str, Any]:
        """What the build records in its manifest ``settings`` about them."""
        return learned_settings(self.examples)


def compact_traffic(index_dir: str | Path, policy: FeedbackConfig,
                    now: float | None = None) -> None:
    """Compact the feedback store under ``index_dir`` when no other process is at it (nothing
    when feedback is off)."""
    check_policy(policy)
    if policy.enabled:
        open_store(index_dir, policy).compact(time.time() if now is None else now)


def read_traffic(index_dir: str | Path, policy: FeedbackConfig, *,
                 known: Collection[str] | None = None, now: float | None = None) -> Traffic:
    """The examples learned from traffic under ``index_dir`` that count under ``policy`` at
    ``now`` (none when feedback is off); reads only. ``known`` (optional): the catalog's skill
    names; examples of other skills are dropped."""
    check_policy(policy)
    if not policy.enabled:
        return Traffic()
    moment = time.time() if now is None else now
    rows = open_store(index_dir, policy).read_rows()
    return Traffic(tuple(select_examples(rows, policy, moment, known)))


def learned_examples(index_dir: str | Path, policy: FeedbackConfig, *,
                     known: Collection[str] | None = None,
                     now: float | None = None) -> list[Example]:
    """``compact_traffic``, then the examples ``read_traffic`` finds, at one moment."""
    moment = time.time() if now is None else now
    compact_traffic(index_dir, policy, moment)
    return list(read_traffic(index_dir, policy, known=known, now=moment).examples)


def fingerprint(examples: Sequence[Example]) -> str:
    """The examples' digest (``router.examples.loading.fingerprint``), "" for none."""
    return examples_fingerprint(examples) if examples else ""


def learned_settings(examples: Sequence[Example]) -> dict[str, Any]:
    """What a build records in its manifest ``settings`` about the learned examples it used."""
    return {SETTINGS_KEY: {"fingerprint": fingerprint(examples), "count": len(examples)}}
