"""The content scan's results kept between builds, by skill digest and scanner version
(``<index_dir>/admission/scan-cache.json``): a build scans only the skills whose digest it has
not scanned with this scanner, and a new scanner version rescans every skill."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from router.admission.model import Finding
from router.admission.scanner import ScanOutcome, installed_version, scan

SCAN_CACHE = Path("admission") / "scan-cache.json"


def cached_scan(folders: Mapping[str, str], scanner_path: str, index_dir: str | Path
                ) -> ScanOutcome:
    """The scan of ``folders`` (folder -> digest), from the cache where it holds the folder's
    digest for the scanner's version, else by running the scanner."""
    path = Path(index_dir) / SCAN_CACHE
    installed = installed_version(scanner_path)
    if not installed.ran:
        return installed
    version, known = _read(path)
    if version != installed.version:  # a new scanner: every skill again
        known = {}
    todo = [f for f, d in folders.items() if d not in known]
    outcome = scan(sorted(todo), scanner_path) if todo else installed
    if not outcome.ran:
        return outcome
    for folder, found in outcome.findings.items():
        known[folders[folder]] = [f.to_dict() for f in found]
    _write(path, outcome.version, known)
    findings = {f: [Finding.from_dict(r) for r in known.get(d, [])] for f, d in folders.items()}
    return ScanOutcome(outcome.version, findings, outcome.warnings)


def _read(path: Path) -> tuple[str, dict[str, list[dict[str, str]]]]:
    try:
        data = json.loads(path.read_text("utf-8"))
        return str(data["version"]), dict(data["skills"])
    except (OSError, ValueError, KeyError, TypeError):
        return "", {}


def _write(path: Path, version: str, known: Mapping[str, Sequence[dict[str, str]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".scan-cache-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": version, "skills": dict(known)}, fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
