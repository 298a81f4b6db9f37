"""The content scan behind one small adapter: cisco-ai-skill-scanner's offline analyzers run
in a worker process (``scan_worker.py``) on the scanner's own import path, and come back as
``Finding`` records. The scanner is optional: without it (or when its worker fails) the
outcome carries a warning that the scan did not run, and no findings.

The worker runs apart because the scanner pins libraries (protobuf among them) at versions the
router cannot import beside its own; ``path`` is the folder it was installed into
(``pip install --target``), ``admission.scanner_path`` in the configuration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from router.admission.model import Finding, Severity

SCANNER = "cisco-ai-skill-scanner"
WORKER = Path(__file__).with_name("scan_worker.py")
_SEVERITIES = {"critical": Severity.CRITICAL, "high": Severity.HIGH, "medium": Severity.MEDIUM,
               "low": Severity.LOW, "info": Severity.INFO}


@dataclass(frozen=True)
class ScanOutcome:
    """Findings by folder, the scanner's version ("" when it did not run) and a warning for
    each thing that kept the scan from running or from reading a folder."""

    version: str = ""
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def ran(self) -> bool:
        return bool(self.version)


def installed_version(path: str = "", timeout: float = 60.0) -> ScanOutcome:
    """The version of the scanner installed under ``path``, with no scan (``version`` empty
    and a warning when it is not there)."""
    return _run("version", path, timeout)


def scan(folders: Sequence[str], path: str = "", timeout: float = 600.0) -> ScanOutcome:
    """Scan each skill folder of ``folders`` with the scanner installed under ``path`` (or on
    the interpreter's own path when empty)."""
    if not folders:
        return ScanOutcome()
    return _run(list(folders), path, timeout)


def _run(request: object, path: str, timeout: float) -> ScanOutcome:
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (path, env.get("PYTHONPATH", "")) if p)
    try:
        done = subprocess.run([sys.executable, str(WORKER)], input=json.dumps(request),
                              capture_output=True, text=True, env=env, timeout=timeout,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _not_run(f"its worker failed: {exc}")
    if done.returncode != 0:
        return _not_run(f"its worker exited {done.returncode}: {_tail(done.stderr)}")
    try:
        return parse_output(done.stdout)
    except (ValueError, KeyError, TypeError) as exc:
        return _not_run(f"its worker's answer is unreadable: {exc}")


def parse_output(text: str) -> ScanOutcome:
    """The outcome of one worker answer (``scan_worker.py``'s stdout)."""
    data = json.loads(text)
    if data.get("missing") is not None or not data.get("version"):
        return _not_run(f"{SCANNER} is not installed ({data.get('missing', 'no version')})")
    findings: dict[str, list[Finding]] = {}
    for folder, rows in data["results"].items():
        findings[folder] = sorted(_finding(row) for row in rows
                                  if str(row["severity"]).lower() in _SEVERITIES)
    warnings = tuple(f"the content scan could not read {folder}: {message}"
                     for folder, message in sorted(data.get("errors", {}).items()))
    return ScanOutcome(str(data["version"]), findings, warnings)


def _finding(row: dict[str, object]) -> Finding:
    where = f" ({row['file']}" + (f":{row['line']}" if row.get("line") else "") + ")" \
        if row.get("file") else ""
    return Finding(rule=f"scan:{row['rule']}", severity=_SEVERITIES[str(row["severity"]).lower()],
                   message=f"{row['message']}{where}"[:500], source="scanner",
                   file=str(row.get("file") or ""))


def _not_run(why: str) -> ScanOutcome:
    return ScanOutcome(warnings=(f"the content scan did not run: {why}",))


def _tail(text: str, limit: int = 300) -> str:
    return text.strip().splitlines()[-1][:limit] if text.strip() else "no message"
