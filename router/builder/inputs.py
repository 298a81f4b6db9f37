"""What a version build (``router.builder.version.build_index``) is handed besides its catalog:
the stages it runs (configuration, from the build plan, ``router.builder.plan``), and what the
pipeline carries into it (``router.builder.pipeline``), the encoder serving queries among them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from router.builder.fine_tune import stage as encoder_fine_tune
from router.common.workers import Workers
from router.encoders.base import Embedder
from router.index.body import DEFAULT_BODY_CHARS
from router.skills.digests import SkillDigests
from router.skills.model import DEFAULT_CATALOG
from router.skills.sources.base import SkillSource

FINE_TUNE_KEY = "fine_tune_encoder"  # settings key: the fine-tuning mode built with
BODY_CHARS_KEY = "body_chars"  # settings key: how much of each body the lexical index reads


@dataclass(frozen=True)
class Stages:
    """What a version build does beyond embedding and indexing its skills, from the
    configuration: fit the routing settings to the examples (``router.calibration.settings_fit``),
    fine-tune the encoder on them (``router.builder.fine_tune.stage``), whether it shows
    progress, and how many characters of each skill's body its lexical index reads
    (``router.index.body``; 0: name and description only)."""

    fit_settings: bool = False
    fine_tune: encoder_fine_tune.Options = field(default_factory=encoder_fine_tune.Options)
    progress: bool = False
    body_chars: int = DEFAULT_BODY_CHARS

    def recorded(self, embedder: Embedder) -> dict[str, Any]:
        """The inputs a build of ``embedder`` records: how much of the bodies it reads, and
        the fine-tuning mode and each candidate run's mode unless off (so the inputs of before
        stay), when it can be tuned."""
        body = {BODY_CHARS_KEY: self.body_chars}
        if not encoder_fine_tune.tunable(embedder):
            return body
        modes = self.fine_tune.candidate_modes()
        return {**body, FINE_TUNE_KEY: self.fine_tune.mode,
                **{key: mode for key, mode in modes.items() if mode != "off"}}


@dataclass(frozen=True)
class Carried:
    """What the pipeline hands a version build from the version before it and its own work:
    the ``settings`` recorded in the manifest; ``reuse`` of the current version's embeddings;
    embeddings ``known`` from elsewhere (a sharded build's partials); the skills' file digests
    already computed; the running ``workers``; the ``catalogs`` order recorded
    (``router.skills.catalogs``); ``query``: the encoder that will serve queries when its vectors
    are not the build encoder's (an int8 copy, ``router.index.query_encoder.gate_encoder``): the
    gate is calibrated on them; ``source``: the skill source the skills came from, which digests
    their files when ``digested`` cannot be recorded as it is (None: the default source);
    ``bodies``: each skill's body by key, as admission read it (the lexical index reads their
    start)."""

    settings: Mapping[str, Any] = field(default_factory=dict)
    reuse: bool = True
    known: Mapping[str, np.ndarray] | None = None
    digested: Mapping[str, SkillDigests] | None = None
    workers: Workers | None = None
    catalogs: tuple[str, ...] = (DEFAULT_CATALOG,)
    query: Embedder | None = None
    source: SkillSource | None = None
    bodies: Mapping[str, str] = field(default_factory=dict)
