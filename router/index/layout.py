"""The on-disk layout of an index root: the ``CURRENT`` pointer, the ``versions/`` folder and
per-file checksums. Shared by the store, retention, the poller and reindexing."""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

from router.errors import IndexCorrupt, IndexUnavailable

CURRENT = "CURRENT"
VERSIONS = "versions"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def checksums(folder: Path) -> dict[str, str]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json")
    return {p.relative_to(folder).as_posix(): sha256_file(p) for p in files}


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
