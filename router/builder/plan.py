"""The one build plan: everything a build is asked to do, made once from the config.

``skill-router index``, the Reindex RPC (``Engine.reindex``), ``skill-router eval`` and the
sharded build all take a :class:`BuildPlan` (``router.builder.pipeline``), made and completed by
the build recipe (``router.builder.recipe``). Its encoder is always the
full-precision model (sentence-transformers on the configured device), whatever backend serves
queries (``index.query_backend``): an index's vectors all come from that one model, so a
Reindex gives what a fresh build of the same catalog gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from router.builder.fine_tune import stage as encoder_fine_tune
from router.builder.inputs import Stages
from router.common.workers import Workers
from router.config import AdmissionConfig, Config, DiscoveryConfig, FeedbackConfig
from router.encoders.base import Embedder
from router.encoders.device import Placement, placement_for
from router.examples.model import Example
from router.skills.sources.base import SkillSource, create_source


@dataclass(frozen=True)
class EncoderPlan:
    """The build encoder: a model on a resolved device and precision, its texts tokenized by
    ``tokenize_workers`` processes (``index.tokenize_workers``; 0: by device)."""

    model: str
    placement: Placement = field(default_factory=Placement)
    batch_size: int = 64
    tokenize_workers: int = 0

    def make(self, progress: bool = False) -> Embedder:
        """The embedder (sentence-transformers on torch; the hashing test embedder for
        ``hash``), not loaded yet."""
        from router.encoders.factory import make_embedder

        return make_embedder(self.model, batch_size=self.batch_size, progress=progress,
                             placement=self.placement,
                             tokenize_workers=self.tokenize_workers)


@dataclass(frozen=True)
class BuildPlan:
    """A build: discovery, examples (``example_files``, JSON lines whose paths are recorded so
    a Reindex re-reads them, and ``extra_examples``, e.g. learned from traffic, with the
    ``inputs`` recorded about them), the encoder, the stages, ``workers`` (processes, 0 = one
    per usable CPU), the versions kept, and ``query``, the encoder that will serve queries
    when its vectors are not the build encoder's (an int8 copy): the gate is calibrated on
    them (``served_by``). ``source`` is where the skills and their files come from, resolved
    once from ``discovery.source`` (``from_config``; the default source otherwise): discovery
    and the file digests go through it, and the version records its key."""

    discovery: DiscoveryConfig
    encoder: EncoderPlan
    keep_versions: int = 3
    example_files: Sequence[str] = ()
    extra_examples: Sequence[Example] = ()
    inputs: Mapping[str, Any] = field(default_factory=dict)
    stages: Stages = field(default_factory=Stages)
    workers: Workers | int = 1  # a running pool, or a process count
    query: Embedder | None = None
    allow_empty: bool = True  # False: a discovery that finds no skill stops the build
    # left out of ==: a source compares by identity, and two plans made alike are equal
    source: SkillSource = field(default_factory=create_source, compare=False)
    admission: AdmissionConfig = field(default_factory=AdmissionConfig)  # router.admission
    feedback: FeedbackConfig = field(default_factory=FeedbackConfig)  # where approvals are kept

    @classmethod
    def from_config(cls, config: Config, discovery: DiscoveryConfig, *,
                    model: str | None = None, device: str | None = None,
                    precision: str | None = None, progress: bool = False) -> BuildPlan:
        """The plan ``config`` asks for (``model``, ``device`` and ``precision`` replace
        ``index.model``, ``index.device`` and ``index.precision``). An unusable device or
        precision, or an unknown ``discovery.source``, raises here, before anything is read or
        written."""
        index = config.index
        model = model or index.model
        placement = placement_for(device or index.device, precision or index.precision,
                                  model=model)
        stages = Stages(index.fit_settings,
                        encoder_fine_tune.options_for(index, device=placement.device), progress,
                        index.body_chars)
        return cls(discovery, EncoderPlan(model, placement, index.batch_size,
                                                   index.tokenize_workers),
                   keep_versions=index.keep_versions, stages=stages,
                   workers=index.build_workers, source=create_source(discovery.source),
                   admission=config.admission, feedback=config.feedback)

    def served_by(self, query: Embedder | None) -> BuildPlan:
        """This plan with its gate calibrated on the vectors of ``query``, the encoder that
        will serve queries (None: the build encoder's)."""
        return replace(self, query=query)

    def make_encoder(self) -> Embedder:
        """The build encoder (not loaded yet), showing progress when the plan says so."""
        return self.encoder.make(self.stages.progress)
