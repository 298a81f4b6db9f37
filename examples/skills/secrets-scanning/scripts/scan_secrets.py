#!/usr/bin/env python3
"""Scan files under a directory for likely secrets; print masked JSON findings.

Usage: scan_secrets.py PATH [--max-bytes 1000000]
This is a fast first pass; use gitleaks or trufflehog for history and verified results.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

RULES = {
    "aws-access-key-id": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    "github-token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "slack-token": re.compile(r"\bxox[abpr]-[A-Za-z0-9-]{10,}\b"),
    "private-key": re.compile(r"-----BEGIN (RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----"),
    "generic-assignment": re.compile(
        r"(?i)\b(password|passwd|secret|api_?key|token)\b\s*[:=]\s*['\"]([^'\"\s]{8,})['\"]"
    ),
    "url-with-password": re.compile(r"\b[a-z]+://[^/\s:@]+:[^/\s@]{6,}@"),
}
SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build"}


def mask(value: str) -> str:
    return value[:4] + "…" + f"({len(value)} chars)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--max-bytes", type=int, default=1_000_000)
    args = parser.parse_args()

    findings = []
    for file in sorted(args.path.rglob("*")):
        if not file.is_file() or any(part in SKIP_DIRS for part in file.parts):
            continue
        try:
            if file.stat().st_size > args.max_bytes:
                continue
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # binary or unreadable
        for lineno, line in enumerate(text.splitlines(), start=1):
            for rule, pattern in RULES.items():
                match = pattern.search(line)
                if match:
                    # generic assignments capture the value in group 2; other rules match it whole
                    secret = match.group(2) if rule == "generic-assignment" else match.group(0)
                    findings.append(
                        {"file": str(file), "line": lineno, "rule": rule, "preview": mask(secret)}
                    )
    json.dump({"findings": findings, "count": len(findings)}, sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
