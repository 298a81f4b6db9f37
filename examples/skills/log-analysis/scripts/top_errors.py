#!/usr/bin/env python3
"""Group error lines in a log file by normalised message and print JSON counts.

Usage: top_errors.py LOGFILE [--since ISO_TIMESTAMP] [--pattern REGEX] [--top 20]
Works with plain-text logs and JSON lines (uses the "level"/"message"/"time" keys when present).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter

NOISE = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b\d+(\.\d+)?\b"), "<n>"),
    (re.compile(r"'[^']*'|\"[^\"]*\""), "<str>"),
]
TIMESTAMP = re.compile(r"^\S*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}")


def parse(line: str) -> tuple[str, str, str]:
    """Return (timestamp, level, message) for one log line."""
    line = line.rstrip("\n")
    if line.startswith("{"):
        try:
            rec = json.loads(line)
            return str(rec.get("time", rec.get("timestamp", ""))), str(rec.get("level", "")), str(rec.get("message", rec.get("msg", "")))
        except json.JSONDecodeError:
            pass
    match = TIMESTAMP.match(line)
    ts = match.group(0) if match else ""
    level = next((lv for lv in ("FATAL", "ERROR", "WARN", "INFO", "DEBUG") if lv in line[:80]), "")
    return ts, level, line[len(ts):].strip()


def normalise(message: str) -> str:
    for pattern, repl in NOISE:
        message = pattern.sub(repl, message)
    return message[:200]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logfile")
    parser.add_argument("--since", default="")
    parser.add_argument("--pattern", default=r"ERROR|FATAL|Exception|Traceback")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    wanted = re.compile(args.pattern)

    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    try:
        fh = open(args.logfile, encoding="utf-8", errors="replace")
    except OSError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    with fh:
        for line in fh:
            ts, level, message = parse(line)
            if args.since and ts and ts.replace(" ", "T") < args.since:
                continue
            if not (wanted.search(level) or wanted.search(message)):
                continue
            key = normalise(message)
            counts[key] += 1
            first.setdefault(key, ts)
            last[key] = ts
    top = [
        {"count": n, "message": key, "first_seen": first[key], "last_seen": last[key]}
        for key, n in counts.most_common(args.top)
    ]
    json.dump({"total_matches": sum(counts.values()), "groups": top}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
