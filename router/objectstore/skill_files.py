"""A version's own copy of its skills' files, so a server needs no skills volume.

``attach`` copies every file the build recorded (``digests.json``) into the version folder as
``files/<sha256 hex>`` (content-addressed, as the MCP Skills extension names them), each one
checked against its recorded digest on the way, then records their checksums in the manifest:
from then on the version's files are verified with the rest of it, wherever it is fetched. In
object storage they travel as one tar (``pack``, ``unpack``), not one object per file.
A file changed on disk since the build is left out (with a warning) and is not served.
``router.skills.sources.version_files`` serves them.
"""

from __future__ import annotations

import logging
import os
import re
import tarfile
import uuid
from pathlib import Path, PurePosixPath

from router.errors import IndexCorrupt
from router.index.version_files import COMPACT_FROM, read_records, write_json
from router.index.versions.layout import MANIFEST, checksums, read_manifest
from router.skills import digests
from router.skills.digests import FileDigest
from router.skills.model import Skill, SkillKind
from router.skills.sources.version_files import FILES, stored_name

log = logging.getLogger(__name__)

PACK = "files.tar"  # in object storage: the version's files/ in one object (one PUT, one GET)
_PACKED = re.compile(r"files/[0-9a-f]{64}")


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
