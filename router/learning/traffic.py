"""What a build takes from served traffic: the learned examples that count, and a fingerprint
of them so a Reindex can tell new ones appeared (and build and swap even when no skill changed).

A build gets them as ``traffic_examples(...)``: the examples join the build's others (whose
fingerprint the build pipeline compares with the served version's), and
``learned_settings(examples)`` records their count and fingerprint in the manifest ``settings``.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from router.config import FeedbackConfig
from router.examples.loading import fingerprint as examples_fingerprint
from router.examples.model import Example
from router.learning.policy import check_policy, select_examples
from router.learning.store import compact, read_rows

SETTINGS_KEY = "learned_examples"


def learned_examples(index_dir: str | Path, policy: FeedbackConfig, *,
                     known: Collection[str] | None = None,
                     now: float | None = None) -> list[Example]:
    """The examples learned from traffic under ``index_dir`` that count under ``policy``
    (none when feedback is off). ``known`` (optional): the catalog's skill names; examples of
    other skills are dropped. Compacts the store first when no other process is at it."""
    check_policy(policy)
    if not policy.enabled:
        return []
    moment = time.time() if now is None else now
    compact(index_dir, policy, moment)
    return select_examples(read_rows(index_dir), policy, moment, known)


def fingerprint(examples: Sequence[Example]) -> str:
    """The examples' digest (``router.examples.loading.fingerprint``), "" for none."""
    return examples_fingerprint(examples) if examples else ""


def learned_settings(examples: Sequence[Example]) -> dict[str, Any]:
    """What a build records in its manifest ``settings`` about the learned examples it used."""
    return {SETTINGS_KEY: {"fingerprint": fingerprint(examples), "count": len(examples)}}



def traffic_examples(index_dir: str | Path, policy: FeedbackConfig) -> dict[str, Any]:
    """The build arguments that fold the examples learned from traffic into a build of
    ``index_dir``: the examples themselves and what the manifest records about them."""
    learned = learned_examples(index_dir, policy)
    return {"extra_examples": learned, "inputs": learned_settings(learned)}
