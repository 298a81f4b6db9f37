"""Read SKILL.md folders out of bare git mirrors of public skill collections (I/O at the edge).

A source is one repository at one commit; ``Source.accepts`` decides which of its skill folders
may be redistributed (the repository's licence, or the skill's own declared licence where a
collection mirrors many upstreams).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

PERMISSIVE = re.compile(r"^\s*[\"']?(mit|apache[- ]?2(\.0)?)\b", re.IGNORECASE)
TEXT_SUFFIXES = frozenset({".md", ".txt", ".py", ".sh", ".js", ".ts", ".json", ".yaml", ".yml"})
FILE_CHARS = 8_000  # a bundled file longer than this is left out
BUNDLE_CHARS = 16_000  # bundled text kept per skill, all files together


@dataclass(frozen=True)
class Source:
    """One public repository: where its skills live and which of them we may ship."""

    repo: str  # owner/name
    commit: str
    licence: str  # the repository's licence, or "per skill"
    under: tuple[str, ...] = ("",)  # path prefixes to take skills from
    skip: tuple[str, ...] = ()  # path prefixes (or substrings, case-insensitive) left out
    per_skill_licence: bool = False  # only skills whose frontmatter declares a permissive one
    folder_licence: str = ""  # a skill folder's LICENSE.txt must contain this text, if set

    def wants(self, skill_dir: str) -> bool:
        low = skill_dir.lower()
        return (any(skill_dir.startswith(u) for u in self.under)
                and not any(s.lower() in low for s in self.skip))


@dataclass
class RawSkill:
    source: Source
    folder: str  # path of the skill's folder in the repository
    skill_md: str
    files: dict[str, str] = field(default_factory=dict)  # relative path -> text
    licence_text: str = ""  # the folder's own LICENSE.txt, if any


def _git(git_dir: str, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, *args], input=stdin,
                          capture_output=True, check=True).stdout


def _blobs(git_dir: str, commit: str, paths: list[str]) -> dict[str, bytes]:
    """The content of ``paths`` at ``commit`` (one ``git cat-file --batch`` call)."""
    request = "".join(f"{commit}:{p}\n" for p in paths).encode()
    out = _git(git_dir, "cat-file", "--batch", stdin=request)
    blobs: dict[str, bytes] = {}
    pos = 0
    for path in paths:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        blobs[path] = out[pos:pos + size]
        pos += size + 1
    return blobs


def _text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def _bundled(folder: str, listing: list[tuple[str, int]], skill_dirs: set[str]) -> list[str]:
    """Small text files inside ``folder`` that belong to no nested skill, smallest first."""
    picked: list[tuple[int, str]] = []
    prefix = f"{folder}/" if folder else ""
    for path, size in listing:
        if not path.startswith(prefix) or path.endswith("/SKILL.md") or path == "SKILL.md":
            continue
        p = PurePosixPath(path)
        if (p.suffix.lower() not in TEXT_SUFFIXES or size > FILE_CHARS
                or p.name.upper().startswith("LICENSE")):
            continue
        parents = {str(a) for a in p.parents}
        if any(d != folder and d in parents for d in skill_dirs):
            continue
        picked.append((size, path))
    out, total = [], 0
    for size, path in sorted(picked):
        if total + size > BUNDLE_CHARS:
            break
        out.append(path)
        total += size
    return out


def read_source(git_dir: str, source: Source) -> Iterator[RawSkill]:
    """Every wanted skill folder of ``source`` with its SKILL.md and small bundled text files."""
    listing = []
    for line in _git(git_dir, "ls-tree", "-r", "-l", source.commit).decode().splitlines():
        meta, path = line.split("\t", 1)
        size = meta.split()[3]
        listing.append((path, int(size) if size.isdigit() else 0))
    skill_md = [p for p, _ in listing if PurePosixPath(p).name == "SKILL.md"]
    dirs = {str(PurePosixPath(p).parent) if "/" in p else "" for p in skill_md}
    wanted = sorted(d for d in dirs if source.wants(d))
    plan = {d: _bundled(d, listing, dirs) for d in wanted}
    paths = [f"{d}/SKILL.md" if d else "SKILL.md" for d in wanted]
    paths += [f for files in plan.values() for f in files]
    paths += [f"{d}/LICENSE.txt" for d in wanted]
    blobs = _blobs(git_dir, source.commit, paths)
    for d in wanted:
        md = _text(blobs.get(f"{d}/SKILL.md" if d else "SKILL.md", b""))
        if not md:
            continue
        files = {}
        for f in plan[d]:
            text = _text(blobs.get(f, b""))
            if text is not None and text.strip():
                files[str(PurePosixPath(f).relative_to(d or "."))] = text
        licence = _text(blobs.get(f"{d}/LICENSE.txt", b"")) or ""
        yield RawSkill(source, d, md, files, licence)
