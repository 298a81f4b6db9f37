"""The content scan's worker: runs cisco-ai-skill-scanner's offline analyzers (static/YARA,
pipeline, behavioral, trigger: no LLM, no cloud) over skill folders and prints their findings
as JSON. It runs as its own process, on the scanner's own import path (``router.admission.
scanner`` starts it): the scanner pins libraries at versions the router cannot import beside
its own. It imports nothing of the router and only the standard library besides the scanner.

stdin: a JSON list of folders (or the string "version": the version alone). stdout:
``{"version": ..., "results": {folder: [finding, ...]}, "errors": {folder: message}}``, each
finding with rule, severity, message and file. With ``--serve`` it answers one request a line
until its stdin closes, its analyzers built once (``router.admission.scan_process`` keeps it
running between a process's scans).
"""

from __future__ import annotations

import json
import sys
from typing import Any

_SCANNER: Any = None  # built once per process: building the analyzers is most of a start


def answer(request: Any) -> dict[str, Any]:
    """The answer to one request: a list of folders, or "version"."""
    global _SCANNER
    try:
        import skill_scanner
    except ImportError as exc:
        return {"version": "", "missing": str(exc)}
    if request == "version":  # the installed version alone (nothing heavy is imported)
        return {"version": skill_scanner.__version__, "results": {}}
    folders = [str(f) for f in request]
    if _SCANNER is None:
        try:
            from skill_scanner.core.analyzer_factory import build_analyzers
            from skill_scanner.core.scan_policy import ScanPolicy
            from skill_scanner.core.scanner import SkillScanner
        except ImportError as exc:
            return {"version": "", "missing": str(exc)}
        policy = ScanPolicy.default()
        analyzers = build_analyzers(policy, use_behavioral=True, use_trigger=True)
        _SCANNER = SkillScanner(analyzers=analyzers, policy=policy)
    results: dict[str, list[dict[str, Any]]] = {}
    errors: dict[str, str] = {}
    for folder in folders:
        try:
            result = _SCANNER.scan_skill(folder, lenient=True)
        except Exception as exc:  # one skill's failure is that skill's error
            errors[folder] = f"{type(exc).__name__}: {exc}"
            continue
        results[folder] = [
            {"rule": f.rule_id, "severity": str(getattr(f.severity, "value", f.severity)),
             "message": f.title + (f": {f.description}" if f.description else ""),
             "file": f.file_path or "", "line": f.line_number or 0,
             "analyzer": f.analyzer or ""}
            for f in result.findings]
    return {"version": skill_scanner.__version__, "results": results, "errors": errors}


def main(argv: list[str]) -> int:
    if "--serve" not in argv:  # one request on stdin, one answer on stdout
        json.dump(answer(json.load(sys.stdin)), sys.stdout)
        return 0
    for line in sys.stdin:  # one request a line, one answer a line, until stdin closes
        if line.strip():
            sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
