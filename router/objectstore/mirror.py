"""The local mirror of an index in object storage: a cache folder laid out as any index root
(``CURRENT``, ``versions/``), which the loader, the poller and a Reindex use as they use a
local folder.

``sync`` reads the bucket's ``CURRENT``; a version not yet in the cache is downloaded into a
``.tmp-*`` folder, every file checked against its manifest's checksums, then renamed into
``versions/`` and only then pointed at, so a server swaps only to a version it has verified.
A version already in the cache is never fetched again (a restart loads it from the disk), and
the cache keeps ``index.keep_versions`` versions (at least two: the one served until the swap).
``publish`` sends a version built in the cache to the bucket (``router.objectstore.publish``).
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from router.errors import IndexCorrupt, IndexUnavailable, InvalidRequest
from router.index.versions.layout import (
    MANIFEST,
    VERSIONS,
    current_version,
    mismatched,
    point_current,
    read_manifest,
)
from router.index.versions.retention import prune
from router.objectstore import publish as publishing
from router.objectstore.location import ObjectLocation, cache_root, is_remote
from router.objectstore.skill_files import PACK, unpack
from router.skills.model import Skill, SkillKind

if TYPE_CHECKING:
    from router.config import Config
    from router.objectstore.bucket import Bucket, BucketFactory

log = logging.getLogger(__name__)


class RemoteIndex:
    """Index ``url`` (``s3://BUCKET/PREFIX``) mirrored under ``cache_dir`` (empty: the user's
    cache folder); ``keep`` versions kept in the cache and in the bucket."""

    def __init__(self, url: str, cache_dir: str = "", *, keep: int = 3,
                 bucket: BucketFactory | None = None) -> None:
        self.location = ObjectLocation.parse(url)
        self.root = cache_root(url, cache_dir)
        self.keep = keep
        self._bucket_factory = bucket
        self._bucket: Bucket | None = None
        self._refused = ("", "")  # the version that failed its checks, and why
        self._busy = threading.Lock()  # held by a Reindex building and publishing here

    @property
    def url(self) -> str:
        return self.location.url

    @property
    def bucket(self) -> Bucket:
        if self._bucket is None:  # boto3 loads on first use, not with every server
            from router.objectstore.bucket import Bucket

            self._bucket = (self._bucket_factory or Bucket)(self.location)
        return self._bucket

    def sync(self) -> str | None:
        """Make the bucket's current version the cache's current one (fetched and verified
        first when it is new here); that version, or None when the bucket has none yet.
        While a Reindex here builds and publishes (``rebuilding``) it changes nothing and
        returns the cache's current version."""
        if not self._busy.acquire(blocking=False):
            return self._local_current()
        try:
            return self._sync()
        finally:
            self._busy.release()

    def _sync(self) -> str | None:
        found = self.bucket.read_current()
        if found is None:
            return None
        version = found[0]
        if not version or "/" in version or version.startswith("."):
            raise IndexCorrupt(f"{self.url}: CURRENT names no valid version ({version!r})")
        if version == self._refused[0]:
            raise IndexCorrupt(self._refused[1])  # a damaged version is not fetched again
        if not (self.root / VERSIONS / version / MANIFEST).is_file():
            try:
                self.fetch(version)
            except IndexCorrupt as exc:
                self._refused = (version, str(exc))
                raise
        if self._local_current() != version:
            point_current(self.root, version)
            prune(self.root, max(2, self.keep))  # the one served until the swap stays
        return version

    def start(self) -> Path:
        """``sync`` for a server's start: with the bucket unreachable it serves the cached
        current version (a warning says so); IndexUnavailable when there is none."""
        try:
            version = self.sync()
        except IndexUnavailable as exc:
            cached = self._local_current()
            if cached is None:
                raise
            log.warning("cannot read %s (%s); serving the cached version %s until it is back",
                        self.url, exc, cached)
            return self.root
        if version is None:
            raise IndexUnavailable(f"no index at {self.url} (no CURRENT); publish one with "
                                   f"`skill-router index --out {self.url}`")
        return self.root

    def _local_current(self) -> str | None:
        try:
            return current_version(self.root)
        except IndexUnavailable:
            return None

    def fetch(self, version: str) -> Path:
        """Download ``version`` into the cache and verify it; its folder."""
        listing = self.bucket.listing(f"{VERSIONS}/{version}")
        prefix = f"{VERSIONS}/{version}/"
        names = [rel[len(prefix):] for rel in listing if rel.startswith(prefix)]
        if MANIFEST not in names:
            raise IndexUnavailable(f"{self.url}: version {version} is not complete (no "
                                   f"{MANIFEST}); it may have been pruned")
        (self.root / VERSIONS).mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".tmp-fetch-{version}-{uuid.uuid4().hex[:6]}"
        try:
            with ThreadPoolExecutor(publishing.TRANSFERS, thread_name_prefix="index-fetch") as pool:
                list(pool.map(lambda n: self._download(prefix + n, tmp, n), names))
            if (tmp / PACK).is_file():
                unpack(tmp / PACK, tmp)
                (tmp / PACK).unlink()
            _verify(tmp, self.url, version)
            final = self.root / VERSIONS / version
            if not final.exists():
                tmp.rename(final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log.info("fetched index %s from %s (%d files)", version, self.url, len(names))
        return self.root / VERSIONS / version

    def _download(self, key: str, tmp: Path, name: str) -> None:
        parts = PurePosixPath(name).parts
        if not parts or any(p in ("", ".", "..") for p in parts) or name.startswith("/"):
            raise IndexCorrupt(f"{self.url}: object {key!r} is not a version file name")
        target = tmp.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        self.bucket.download(key, target)

    def publish(self, version: str) -> tuple[str, ...]:
        """Publish cached version ``version`` and make it current in the bucket."""
        return publishing.publish(self.root, version, self.bucket, keep=self.keep)

    @contextmanager
    def rebuilding(self, skills: Sequence[Skill]) -> Iterator[None]:
        """Around a Reindex here: ``sync`` leaves the cache alone meanwhile, so the version it
        builds is not pointed away from before it is published. Refused on a server that holds
        none of the skills' folders (it serves their files from the version): it would
        publish an empty catalog to every replica."""
        folders = [s.base_dir for s in skills if s.kind is not SkillKind.MCP_TOOL]
        if folders and not any(os.path.isdir(f) for f in folders):
            raise InvalidRequest(f"this server has none of the skills' folders (it serves their "
                                 f"files from {self.url}); run the Reindex where the skills "
                                 f"are, or `skill-router index --out {self.url}`")
        with self._busy:
            yield

    def publish_rebuilt(self, version: str) -> None:
        """Publish a version a Reindex built in the cache; IndexUnavailable saying so when the
        bucket refuses it (this server then returns to the bucket's version at its next poll)."""
        try:
            self.publish(version)
        except IndexUnavailable as exc:
            raise IndexUnavailable(f"built index {version} but could not publish it to "
                                   f"{self.url}: {exc}; this server goes back to the bucket's "
                                   "current version at its next poll") from exc


def _verify(folder: Path, url: str, version: str) -> None:
    try:
        expected = read_manifest(folder).get("files")
        bad = mismatched(folder, expected) if isinstance(expected, dict) and expected else None
    except (OSError, ValueError) as exc:
        raise IndexCorrupt(f"{url}: version {version}: unreadable manifest: {exc}") from exc
    if bad is None:
        raise IndexCorrupt(f"{url}: version {version}: its manifest lists no file checksums")
    if bad:
        raise IndexCorrupt(f"{url}: version {version}: checksum mismatch in {', '.join(bad)}; "
                           "not serving it")


def served_index(index: str, config: Config) -> tuple[str, RemoteIndex | None]:
    """The local folder to serve for ``index`` (a folder, or ``s3://BUCKET/PREFIX`` mirrored
    under ``index.cache_dir`` and brought up to the bucket's current version) and its mirror."""
    if not is_remote(index):
        return index, None
    remote = RemoteIndex(index, config.index.cache_dir, keep=config.index.keep_versions)
    return str(remote.start()), remote
