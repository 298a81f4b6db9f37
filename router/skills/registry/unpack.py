"""A verified artifact opened safely (pure: bytes in, files out, nothing written): a
``SKILL.md`` as is, an archive (``.tar.gz`` or ``.zip``, by Content-Type then extension)
read member by member with no ``..``, no absolute path, no link leaving the skill, caps on
entries and on the unpacked size (a decompression bomb stops at the cap, never unpacked
whole), and ``SKILL.md`` at the root."""

from __future__ import annotations

import io
import posixpath
import tarfile
import zipfile
from dataclasses import dataclass

MAX_ENTRIES = 2000
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_LINK_HOPS = 8
_TAR_TYPES = ("application/gzip", "application/x-gzip", "application/x-tar",
              "application/x-gtar", "application/tar+gzip")
_ZIP_TYPES = ("application/zip", "application/x-zip-compressed")


class UnsafeArchive(ValueError):
    """An archive refused: the message says which member and why."""


@dataclass(frozen=True)
class Limits:
    entries: int = MAX_ENTRIES
    total_bytes: int = MAX_TOTAL_BYTES


def archive_format(content_type: str, url: str) -> str:
    """"tar.gz" or "zip" from the Content-Type, else from the URL's extension;
    UnsafeArchive when neither tells."""
    media = content_type.split(";")[0].strip().lower()
    if media in _TAR_TYPES:
        return "tar.gz"
    if media in _ZIP_TYPES:
        return "zip"
    path = url.split("?")[0].split("#")[0].lower()
    if path.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if path.endswith(".zip"):
        return "zip"
    raise UnsafeArchive(f"cannot tell the archive format of {url} (Content-Type "
                        f"{content_type or 'absent'!r}; expected .tar.gz or .zip)")


def member_path(name: str) -> str:
    """The normalised relative path of an archive member; UnsafeArchive for an absolute path,
    a ``..`` or a backslash or NUL."""
    if "\\" in name or "\x00" in name:
        raise UnsafeArchive(f"member {name!r}: backslash or NUL in its path")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise UnsafeArchive(f"member {name!r}: absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafeArchive(f"member {name!r}: '..' in its path")
    return "/".join(parts)


def unpack(data: bytes, fmt: str, limits: Limits = Limits()) -> dict[str, bytes]:
    """The files of archive ``data`` (``fmt``: "tar.gz" or "zip") by relative path, links
    inside the skill replaced by their target's bytes; UnsafeArchive for anything refused."""
    files = _tar(data, limits) if fmt == "tar.gz" else _zip(data, limits)
    if "SKILL.md" not in files:
        raise UnsafeArchive("no SKILL.md at the archive's root")
    return files


def _tar(data: bytes, limits: Limits) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    links: dict[str, str] = {}
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for count, member in enumerate(tar, start=1):
                if count > limits.entries:
                    raise UnsafeArchive(f"more than {limits.entries} entries")
                path = member_path(member.name)
                if member.isdir() or not path:
                    continue
                if member.issym() or member.islnk():
                    links[path] = _link_target(path, member.linkname, member.issym())
                    continue
                if not member.isfile():
                    raise UnsafeArchive(f"member {member.name!r}: not a file, folder or link")
                total += member.size
                if total > limits.total_bytes:
                    raise UnsafeArchive(f"unpacks to more than {limits.total_bytes} bytes")
                handle = tar.extractfile(member)
                files[path] = handle.read(member.size + 1) if handle else b""
                if len(files[path]) != member.size:
                    raise UnsafeArchive(f"member {member.name!r}: size differs from its header")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise UnsafeArchive(f"not a readable .tar.gz archive ({exc})") from exc
    return _resolve_links(files, links)


def _zip(data: bytes, limits: Limits) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    links: dict[str, str] = {}
    total = 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if len(infos) > limits.entries:
                raise UnsafeArchive(f"more than {limits.entries} entries")
            for info in infos:
                path = member_path(info.filename)
                if info.is_dir() or not path:
                    continue
                budget = limits.total_bytes - total
                with archive.open(info) as handle:
                    content = handle.read(budget + 1)  # never trust the declared size
                total += len(content)
                if total > limits.total_bytes:
                    raise UnsafeArchive(f"unpacks to more than {limits.total_bytes} bytes")
                if (info.external_attr >> 16) & 0o170000 == 0o120000:  # a symlink
                    links[path] = _link_target(path, content.decode("utf-8", "replace"), True)
                else:
                    files[path] = content
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
        raise UnsafeArchive(f"not a readable .zip archive ({exc})") from exc
    return _resolve_links(files, links)


def _link_target(path: str, target: str, symbolic: bool) -> str:
    """The archive path a link at ``path`` names; UnsafeArchive when it leaves the skill."""
    if target.startswith("/") or "\\" in target or "\x00" in target:
        raise UnsafeArchive(f"link {path!r} -> {target!r}: leaves the skill")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target)
                                if symbolic else target)
    if joined == ".." or joined.startswith("../"):
        raise UnsafeArchive(f"link {path!r} -> {target!r}: leaves the skill")
    return joined


def _resolve_links(files: dict[str, bytes], links: dict[str, str]) -> dict[str, bytes]:
    for path, target in links.items():
        hops = 0
        while target in links and hops < MAX_LINK_HOPS:
            target, hops = links[target], hops + 1
        if target not in files:
            raise UnsafeArchive(f"link {path!r}: its target is not a file of the skill")
        files[path] = files[target]
    return files
