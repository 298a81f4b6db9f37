"""Per-file digests of every indexed skill, recorded when the index is built, and the integrity
check every door applies before it serves a file.

A skill's files are its skill file (``SKILL.md``, ``skill.md`` or ``manifest.json``) and the
bundled files ``scan_resources`` lists (same walk, same traversal rules), each with its size and
``sha256:`` + 64 lowercase hex of its raw bytes. Hashing is bounded: at most
``DIGEST_FILES_CAP`` files per skill (the SEP-2640 per-skill limit, SKILL.md included) and no file
over ``RESOURCE_MAX_BYTES`` (it is never served either). A skill past either bound is recorded
with ``complete=False``: its recorded files are still served, but the Skills extension does not
list it (its manifest would not be complete).

A new build reuses the previous version's digest of a file whose path, size and modification
time (ns) are unchanged, so a Reindex of a large catalog reads only what changed; any other file
is hashed again (``content_hash`` covers only the skill file, so it cannot be used for this).
What this process computed last for a skill folder is reused the same way, before the
version's record (a Reindex that found nothing changed records nothing new).
As in git's "racily clean" rule, a file modified less than ``RACY_NS`` before it was hashed is
recorded without a modification time, so its digest is never reused (a same-size edit within
the file system's timestamp granularity would otherwise go unseen).

Serving: ``verify`` refuses bytes whose size or digest differs from the record, and a file the
record does not hold, with ``StaleFile`` (FAILED_PRECONDITION over gRPC) naming the file and
saying to Reindex; every source's checked reads apply it (``router.skills.sources.base``). An index
built before digests existed has no record and is served unchecked.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from router.common.integrity import sha256_read
from router.common.json_text import compact
from router.common.memo import FileIdentity, Memo, file_identity
from router.common.workers import Workers
from router.errors import StaleFile
from router.skills.limits import RESOURCE_MAX_BYTES
from router.skills.model import Skill
from router.skills.resources import scan_resources

log = logging.getLogger(__name__)

DIGESTS_FILE = "digests.json"
DIGEST_FILES_CAP = 512  # files per skill, skill file included (SEP-2640's per-skill limit)
DIGEST_TOTAL_BYTES = 16 * 1024 * 1024  # per skill (SEP-2640's per-skill limit)
RACY_NS = 2_000_000_000  # a modification this recent is not trusted for reuse


@dataclass(frozen=True)
class FileDigest:
    """One file of a skill: its path relative to the skill directory, size and digest."""

    path: str
    size: int
    digest: str  # "sha256:<64 lowercase hex>"
    mtime_ns: int = 0  # for reuse by the next build only

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "digest": self.digest,
                "mtime_ns": self.mtime_ns}


@dataclass(frozen=True)
class SkillDigests:
    """Every recorded file of one skill, skill file first. ``complete`` is False when the
    bounds above left files out."""

    files: tuple[FileDigest, ...]
    complete: bool = True

    def get(self, path: str) -> FileDigest | None:
        return next((f for f in self.files if f.path == path), None)

    def to_dict(self) -> dict[str, Any]:
        return {"complete": self.complete, "files": [f.to_dict() for f in self.files]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SkillDigests:
        files = tuple(FileDigest(str(f["path"]), int(f["size"]), str(f["digest"]),
                                 int(f.get("mtime_ns", 0))) for f in data["files"])
        return cls(files, bool(data.get("complete", True)))


def recorded_for(snapshot_digests: Mapping[str, SkillDigests] | None,
                 name: str) -> SkillDigests | None:
    """What the build recorded for skill ``name`` (nothing recorded: an empty, incomplete
    record, so every file is refused); None when the index predates digests (unchecked)."""
    if snapshot_digests is None:
        return None
    return snapshot_digests.get(name) or SkillDigests((), complete=False)


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _hash_file(path: str, size_cap: int) -> tuple[int, str, int] | None:
    """``(size, digest, mtime_ns)`` of a regular file of at most ``size_cap`` bytes, or None."""
    try:
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            read = sha256_read(fh, size_cap) if info.st_size <= size_cap else None
    except OSError:
        return None
    if read is None:
        return None
    racy = time.time_ns() - info.st_mtime_ns < RACY_NS
    return read[0], "sha256:" + read[1], 0 if racy else info.st_mtime_ns


def _reused(previous: SkillDigests | None, rel: str, full: str) -> FileDigest | None:
    old = previous.get(rel) if previous is not None else None
    if old is None or not old.mtime_ns:
        return None
    try:
        info = os.stat(full)
    except OSError:
        return None
    if info.st_size == old.size and info.st_mtime_ns == old.mtime_ns:
        return old
    return None


def skill_digests(skill: Skill, previous: SkillDigests | None = None) -> SkillDigests:
    """Digest ``skill``'s files (see the module notes for bounds and reuse)."""
    return _digest(skill.location, skill.base_dir, previous)


def _digest(location: str, base_dir: str, previous: SkillDigests | None) -> SkillDigests:
    skill_file = os.path.basename(location)
    listing = scan_resources(base_dir, DIGEST_FILES_CAP - 1)
    files: list[FileDigest] = []
    complete = not listing.truncated
    total = 0
    for rel in (skill_file, *listing.files):
        full = os.path.join(base_dir, *PurePosixPath(rel).parts)
        found = _reused(previous, rel, full)
        if found is None:
            hashed = _hash_file(full, RESOURCE_MAX_BYTES)
            if hashed is None:
                complete = False
                continue
            found = FileDigest(rel, *hashed)
        total += found.size
        files.append(found)
    if total > DIGEST_TOTAL_BYTES:
        complete = False
    return SkillDigests(tuple(files), complete)


_Job = tuple[str, str, SkillDigests | None]  # location, base_dir, previous record


def _digest_all(jobs: list[_Job]) -> list[SkillDigests]:
    return [_digest(*job) for job in jobs]


# what this process computed last of each skill folder (its skill file and folder), reused by
# the next build even when the version recorded nothing newer (a Reindex that built nothing)
_LATEST: Memo[tuple[str, str], SkillDigests] = Memo()


def compute_all(skills: Sequence[Skill], previous: Mapping[str, SkillDigests] | None = None,
                workers: Workers | None = None) -> dict[str, SkillDigests]:
    """Digests of every skill, by name, reusing ``previous`` (or what this process computed
    since) where files are unchanged; over ``workers`` when there are many skills (same
    result)."""
    previous = previous or {}
    jobs = [(s.location, s.base_dir,
             _LATEST.get((s.location, s.base_dir)) or previous.get(s.key)) for s in skills]
    found = workers.map(_digest_all, jobs) if workers is not None else _digest_all(jobs)
    for skill, digested in zip(skills, found, strict=True):
        _LATEST.put((skill.location, skill.base_dir), digested)
    return {s.key: d for s, d in zip(skills, found, strict=True)}


def fingerprint(digests: Mapping[str, SkillDigests]) -> str:
    """One hash of every skill's recorded files (name, path, size, digest): equal exactly when
    the files are, whatever their modification times."""
    hasher = hashlib.sha256()
    for name in sorted(digests):
        for f in digests[name].files:
            hasher.update(f"{name}\0{f.path}\0{f.size}\0{f.digest}\n"
                          .encode("utf-8", "surrogateescape"))
    return hasher.hexdigest()


_FRAGMENTS: Memo[SkillDigests, str] = Memo()


def _record_json(digests: SkillDigests) -> str:
    return compact(digests.to_dict())


def write(folder: Path, digests: Mapping[str, SkillDigests]) -> None:
    """``digests.json`` in a version folder (before the manifest's checksums are taken)."""
    # {"skills": {name: record}} on one line, each skill's record as written for an earlier
    # build of the process when its files are the same
    ordered = dict(sorted(digests.items()))  # as ``load`` reads them back
    text = "{\"skills\":{" + ",".join(
        compact(name) + ":" + _FRAGMENTS.of(d, partial(_record_json, d))
        for name, d in ordered.items()) + "}}"
    with (folder / DIGESTS_FILE).open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    _KEPT.put(file_identity(folder / DIGESTS_FILE), ordered)


def load(folder: Path) -> dict[str, SkillDigests] | None:
    """The digests of a version folder; None for an index built before they were recorded."""
    path = folder / DIGESTS_FILE
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: SkillDigests.from_dict(d) for name, d in data["skills"].items()}


def load_kept(folder: Path) -> dict[str, SkillDigests] | None:
    """``load``, from what this process last wrote or read of that very file where it can (the
    current version's record, read again by each build for reuse)."""
    try:
        identity = file_identity(folder / DIGESTS_FILE)
    except (FileNotFoundError, NotADirectoryError):
        return None
    kept = _KEPT.get(identity)
    if kept is None:
        kept = load(folder)
        if kept is None:
            return None
        _KEPT.put(identity, kept)
    return dict(kept)


# the records this process last wrote or read, by their file's identity (a version folder is
# renamed into place after its digests are written, and never written again: the file stays
# the same), so the next build does not parse the current version's record again
_KEPT: Memo[FileIdentity, dict[str, SkillDigests]] = Memo(2)


def verify(skill: str, recorded: SkillDigests | None, path: str, data: bytes) -> None:
    """Refuse ``data`` read for ``path`` unless it is exactly what the build recorded.
    ``recorded`` None (an index without digests) is not checked."""
    if recorded is None:
        return
    key = str(PurePosixPath(path))
    entry = recorded.get(key)
    if entry is None:
        raise StaleFile(f"file {key!r} of skill {skill!r} was not in the index when it was "
                        "built, so it is not served; Reindex to publish it")
    if len(data) != entry.size or sha256_digest(data) != entry.digest:
        raise StaleFile(f"file {key!r} of skill {skill!r} changed on disk since the index was "
                        f"built (recorded {entry.digest}, {entry.size} bytes); it is not served "
                        "until the next Reindex records it")
