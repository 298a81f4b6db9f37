"""The content scan's results kept between builds, by skill digest and scanner version
(``<index_dir>/admission/scan-cache.json``): a build scans only the skills whose digest it has
not scanned with this scanner, and a new scanner version rescans every skill. What a process
last read or wrote of the file is kept with the file's identity (inode, size, modification
time), so a build that follows another in the process neither parses the file again nor
encodes again the entries it already wrote."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from router.admission.model import Finding
from router.admission.scanner import ScanOutcome, installed_version, scan
from router.common.memo import FileIdentity, Memo, file_key

SCAN_CACHE = Path("admission") / "scan-cache.json"


def cached_scan(folders: Mapping[str, str], scanner_path: str, index_dir: str | Path,
                workers: int = 0) -> ScanOutcome:
    """The scan of ``folders`` (folder -> digest), from the cache where it holds the folder's
    digest for the scanner's version, else by running the scanner (over ``workers``
    processes for a large scan: ``scanner.scan``)."""
    path = Path(index_dir) / SCAN_CACHE
    installed = installed_version(scanner_path)
    if not installed.ran:
        return installed
    version, known, made = _read(path)
    if version != installed.version:  # a new scanner: every skill again
        known, made = {}, _Made()
    todo = [f for f, d in folders.items() if d not in known]
    outcome = scan(sorted(todo), scanner_path, workers=workers) if todo else installed
    if not outcome.ran:
        return outcome
    for folder, found in outcome.findings.items():
        known[folders[folder]] = [f.to_dict() for f in found]
        made.forget(folders[folder])
    if todo or version != outcome.version:
        _write(path, outcome.version, known, made)
    findings = {f: made.findings(d, known.get(d, [])) for f, d in folders.items()}
    return ScanOutcome(outcome.version, findings, outcome.warnings)


@dataclass
class _Made:
    """What this process made of the cache's entries (by digest): each one's JSON text as
    written and its findings as read."""

    text: dict[str, str] = field(default_factory=dict)
    parsed: dict[str, tuple[Finding, ...]] = field(default_factory=dict)

    def forget(self, digest: str) -> None:
        self.text.pop(digest, None)
        self.parsed.pop(digest, None)

    def json(self, digest: str, entry: list[dict[str, str]]) -> str:
        if digest not in self.text:
            self.text[digest] = json.dumps(entry)
        return self.text[digest]

    def findings(self, digest: str, entry: list[dict[str, str]]) -> list[Finding]:
        if digest not in self.parsed:
            self.parsed[digest] = tuple(Finding.from_dict(r) for r in entry)
        return list(self.parsed[digest])

    def copy(self) -> _Made:
        return _Made(dict(self.text), dict(self.parsed))


Known = dict[str, list[dict[str, str]]]  # digest -> findings
# (path, its identity on disk) -> the scanner's version, the entries and what was made of them
_KEPT: Memo[tuple[str, FileIdentity], tuple[str, Known, _Made]] = Memo(8)


def _read(path: Path) -> tuple[str, Known, _Made]:
    """The cache's scanner version and entries, with what this process made of them where it
    read or wrote the file as it is now."""
    try:
        kept = _KEPT.get(file_key(path))
        if kept is not None:
            return kept[0], dict(kept[1]), kept[2].copy()
        data = json.loads(path.read_text("utf-8"))
        version, known = str(data["version"]), dict(data["skills"])
    except (OSError, ValueError, KeyError, TypeError):
        return "", {}, _Made()
    _KEPT.put(file_key(path), (version, dict(known), _Made()))
    return version, known, _Made()


def _write(path: Path, version: str, known: Known, made: _Made) -> None:
    """Replace the cache with ``json.dump``'s text of ``{"version", "skills"}``."""
    text = "{\"version\": " + json.dumps(version) + ", \"skills\": {" + ", ".join(
        json.dumps(digest) + ": " + made.json(digest, found)
        for digest, found in known.items()) + "}}"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".scan-cache-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        _KEPT.put(file_key(path), (version, dict(known), made.copy()))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
