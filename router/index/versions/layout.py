"""The on-disk layout of an index root: the ``CURRENT`` pointer, the ``versions/`` folder (the
one listing of its version folders), each version's manifest and per-file checksums (recorded
and checked through ``router.common.integrity``). Shared by the store, recovery, retention, the
poller, reindexing and the fine-tuned encoder's lookup; light to import, so a server can read
which model to load before anything else."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from router.common import integrity
from router.common.memo import FileIdentity, Memo, file_key
from router.errors import IndexCorrupt, IndexUnavailable

CURRENT = "CURRENT"
VERSIONS = "versions"
MANIFEST = "manifest.json"
# a sharded build's partials (router.builder.shards), each finished by its PARTIAL_META
SHARDS_DIR = ".shards"
PARTIAL_META = "partial.json"


@dataclass(frozen=True)
class IndexInfo:
    version: str
    model: str
    dimension: int
    skill_count: int
    built_at: str
    format_version: int
    path: str
    reused_embeddings: int = 0
    build_seconds: float = 0.0
    calibrated_gate: float = 0.0  # the relevance gate calibrated at index time (0: none)
    example_count: int = 0  # example request rows folded into the index
    tuning_json: str = ""  # settings fitted to the catalog (router.calibration.settings_fit)
    source: str = ""  # the key of the skill source it was built from ("": before they were kept)


def checksums(folder: Path) -> dict[str, str]:
    """The per-file SHA-256 a version's manifest records (every file but the manifest)."""
    return integrity.checksums(folder, skip=(MANIFEST,))


def mismatched(folder: Path, expected: Mapping[str, object]) -> list[str]:
    """The files of version folder ``folder`` that do not match its manifest's ``files``
    (``expected``), sorted; [] when it verifies. OSError when a file cannot be read."""
    return integrity.mismatched(folder, expected, skip=(MANIFEST,))


def version_names(root: str | Path) -> list[str]:
    """The version folders under ``root``'s ``versions/``, newest first (names start with their
    UTC build time); hidden folders are not versions. [] when there is no ``versions/``."""
    folder = Path(root) / VERSIONS
    if not folder.is_dir():
        return []
    return sorted((p.name for p in folder.iterdir() if p.is_dir()
                   and not p.name.startswith(".")), reverse=True)


def point_current(root: Path, version: str) -> None:
    tmp = root / f".{CURRENT}.{uuid.uuid4().hex[:8]}"
    tmp.write_text(version + "\n", encoding="utf-8")
    os.replace(tmp, root / CURRENT)


def current_version(root: str | Path) -> str:
    path = Path(root) / CURRENT
    try:
        version = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise IndexUnavailable(
            f"no index at {root} (missing {CURRENT}); build one with `skill-router index`"
        ) from exc
    if not version or "/" in version or version.startswith("."):
        raise IndexCorrupt(f"{path}: invalid version {version!r}")
    return version


# (path, device, inode, size, modification time) -> the manifest as parsed: a build reads the
# served version's manifest several times (recovery, the kept vectors, code books, examples,
# then retention), and with the content scanner's record it is megabytes at 10k skills (about
# 12 MB parsed); three: the served version and the two retention checks after it
_PARSED: Memo[tuple[str, FileIdentity], dict[str, Any]] = Memo(3)


def read_manifest(folder: Path) -> dict[str, Any]:
    """A version folder's manifest (OSError or ValueError if unreadable): a new dict each
    call, its values shared with every caller (to read, not to change), parsed once per file
    as it is on disk (a manifest is never changed in place: one rewritten replaces the
    file)."""
    path = folder / MANIFEST
    before = file_key(path)
    kept = _PARSED.get(before)
    if kept is not None:
        return dict(kept)
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(manifest, dict):
        raise ValueError("the manifest is not a JSON object")
    if file_key(path) == before:  # not replaced while it was read
        _PARSED.put(before, manifest)
    return dict(manifest)


def read_info(root: str | Path) -> IndexInfo:
    """The current version's manifest facts, without loading or verifying the index."""
    root = Path(root)
    version = current_version(root)
    folder = root / VERSIONS / version
    try:
        return info_from_manifest(read_manifest(folder), version, folder)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexCorrupt(f"{folder}: cannot read manifest: {exc}") from exc


def info_from_manifest(manifest: dict[str, Any], version: str, folder: Path) -> IndexInfo:
    """The facts a version's manifest records. KeyError / ValueError when one is missing."""
    return IndexInfo(version=version, model=str(manifest["model"]),
                     dimension=int(manifest["dimension"]),
                     skill_count=int(manifest["skill_count"]),
                     built_at=str(manifest["built_at"]),
                     format_version=int(manifest["format_version"]), path=str(folder),
                     source=str(manifest.get("source") or ""))
