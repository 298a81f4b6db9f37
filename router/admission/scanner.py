"""The content scan behind one small adapter: cisco-ai-skill-scanner's offline analyzers run
in a worker process (``scan_worker.py``) on the scanner's own import path, and come back as
``Finding`` records. The scanner is optional: without it (or when its worker fails) the
outcome carries a warning that the scan did not run, and no findings.

The worker runs apart because the scanner pins libraries (protobuf among them) at versions the
router cannot import beside its own; ``path`` is the folder it was installed into
(``pip install --target``): ``admission.scanner_path`` in the configuration, else the first of
``.scanner`` in the working folder and ``.scanner`` beside the router's package (where
``make scanner`` installs it) that holds it (``locate``); ``off`` turns the scan off.

A scan is asked in requests of ``CHUNK`` folders, each within the timeout (a catalog of 20k
real skills takes about ten minutes of one core to scan); from ``PARALLEL_FROM`` folders on
they are shared out over up to ``MAX_WORKERS`` worker processes, one per core
(``scan_process.ask_all``)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from router.admission import scan_process
from router.admission.model import Finding, Severity
from router.common.workers import usable_cpus

SCANNER = "cisco-ai-skill-scanner"
PINNED = "2.3.2"  # the version `make scanner` installs
INSTALL = (f"install it with `make scanner` (in a checkout) or `pip install --target .scanner "
           f"{SCANNER}=={PINNED}`, or set admission.scanner_path")
FOLDER = ".scanner"
SETTING_ENV = "SKILL_ROUTER_ADMISSION_SCANNER_PATH"
OFF = frozenset({"off", "none", "no", "false"})
CHUNK = 250  # folders a request asks a worker to scan (a timeout bounds each request)
PARALLEL_FROM = 1000  # folders from which a scan is shared out over several workers ...
MAX_WORKERS = 4  # ... at most this many (each starts in about five seconds)
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


@dataclass(frozen=True)
class Located:
    """Where the scanner is installed ("" when the scan cannot run), and why not."""

    path: str = ""
    why: str = ""
    off: bool = False  # turned off on purpose: no warning


def default_folders() -> list[Path]:
    """Where the scanner is looked for when ``admission.scanner_path`` is unset: ``.scanner`` in
    the working folder, then beside the router's package (a checkout's root)."""
    here = Path.cwd() / FOLDER
    beside = Path(__file__).resolve().parents[2] / FOLDER
    return [here] if here.resolve() == beside else [here, beside]


def locate(setting: str, *, env: Mapping[str, str] | None = None,
           folders: Sequence[Path] | None = None) -> Located:
    """The scanner's folder for the configuration's ``setting`` (``admission.scanner_path``;
    unset, the environment's override, then the first of ``folders`` that holds the
    scanner's package)."""
    value = setting.strip() or (os.environ if env is None else env).get(SETTING_ENV, "").strip()
    if value.lower() in OFF:
        return Located(why="it is turned off (admission.scanner_path: off)", off=True)
    if value:
        return Located(value)
    looked = list(default_folders() if folders is None else folders)
    for folder in looked:
        if (folder / "skill_scanner" / "__init__.py").is_file():
            return Located(str(folder))
    where = ", ".join(str(f) for f in looked)
    return Located(why=f"{SCANNER} is not installed (looked in {where}); {INSTALL}")


def installed_version(path: str = "", timeout: float = 60.0) -> ScanOutcome:
    """The version of the scanner installed under ``path``, with no scan (``version`` empty
    and a warning when it is not there)."""
    return _run(["version"], path, timeout)


def scan(folders: Sequence[str], path: str = "", timeout: float = 600.0,
         workers: int = 0) -> ScanOutcome:
    """Scan each skill folder of ``folders`` with the scanner installed under ``path`` (or on
    the interpreter's own path when empty): in requests of ``CHUNK`` folders, each within
    ``timeout``, shared out over ``workers`` processes (0: ``scan_workers()``) when there are
    ``PARALLEL_FROM`` folders or more, else asked of one."""
    if not folders:
        return ScanOutcome()
    chunks = [list(folders[i:i + CHUNK]) for i in range(0, len(folders), CHUNK)]
    share = 1 if len(folders) < PARALLEL_FROM else (workers or scan_workers())
    return _run(chunks, path, timeout, share)


def scan_workers() -> int:
    """How many worker processes a large scan uses: this process's cores, at most
    ``MAX_WORKERS`` (each holds the scanner's analyzers, about 150 MB)."""
    return max(1, min(usable_cpus(), MAX_WORKERS))


def _run(requests: Sequence[object], path: str, timeout: float, workers: int = 1) -> ScanOutcome:
    """The workers' answers, merged (``scan_process``: the kept worker, and others for a large
    scan); the scan did not run when any request failed."""
    try:
        lines = scan_process.ask_all(requests, path, timeout, workers)
    except (OSError, scan_process.WorkerFailed) as exc:
        return _not_run(str(exc) if isinstance(exc, scan_process.WorkerFailed)
                        else f"its worker failed: {exc}")
    try:
        outcomes = [parse_output(line) for line in lines]
    except (ValueError, KeyError, TypeError) as exc:
        return _not_run(f"its worker's answer is unreadable: {exc}")
    for outcome in outcomes:
        if not outcome.ran:
            return outcome
    findings = {folder: found for o in outcomes for folder, found in o.findings.items()}
    return ScanOutcome(outcomes[0].version, findings,
                       tuple(w for o in outcomes for w in o.warnings))


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
