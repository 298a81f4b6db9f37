"""Files checked against the SHA-256 recorded when they were written: the one file hasher and
the one check of a folder against its record.

Every stored folder that is verified before use goes through ``mismatched``: an index version
(its manifest's ``files``, ``router.index.versions.layout``), a version's fine-tuned encoder
(``router.index.versions.encoder``) and an ONNX export (``router.encoders.export_integrity``).
Each caller words its own refusal; this module only says which files are off. Pure but for
reading the files; imports nothing from the rest of ``router``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20  # bytes read at a time


def sha256_read(handle: BinaryIO, cap: int | None = None) -> tuple[int, str] | None:
    """``(size, hex SHA-256)`` of what is left to read in ``handle``; None as soon as more
    than ``cap`` bytes have been read (the rest is not read)."""
    digest = hashlib.sha256()
    size = 0
    while chunk := handle.read(CHUNK):
        size += len(chunk)
        if cap is not None and size > cap:
            return None
        digest.update(chunk)
    return size, digest.hexdigest()


def sha256_file(path: Path) -> str:
    """The hex SHA-256 of the file at ``path`` (OSError when it cannot be read)."""
    with path.open("rb") as handle:
        read = sha256_read(handle)
    assert read is not None  # no cap
    return read[1]


def files(folder: Path, subfolder: str = "", skip: Collection[str] = ()) -> dict[str, Path]:
    """Every file under ``folder`` (or its ``subfolder``), keyed by its ``folder``-relative
    POSIX path, except files whose name is in ``skip`` (at any depth)."""
    top = folder / subfolder if subfolder else folder
    return {p.relative_to(folder).as_posix(): p for p in sorted(top.rglob("*"))
            if p.is_file() and p.name not in skip}


def checksums(folder: Path, skip: Collection[str] = ()) -> dict[str, str]:
    """``{relative path: SHA-256}`` of every file under ``folder`` but ``skip`` (to record)."""
    return {name: sha256_file(path) for name, path in files(folder, skip=skip).items()}


def mismatched(folder: Path, expected: Mapping[str, object], *, subfolder: str = "",
               skip: Collection[str] = (), listed_only: bool = False) -> list[str]:
    """The ``folder``-relative paths, sorted, of the files that do not match ``expected``
    (``{relative path: SHA-256}``, as ``checksums`` recorded it): listed but missing, present
    but not listed, or with another SHA-256. ``subfolder``: only the files under it and the
    entries naming them are compared; ``listed_only``: files ``expected`` does not name are
    not looked for. [] when everything matches; OSError when a file cannot be read."""
    prefix = subfolder.rstrip("/") + "/" if subfolder else ""
    wanted = {name: digest for name, digest in expected.items() if name.startswith(prefix)}
    if listed_only:
        found = {name: folder / name for name in wanted if (folder / name).is_file()}
    else:
        found = files(folder, subfolder, skip)
    bad = set(found) ^ set(wanted)
    bad.update(name for name in set(found) & set(wanted)
               if sha256_file(found[name]) != wanted[name])
    return sorted(bad)
