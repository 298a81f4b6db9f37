"""The one build recipe: how ``skill-router index``, the Reindex RPC
(``router.reindex.reindexer``) and ``skill-router eval`` build a version, each through one
:class:`Recipe`, in one order:

1. the plan from the configuration (``BuildPlan.from_config``; an unusable device or precision
   raises here, before anything is read or written; a shard builds with this plan alone);
2. when the sources take traffic, the feedback store is compacted, then the examples learned
   from it are read (``router.learning.traffic``; the read has no side effect);
3. the encoder that will serve queries, on whose vectors the gate is calibrated: the one
   already serving (a Reindex), else the one ``index.query_backend`` asks for
   (``gate_encoder``: an int8 copy is made and checked here);
4. the build (``router.builder.pipeline``), or the merge of a sharded build's partials;
5. when asked, the serving encoder exported for the new version (``prepare_query_embedder``),
   so a server's first request is fast;
6. where the version goes: it is built in a folder, which for an index in object storage
   (``s3://BUCKET/PREFIX``, ``router.objectstore``) is the local mirror, brought up to the
   bucket's version first (so unchanged embeddings are reused); the version built there is
   then published, a shard's partial is sent to the bucket, and a merge first fetches every
   shard's partial and afterwards removes those it merged. ``skill-router index`` and the
   Reindex RPC alike leave these steps to the recipe.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from router.builder import pipeline
from router.builder.plan import BuildPlan
from router.builder.shards import ShardSpec
from router.common.stages import stage
from router.config import Config, DiscoveryConfig, FeedbackConfig, IndexConfig
from router.encoders.base import Embedder
from router.examples.model import Example
from router.index.query_encoder import gate_encoder, prepare_query_embedder
from router.index.versions.layout import IndexInfo
from router.learning.traffic import compact_traffic, read_traffic
from router.objectstore import partials

if TYPE_CHECKING:
    from router.objectstore.mirror import RemoteIndex


@dataclass(frozen=True)
class Sources:
    """Where a build's example requests come from besides the skill folders: ``files`` (JSON
    lines, recorded so a Reindex re-reads them), ``examples`` given as they are, and whether
    the examples learned from ``traffic`` join them (their count and fingerprint are then
    recorded, even when there are none)."""

    files: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()
    traffic: bool = True


@dataclass(frozen=True)
class Recipe:
    """A build of the index in ``index_dir``: its ``plan`` (from the configuration), what the
    rest of the recipe reads from the configuration (``index``, ``feedback``) and ``remote``,
    the index in object storage ``index_dir`` mirrors (None: a folder alone)."""

    plan: BuildPlan
    index_dir: Path
    index: IndexConfig
    feedback: FeedbackConfig
    remote: RemoteIndex | None = None

    @classmethod
    def for_index(cls, config: Config, discovery: DiscoveryConfig, index_dir: str | Path, *,
                  model: str | None = None, device: str | None = None,
                  precision: str | None = None, progress: bool = False,
                  remote: RemoteIndex | None = None) -> Recipe:
        """The recipe ``config`` asks for (``model``, ``device`` and ``precision`` as in
        ``BuildPlan.from_config``, which raises here on an unusable device or precision).
        ``index_dir`` is a folder, or ``s3://BUCKET/PREFIX``: its mirror under
        ``index.cache_dir``, synced here; ``remote``: the mirror ``index_dir`` already is (a
        server's)."""
        from router.objectstore.location import is_remote
        from router.objectstore.mirror import RemoteIndex

        if is_remote(str(index_dir)):
            remote = RemoteIndex(str(index_dir), config.index.cache_dir,
                                 keep=config.index.keep_versions)
            remote.sync()
            index_dir = remote.root
        plan = BuildPlan.from_config(config, discovery, model=model, device=device,
                                     precision=precision, progress=progress)
        return cls(plan, Path(index_dir), config.index, config.feedback, remote)

    def gathered(self, sources: Sources, serving: Embedder | None = None) -> BuildPlan:
        """The plan with the examples of ``sources`` (steps 2 and 3 of the module doc) and the
        encoder that will serve queries: ``serving``, else the configured one."""
        plan = replace(self.plan, example_files=sources.files, extra_examples=sources.examples)
        if sources.traffic:
            moment = time.time()
            compact_traffic(self.index_dir, self.feedback, moment)
            traffic = read_traffic(self.index_dir, self.feedback, now=moment)
            plan = replace(plan, extra_examples=(*sources.examples, *traffic.examples),
                           inputs=traffic.inputs)
        if serving is None:
            serving = gate_encoder(plan.encoder.model, self.index_dir, self.index)
        return plan.served_by(serving)

    def build(self, sources: Sources = Sources(), *, serving: Embedder | None = None,
              served: pipeline.Served | None = None, full: bool = False,
              before_prune: Callable[[IndexInfo], None] | None = None,
              export: bool = False, embedder: Embedder | None = None,
              ) -> pipeline.BuildOutcome:
        """Gather, build (``router.builder.pipeline.build``: ``served``, ``full`` and
        ``before_prune`` as there), when ``export`` and a version was built export its serving
        encoder, and publish it to the bucket the index is in. ``embedder``: the build encoder
        (default: the plan's, made anew; a Reindex passes the one it keeps). Given ``served``
        (a Reindex where the index is in a bucket), the bucket's poll leaves the mirror alone
        meanwhile, and it is refused where none of the served skills' folders are."""
        with self._rebuilding(served):
            outcome = pipeline.build(self.gathered(sources, serving), self.index_dir,
                                     served=served, full=full, before_prune=before_prune,
                                     embedder=embedder)
            outcome = self._exported(outcome) if export else outcome
            self._publish(outcome, rebuilt=served is not None)
        return outcome

    def merge(self, sources: Sources = Sources(), *,
              export: bool = False) -> pipeline.BuildOutcome:
        """``build`` from the partials of every shard (``router.builder.pipeline.merge_shards``,
        fetched from the bucket first when the index is in one, and removed from it once the
        version is published)."""
        if self.remote is not None:
            partials.pull_partials(self.remote)
        outcome = pipeline.merge_shards(self.gathered(sources), self.index_dir)
        outcome = self._exported(outcome) if export else outcome
        self._publish(outcome, rebuilt=False)
        if self.remote is not None and outcome.info is not None:
            partials.drop_merged(self.remote)
        return outcome

    def shard(self, spec: ShardSpec) -> pipeline.ShardOutcome:
        """Embed shard ``spec`` into a partial (``router.builder.pipeline.build_shard``): the plan
        alone, since examples, traffic and the gate belong to the merge), sent to the bucket
        when the index is in one, for the merge to fetch."""
        outcome = pipeline.build_shard(self.plan, self.index_dir, spec)
        if self.remote is not None:
            partials.push_partials(self.remote)
        return outcome

    @contextmanager
    def _rebuilding(self, served: pipeline.Served | None) -> Iterator[None]:
        if self.remote is None or served is None:
            yield
            return
        with self.remote.rebuilding(served.skills):
            yield

    def _publish(self, outcome: pipeline.BuildOutcome, *, rebuilt: bool) -> None:
        if self.remote is None or outcome.info is None:
            return
        if rebuilt:
            self.remote.publish_rebuilt(outcome.info.version)
        else:
            self.remote.publish(outcome.info.version)

    def _exported(self, outcome: pipeline.BuildOutcome) -> pipeline.BuildOutcome:
        if outcome.info is not None:
            stage("exporting the query encoder (%s)", self.index.query_backend)
            prepare_query_embedder(outcome.info.model, self.index_dir,
                                   backend=self.index.query_backend,
                                   int8_cpu=self.index.int8_cpu)
        return outcome
