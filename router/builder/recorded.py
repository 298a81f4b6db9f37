"""What a build records in its version's manifest for the next one to read (the discovery it
ran, the key admission's verdicts go under) and how a catalog changed. Light on purpose: a
server reads these when it starts (``router.door.path_policy``, approvals, a Reindex's result)
and must not import the build's machinery (admission's checks, the registry's HTTP client,
the encoders) to do so."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from router.config import DiscoveryConfig
from router.errors import IndexUnavailable, InvalidRequest
from router.index.versions.layout import MANIFEST, read_manifest


@dataclass(frozen=True)
class Changes:
    """How a freshly discovered catalog differs from the one being served."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)


SETTINGS_KEY = "discovery"
ADMISSION_KEY = "admission"  # the manifest's record of the verdicts


def discovery_settings(config: DiscoveryConfig) -> dict[str, Any]:
    """The ``settings`` a build records so a later reindex can repeat its discovery."""
    return {SETTINGS_KEY: dataclasses.asdict(config)}


def discovery_from_settings(settings: Mapping[str, Any], version: str) -> DiscoveryConfig:
    """The DiscoveryConfig recorded by ``discovery_settings``. Raises InvalidRequest if none."""
    data = settings.get(SETTINGS_KEY)
    if not isinstance(data, Mapping):
        raise InvalidRequest(
            f"index {version} records no discovery settings, so it cannot be rebuilt in place; "
            "build it once with `skill-router index` (which records them)")
    known = {f.name for f in dataclasses.fields(DiscoveryConfig)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                              for k, v in data.items() if k in known}
    try:
        return DiscoveryConfig(**values)
    except TypeError as exc:
        raise InvalidRequest(f"index {version}: unusable discovery settings: {exc}") from exc


def recorded_settings(version_dir: str | Path) -> dict[str, Any]:
    """The ``settings`` object from a version folder's manifest ({} when absent)."""
    try:
        manifest = read_manifest(Path(version_dir))
    except (OSError, ValueError) as exc:
        raise IndexUnavailable(f"cannot read {version_dir}/{MANIFEST}: {exc}") from exc
    settings = manifest.get("settings")
    return dict(settings) if isinstance(settings, dict) else {}
