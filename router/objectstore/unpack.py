"""A version's ``files.tar`` read with bounded memory, before anything in it is trusted.

Only regular members named ``files/<sha256 hex>`` are taken (a link, a device, a folder, a
sparse member is refused), each within the size its digest's record gives
(``digests.json``), at most the per-file cap, and the pack holds no more members than there are
recorded files. A member is streamed to disk in small chunks, hashed on the way, and kept only
when its bytes are its name's digest. Any failure (a damaged tar, a short member, no room left,
even MemoryError) is ``IndexCorrupt``: the caller refuses the version and remembers it.
"""

from __future__ import annotations

import hashlib
import os
import re
import tarfile
import uuid
from pathlib import Path
from typing import IO

from router.errors import IndexCorrupt
from router.skills import digests
from router.skills.limits import RESOURCE_MAX_BYTES, SKILL_FILE_MAX_BYTES

FILES = "files"
CHUNK = 1 << 16
_PACKED = re.compile(r"files/([0-9a-f]{64})")
_REGULAR = (tarfile.REGTYPE, tarfile.AREGTYPE)


def recorded_sizes(folder: Path) -> dict[str, int]:
    """The size of each recorded file by its sha256 hex (a version folder's ``digests.json``)."""
    try:
        recorded = digests.load(folder) or {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise IndexCorrupt(f"{digests.DIGESTS_FILE}: unreadable: {exc}") from None
    return {f.digest.removeprefix("sha256:"): f.size
            for record in recorded.values() for f in record.files}


def unpack_files(archive: Path, folder: Path) -> None:
    """Extract a pack into ``folder`` (see the module); IndexCorrupt naming why not."""
    try:
        _unpack(archive, folder)
    except IndexCorrupt:
        raise
    except (Exception, MemoryError) as exc:  # whatever a hostile tar makes tarfile raise
        raise IndexCorrupt(f"{archive.name}: unreadable: {type(exc).__name__}: "
                           f"{str(exc)[:200]}") from None


def _unpack(archive: Path, folder: Path) -> None:
    sizes = recorded_sizes(folder)
    cap = max(RESOURCE_MAX_BYTES, SKILL_FILE_MAX_BYTES)
    (folder / FILES).mkdir(exist_ok=True)
    with tarfile.open(archive, "r:") as tar:
        for count, member in enumerate(tar, 1):
            if count > len(sizes):
                raise IndexCorrupt(f"{archive.name}: more members than the {len(sizes)} "
                                   "recorded files")
            found = _PACKED.fullmatch(member.name)
            if member.type not in _REGULAR or member.issparse() or found is None:
                raise IndexCorrupt(f"{archive.name}: {member.name[:200]!r} is not a skill file")
            size = sizes.get(found.group(1))
            if size is None or member.size != size or member.size > cap:
                raise IndexCorrupt(f"{archive.name}: {member.name!r} claims {member.size} bytes;"
                                   f" its record says {size} (the cap is {cap})")
            handle = tar.extractfile(member)
            if handle is None:
                raise IndexCorrupt(f"{archive.name}: {member.name!r} is not a skill file")
            _stream(handle, folder / member.name, found.group(1), size)


def _stream(handle: IO[bytes], target: Path, hexdigest: str, size: int) -> None:
    """``handle``'s ``size`` bytes to ``target``, hashed on the way; IndexCorrupt unless they
    are exactly ``hexdigest``."""
    hasher, written = hashlib.sha256(), 0
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}")
    try:
        with open(tmp, "wb") as out:
            while written <= size:
                chunk = handle.read(min(CHUNK, size + 1 - written))
                if not chunk:
                    break
                hasher.update(chunk)
                out.write(chunk)
                written += len(chunk)
        if written != size or hasher.hexdigest() != hexdigest:
            raise IndexCorrupt(f"{target.name}: its bytes are not the recorded file "
                               f"({written} of {size} bytes)")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
