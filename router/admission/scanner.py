"""The content scan behind one small adapter: cisco-ai-skill-scanner's offline analyzers run
in a worker process (``scan_worker.py``) on the scanner's own import path, and come back as
``Finding`` records. The scanner is optional: without it (or when its worker fails) the
outcome carries a warning that the scan did not run, and no findings.

The worker runs apart because the scanner pins libraries (protobuf among them) at versions the
router cannot import beside its own; ``path`` is the folder it was installed into
(``pip install --target``): ``admission.scanner_path`` in the configuration, else the first of
``.scanner`` in the working folder and ``.scanner`` beside the router's package (where
``make scanner`` installs it) that holds it (``locate``); ``off`` turns the scan off."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from router.admission import scan_process
from router.admission.model import Finding, Severity

SCANNER = "cisco-ai-skill-scanner"
PINNED = "2.3.2"  # the version `make scanner` installs
INSTALL = (f"install it with `make scanner` (in a checkout) or `pip install --target .scanner "
           f"{SCANNER}=={PINNED}`, or set admission.scanner_path")
FOLDER = ".scanner"
SETTING_ENV = "SKILL_ROUTER_ADMISSION_SCANNER_PATH"
OFF = frozenset({"off", "none", "no", "false"})
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
    return _run("version", path, timeout)


def scan(folders: Sequence[str], path: str = "", timeout: float = 600.0) -> ScanOutcome:
    """Scan each skill folder of ``folders`` with the scanner installed under ``path`` (or on
    the interpreter's own path when empty)."""
    if not folders:
        return ScanOutcome()
    return _run(list(folders), path, timeout)


def _run(request: object, path: str, timeout: float) -> ScanOutcome:
    """The worker's answer, from the one this process keeps running (``scan_process``)."""
    try:
        line = scan_process.ask(request, path, timeout)
    except (OSError, scan_process.WorkerFailed) as exc:
        return _not_run(str(exc) if isinstance(exc, scan_process.WorkerFailed)
                        else f"its worker failed: {exc}")
    try:
        return parse_output(line)
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
