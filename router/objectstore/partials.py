"""A sharded build through object storage: each shard's partial (``router.builder.shards``)
goes to the bucket under ``PREFIX/.shards/``, the merge fetches them all into its mirror, and
the partials it merged are removed from the bucket once the version is published. So shard
pods and the merge share only the bucket, no volume.

Each partial's ``partial.json`` is sent last, and a partial is merged only once that file and
the vectors its checksum names are there (``router.builder.shards`` checks the set), so a shard
killed mid-upload is one the merge waits for, never half of one.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from router.index.versions.layout import PARTIAL_META, SHARDS_DIR

if TYPE_CHECKING:
    from router.objectstore.mirror import RemoteIndex

log = logging.getLogger(__name__)


def _local_files(remote: RemoteIndex) -> dict[str, Path]:
    """Every file under the mirror's ``.shards/``, by its path relative to the index root."""
    top = remote.root / SHARDS_DIR
    found: dict[str, Path] = {}
    for folder, _, names in os.walk(top):
        if any(part.startswith(".tmp") for part in Path(folder).relative_to(top).parts):
            continue  # a partial still being written
        for name in names:
            path = Path(folder) / name
            found[path.relative_to(remote.root).as_posix()] = path
    return found


def push_partials(remote: RemoteIndex) -> int:
    """Upload the mirror's partials the bucket lacks (each ``partial.json`` after its
    vectors); the files sent."""
    have = remote.bucket.listing(SHARDS_DIR)
    new = {rel: path for rel, path in _local_files(remote).items() if rel not in have}
    for rel in sorted(new, key=lambda r: (r.endswith(PARTIAL_META), r)):
        remote.bucket.upload(new[rel], rel)
    return len(new)


def pull_partials(remote: RemoteIndex) -> int:
    """Download the bucket's partials the mirror lacks; the files fetched."""
    local = _local_files(remote)
    fetched = 0
    for rel, listed in sorted(remote.bucket.listing(SHARDS_DIR).items()):
        path = local.get(rel)
        if path is not None and path.stat().st_size == listed.size:
            continue
        target = remote.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".part-{target.name}")
        remote.bucket.download(rel, partial)
        os.replace(partial, target)
        fetched += 1
    return fetched


def drop_merged(remote: RemoteIndex) -> int:
    """Remove from the bucket the partials a merge removed from the mirror (those of the
    build it made a version of); the objects removed."""
    local = _local_files(remote)
    gone = [rel for rel in remote.bucket.listing(SHARDS_DIR) if rel not in local]
    if gone:
        remote.bucket.delete(gone)
        log.info("removed %d merged partial files from %s", len(gone), remote.url)
    return len(gone)
