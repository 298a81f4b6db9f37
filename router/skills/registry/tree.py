"""Registry skills on disk and back: ``materialize`` writes a registry's verified skills as a
folder of skill folders (what discovery reads, and what serves their files with the registry
offline), ``export`` writes skill folders as a 0.2.0 well-known index with its artifacts and
digests."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path

from router.skills.limits import SKIP_DIRS
from router.skills.registry.fetch import Fetched
from router.skills.registry.index import ARCHIVE, SCHEMA_0_2_0, SKILL_MD, WELL_KNOWN


def materialize(skills: Iterable[Fetched], dest: Path) -> Path:
    """Write each skill's files to ``dest/<name>/`` and swap the whole folder in at once;
    returns ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}-"))
    try:
        for skill in skills:
            for rel, data in sorted(skill.files.items()):
                path = staging / skill.entry.name / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        old = dest.with_name(f".{dest.name}-old")
        shutil.rmtree(old, ignore_errors=True)
        if dest.exists():
            os.replace(dest, old)
        os.replace(staging, dest)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dest


def skill_files(base_dir: Path) -> dict[str, bytes]:
    """A skill folder's files by relative path (hidden files, skipped folders and links
    left out)."""
    out = {}
    for root, dirs, names in os.walk(base_dir):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            path = Path(root) / name
            if not name.startswith(".") and path.is_file() and not path.is_symlink():
                out[path.relative_to(base_dir).as_posix()] = path.read_bytes()
    return out


def tar_gz(files: dict[str, bytes]) -> bytes:
    """A reproducible .tar.gz of ``files`` (sorted, no times, no owners)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(files):
            info = tarfile.TarInfo(rel)
            info.size, info.mode = len(files[rel]), 0o644
            tar.addfile(info, io.BytesIO(files[rel]))
    return gzip.compress(raw.getvalue(), mtime=0)


def export(skills: Iterable[tuple[str, str, Path]], root: Path) -> dict[str, object]:
    """Write ``skills`` ((name, description, folder)) under ``root`` as a well-known tree:
    ``root/.well-known/agent-skills/index.json``, a ``skill-md`` for a skill with no other
    file, a ``.tar.gz`` archive for one with; returns the index written."""
    base = root / WELL_KNOWN.rsplit("/", 1)[0].lstrip("/")
    base.mkdir(parents=True, exist_ok=True)
    entries = []
    for name, description, folder in sorted(skills):
        files = skill_files(folder)
        if set(files) == {"SKILL.md"}:
            kind, rel, data = SKILL_MD, f"{name}/SKILL.md", files["SKILL.md"]
        else:
            kind, rel, data = ARCHIVE, f"{name}.tar.gz", tar_gz(files)
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(data)
        entries.append({"name": name, "type": kind, "description": description, "url": rel,
                        "digest": "sha256:" + hashlib.sha256(data).hexdigest()})
    index: dict[str, object] = {"$schema": SCHEMA_0_2_0, "skills": entries}
    (base / "index.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return index
