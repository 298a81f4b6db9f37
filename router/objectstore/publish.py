"""Publish a local index version to object storage, and prune the old ones there.

Publishing is atomic for readers: the version's files go first, its ``manifest.json`` last (a
version without one is incomplete and never fetched), then ``CURRENT`` is pointed at it. Two
publishers never touch each other's files (version names are unique); ``CURRENT`` is written
with a conditional put on the pointer as read, retried on a lost race, so the last publisher to
finish wins, as on a local folder. Pruning keeps the current version and the ``keep`` newest
complete ones, and leaves alone any version with an object younger than ``stale_seconds``
(another publisher may still be uploading it).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from router.common import integrity
from router.errors import IndexCorrupt, IndexUnavailable
from router.index.versions.layout import MANIFEST, VERSIONS, mismatched, read_manifest
from router.index.versions.retention import STALE_TMP_SECONDS
from router.objectstore.skill_files import PACK, attach, pack
from router.skills.sources.version_files import FILES

if TYPE_CHECKING:
    from router.objectstore.bucket import Bucket, Listed

log = logging.getLogger(__name__)

TRANSFERS = 8  # objects moved at once
CURRENT_TRIES = 5


def publish(root: Path, version: str, bucket: Bucket, *, keep: int,
            stale_seconds: float = STALE_TMP_SECONDS) -> tuple[str, ...]:
    """Upload version ``version`` of local index ``root`` (its skills' files attached first),
    make it current in ``bucket``, prune there; the versions pruned. The skill files travel as
one tar (``router.objectstore.skill_files.pack``)."""
    folder = root / VERSIONS / version
    carried = attach(folder)
    manifest = read_manifest(folder)
    bad = mismatched(folder, manifest.get("files") or {})
    if bad:
        raise IndexCorrupt(f"{folder}: not publishing a damaged version ({', '.join(bad)})")
    names = [n for n in integrity.files(folder)
             if n != MANIFEST and not n.startswith(f"{FILES}/")]
    archive = root / f".tmp-{PACK}-{version}"
    try:
        if pack(folder, archive):
            bucket.upload(archive, f"{VERSIONS}/{version}/{PACK}")
    finally:
        archive.unlink(missing_ok=True)
    with ThreadPoolExecutor(TRANSFERS, thread_name_prefix="index-upload") as pool:
        list(pool.map(lambda n: bucket.upload(folder / n, f"{VERSIONS}/{version}/{n}"), names))
    bucket.upload(folder / MANIFEST, f"{VERSIONS}/{version}/{MANIFEST}")
    for _ in range(CURRENT_TRIES):
        now = bucket.read_current()
        if bucket.write_current(version, now[1] if now else None):
            break
    else:
        raise IndexUnavailable(f"{bucket.location.url}: CURRENT changed under each of "
                               f"{CURRENT_TRIES} tries to point it at {version}; publish again")
    log.info("published index %s to %s (%d files, %d skill files)", version,
             bucket.location.url, len(names) + 1, carried)
    return prune(bucket, keep, stale_seconds=stale_seconds)


def _by_version(listing: dict[str, Listed]) -> dict[str, dict[str, Listed]]:
    versions: dict[str, dict[str, Listed]] = {}
    for rel, item in listing.items():
        parts = rel.split("/", 2)
        if len(parts) == 3 and parts[2]:
            versions.setdefault(parts[1], {})[parts[2]] = item
    return versions


def prune(bucket: Bucket, keep: int, *, stale_seconds: float = STALE_TMP_SECONDS,
          now: float | None = None) -> tuple[str, ...]:
    """Remove from ``bucket`` the versions past the ``keep`` newest complete ones (never the
    current one, nor one still being written); the versions removed, newest first."""
    current = bucket.read_current()
    if current is None:
        return ()
    versions = _by_version(bucket.listing(VERSIONS))
    moment = time.time() if now is None else now
    complete = [v for v in sorted(versions, reverse=True) if MANIFEST in versions[v]]
    kept = {current[0], *complete[:max(1, keep)]}
    removed = []
    for name in sorted(versions, reverse=True):
        newest = max(item.modified.timestamp() for item in versions[name].values())
        if name in kept or moment - newest < stale_seconds:
            continue
        files = versions[name]
        prefix = f"{VERSIONS}/{name}/"
        if MANIFEST in files:  # incomplete at once, so no reader starts fetching it
            bucket.delete([prefix + MANIFEST])
        bucket.delete(prefix + rel for rel in files if rel != MANIFEST)
        removed.append(name)
    if removed:
        log.info("pruned %s from %s", ", ".join(removed), bucket.location.url)
    return tuple(removed)
