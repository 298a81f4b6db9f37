"""A version's own copy of its skills' files, so a server needs no skills volume.

``attach`` copies every file the build recorded (``digests.json``) into the version folder as
``files/<sha256 hex>`` (content-addressed, as the MCP Skills extension names them), each one
checked against its recorded digest on the way, then records their checksums in the manifest:
from then on the version's files are verified with the rest of it, wherever it is fetched. In
object storage they travel as one tar (``pack``, ``unpack``), not one object per file.
A file changed on disk since the build is left out (with a warning) and is not served.

``VersionFilesSource`` serves Activate, ReadResource, ListResources and the MCP door from those
copies when the served version carries them, and from the disk (the fallback) otherwise: a
version published to object storage carries them, a local build does not.
"""

from __future__ import annotations

import logging
import os
import re
import tarfile
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from router.errors import IndexCorrupt, NotFound, TooLarge
from router.index.version_files import COMPACT_FROM, read_records, write_json
from router.index.versions.layout import MANIFEST, checksums, read_manifest
from router.skills import digests
from router.skills.digests import FileDigest, SkillDigests
from router.skills.limits import RESOURCE_LIST_CAP, RESOURCE_MAX_BYTES, SKILL_FILE_MAX_BYTES
from router.skills.model import DiscoveryResult, Skill, SkillKind
from router.skills.resources import ResourceListing, media_type
from router.skills.sources.base import SkillFile, SkillSource

if TYPE_CHECKING:
    from router.common.workers import Workers
    from router.config import DiscoveryConfig

log = logging.getLogger(__name__)

FILES = "files"  # under a version folder: one file per distinct recorded digest
PACK = "files.tar"  # in object storage: the version's files/ in one object (one PUT, one GET)
_PACKED = re.compile(r"files/[0-9a-f]{64}")


def stored_name(digest: str) -> str:
    """``files/<hex>`` of a recorded ``sha256:<hex>`` digest."""
    return f"{FILES}/{digest.removeprefix('sha256:')}"


def attach(folder: Path) -> int:
    """Copy the recorded files of version ``folder``'s skills into it (see the module notes)
    and record them in its manifest; the number of files it now carries."""
    recorded = digests.load(folder)
    if recorded is None:
        return 0  # an index from before digests: nothing says which bytes to carry
    skills, _ = read_records(folder / "skills.json")
    (folder / FILES).mkdir(exist_ok=True)
    for skill in skills:
        record = recorded.get(skill.key)
        if record is None or skill.kind is SkillKind.MCP_TOOL:
            continue
        for entry in record.files:
            _copy(folder, skill, entry)
    manifest = read_manifest(folder)
    manifest["files"] = checksums(folder)
    tmp = folder.parent / f".{MANIFEST}.{folder.name}.{uuid.uuid4().hex[:8]}"
    write_json(tmp, manifest, compact=len(skills) > COMPACT_FROM)
    os.replace(tmp, folder / MANIFEST)
    return sum(1 for _ in (folder / FILES).iterdir())


def _copy(folder: Path, skill: Skill, entry: FileDigest) -> None:
    target = folder / stored_name(entry.digest)
    if target.is_file():
        return
    source = os.path.join(skill.base_dir, *PurePosixPath(entry.path).parts)
    try:
        with open(source, "rb") as handle:
            data = handle.read(entry.size + 1)
    except OSError as exc:
        log.warning("not carrying %s of skill %s: %s", entry.path, skill.name, exc)
        return
    if len(data) != entry.size or digests.sha256_digest(data) != entry.digest:
        log.warning("not carrying %s of skill %s: it changed since the build; Reindex to "
                    "publish it", entry.path, skill.name)
        return
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}")
    tmp.write_bytes(data)
    os.replace(tmp, target)


def pack(folder: Path, archive: Path) -> bool:
    """Write version ``folder``'s ``files/`` into tar ``archive``; False when it has none."""
    files = sorted((folder / FILES).glob("*")) if (folder / FILES).is_dir() else []
    if not files:
        return False
    with tarfile.open(archive, "w") as tar:
        for path in files:
            tar.add(path, arcname=f"{FILES}/{path.name}", recursive=False)
    return True


def unpack(archive: Path, folder: Path) -> None:
    """Extract a ``pack`` into ``folder``: only regular files named ``files/<sha256 hex>``
    (anything else is IndexCorrupt); their bytes are checked against the manifest after."""
    (folder / FILES).mkdir(exist_ok=True)
    try:
        with tarfile.open(archive) as tar:
            for member in tar:
                if not member.isfile() or not _PACKED.fullmatch(member.name):
                    raise IndexCorrupt(f"{archive.name}: {member.name!r} is not a skill file")
                handle = tar.extractfile(member)
                assert handle is not None  # a regular file
                (folder / member.name).write_bytes(handle.read())
    except (OSError, tarfile.TarError) as exc:
        raise IndexCorrupt(f"{archive.name}: unreadable: {exc}") from exc


Served = Callable[[], tuple[str, Mapping[str, SkillDigests] | None]]


class VersionFilesSource(SkillSource):
    """The served version's ``files/`` when it has them, else ``fallback`` (see the notes).
    ``served`` returns the served version's folder and its recorded digests."""

    key = "version-files"

    def __init__(self, served: Served, fallback: SkillSource) -> None:
        self._served = served
        self.fallback = fallback

    def _carried(self, skill: Skill) -> tuple[Path, SkillDigests] | None:
        if skill.kind is SkillKind.MCP_TOOL:
            return None
        folder, recorded = self._served()
        if recorded is None or not folder or not (Path(folder) / FILES).is_dir():
            return None
        return Path(folder), recorded.get(skill.key) or SkillDigests((), complete=False)

    def discover(self, config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
                 workers: Workers | None = None) -> DiscoveryResult:
        return self.fallback.discover(config, max_bytes=max_bytes, workers=workers)

    def list_files(self, skill: Skill, cap: int = RESOURCE_LIST_CAP) -> ResourceListing:
        carried = self._carried(skill)
        if carried is None:
            return self.fallback.list_files(skill, cap)
        own = self.skill_file_name(skill)
        names = sorted(f.path for f in carried[1].files if f.path != own)
        return ResourceListing(tuple(names[:cap]), max(0, len(names) - cap), carried[1].complete)

    def fetch(self, skill: Skill, path: str, max_bytes: int = RESOURCE_MAX_BYTES) -> SkillFile:
        carried = self._carried(skill)
        if carried is None:
            return self.fallback.fetch(skill, path, max_bytes)
        rel = str(PurePosixPath(path))  # the skill file too, as the disk serves it
        return SkillFile(path, _read(carried, skill, rel, max_bytes), media_type(rel))

    def fetch_skill_file(self, skill: Skill) -> bytes:
        carried = self._carried(skill)
        if carried is None:
            return self.fallback.fetch_skill_file(skill)
        return _read(carried, skill, self.skill_file_name(skill), SKILL_FILE_MAX_BYTES)

    def digest(self, skill: Skill, previous: SkillDigests | None = None) -> SkillDigests:
        return self.fallback.digest(skill, previous)

    def skill_file_name(self, skill: Skill) -> str:
        return self.fallback.skill_file_name(skill)


def _read(carried: tuple[Path, SkillDigests], skill: Skill, rel: str, max_bytes: int) -> bytes:
    folder, record = carried
    entry = record.get(rel)
    if entry is None:
        raise NotFound(f"no resource {rel!r} in skill {skill.name!r} of this index version")
    if entry.size > max_bytes:
        raise TooLarge(f"{rel!r} of skill {skill.name!r} is {entry.size} bytes, over the "
                       f"{max_bytes}-byte cap")
    try:
        return (folder / stored_name(entry.digest)).read_bytes()
    except OSError as exc:
        raise NotFound(f"{rel!r} of skill {skill.name!r} is not carried by this index version "
                       "(it changed before the version was published); Reindex to publish "
                       "it") from exc
