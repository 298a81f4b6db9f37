#!/usr/bin/env python3
# /// script
# dependencies = ["pdfplumber>=0.11"]
# ///
"""Extract every table from a PDF into CSV files and print a JSON summary.

Usage: extract_tables.py INPUT.pdf [--pages 1-3,7] [--out DIR]
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path


def parse_pages(spec: str | None, count: int) -> list[int]:
    if not spec:
        return list(range(1, count + 1))
    pages: list[int] = []
    for part in spec.split(","):
        if "-" in part:
            start, end = part.split("-", 1)
            pages.extend(range(int(start), int(end) + 1))
        else:
            pages.append(int(part))
    return [p for p in pages if 1 <= p <= count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdf", type=Path)
    parser.add_argument("--pages", help="page list such as 1-3,7 (1-based)")
    parser.add_argument("--out", type=Path, default=Path("tables"))
    args = parser.parse_args()

    try:
        import pdfplumber
    except ImportError:
        print("Error: pdfplumber is not installed (pip install pdfplumber)", file=sys.stderr)
        return 2
    if not args.pdf.is_file():
        print(f"Error: no such file: {args.pdf}", file=sys.stderr)
        return 1

    args.out.mkdir(parents=True, exist_ok=True)
    summary = []
    with pdfplumber.open(args.pdf) as pdf:
        for page_no in parse_pages(args.pages, len(pdf.pages)):
            for i, table in enumerate(pdf.pages[page_no - 1].extract_tables(), start=1):
                rows = [[(cell or "").strip() for cell in row] for row in table]
                if not rows:
                    continue
                path = args.out / f"page{page_no:03d}_table{i}.csv"
                with path.open("w", newline="", encoding="utf-8") as fh:
                    csv.writer(fh).writerows(rows)
                summary.append(
                    {"page": page_no, "rows": len(rows), "columns": len(rows[0]), "path": str(path)}
                )
    json.dump({"tables": summary}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
