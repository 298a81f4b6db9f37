"""The registries as a skill source of their own (key ``registry``): the skills of
``discovery.registries`` alone, discovered by ``router.skills.sources.registries`` and served
from their digest's folder as the disk serves a folder."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from router.skills.limits import SKILL_FILE_MAX_BYTES
from router.skills.model import DiscoveryResult
from router.skills.sources.disk import DiskSource
from router.skills.sources.registries import discover_registries

if TYPE_CHECKING:
    from router.common.workers import Workers
    from router.config import DiscoveryConfig


class RegistrySource(DiskSource):
    """The configured registries' skills alone (key ``registry``): discovered by fetching
    them (``discover_registries``), served from their digest's folder as the disk serves a
    folder. The default source (``disk+mcp``) fetches them beside the folders instead."""

    key = "registry"

    def discover(self, config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
                 workers: Workers | None = None) -> DiscoveryResult:
        return discover_registries(config)

    def discover_beside(self, config: DiscoveryConfig, taken: Collection[str], *,
                        max_bytes: int = SKILL_FILE_MAX_BYTES,
                        workers: Workers | None = None) -> DiscoveryResult:
        return discover_registries(config)
