"""Where an index lives in object storage, and the local cache folder that mirrors it (pure).

Layout under ``s3://BUCKET/PREFIX``, as under a local index root::

    PREFIX/versions/<version>/...   every file of the version, manifest.json uploaded last
    PREFIX/CURRENT                  one line: the current version, written after the version
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from router.errors import InvalidRequest

SCHEME = "s3://"
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$")


def is_remote(index: str | os.PathLike[str]) -> bool:
    """True when ``index`` names object storage rather than a folder."""
    return str(index).startswith(SCHEME)


@dataclass(frozen=True)
class ObjectLocation:
    """A bucket and the key prefix of one index in it (no leading or trailing slash)."""

    bucket: str
    prefix: str = ""

    @classmethod
    def parse(cls, url: str) -> ObjectLocation:
        """``s3://BUCKET/PREFIX`` -> its location; InvalidRequest naming the URL when it is
        not one."""
        if not is_remote(url):
            raise InvalidRequest(f"{url!r} is not an s3://BUCKET/PREFIX index location")
        bucket, _, prefix = url[len(SCHEME):].partition("/")
        prefix = prefix.strip("/")
        if not _BUCKET.match(bucket):
            raise InvalidRequest(f"{url!r}: {bucket!r} is not a bucket name (3-63 lowercase "
                                 "letters, digits, dots and hyphens)")
        parts = prefix.split("/") if prefix else []
        if any(p in ("", ".", "..") for p in parts):
            raise InvalidRequest(f"{url!r}: the prefix may not hold empty, '.' or '..' parts")
        return cls(bucket, prefix)

    @property
    def url(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.prefix}" if self.prefix else f"{SCHEME}{self.bucket}"

    def key(self, relative: str) -> str:
        """The object key of ``relative`` (a POSIX path under the index root)."""
        return f"{self.prefix}/{relative}" if self.prefix else relative

    def relative(self, key: str) -> str:
        """The index-root-relative path of object ``key`` (the inverse of ``key``)."""
        return key[len(self.prefix) + 1:] if self.prefix else key

    def cache_folder(self, cache_dir: str | Path) -> Path:
        """The local folder under ``cache_dir`` that mirrors this index: readable, and one per
        bucket and prefix (a hash keeps two prefixes that read alike apart)."""
        tag = hashlib.sha256(self.url.encode("utf-8")).hexdigest()[:12]
        readable = re.sub(r"[^A-Za-z0-9.\-]+", "_", f"{self.bucket}/{self.prefix}").strip("_")
        return Path(cache_dir) / f"{readable}-{tag}"


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/skill-router/index`` (``~/.cache`` when it is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "skill-router" / "index"


def cache_root(url: str, cache_dir: str) -> Path:
    """The local mirror folder of index ``url`` (``cache_dir`` empty: the default)."""
    return ObjectLocation.parse(url).cache_folder(cache_dir or default_cache_dir())
