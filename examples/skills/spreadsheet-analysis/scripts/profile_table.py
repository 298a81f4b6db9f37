#!/usr/bin/env python3
# /// script
# dependencies = ["pandas>=2.0", "openpyxl>=3.1"]
# ///
"""Print a JSON profile of a CSV or Excel sheet: rows, columns, types, nulls, samples.

Usage: profile_table.py FILE [--sheet NAME] [--sep ,] [--samples 3]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd


def load(path: Path, sheet: str | None, sep: str) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix in {".xlsx", ".xlsm", ".xls"}:
        return pd.read_excel(path, sheet_name=sheet or 0)
    if suffix in {".csv", ".txt", ".tsv"}:
        return pd.read_csv(path, sep="\t" if suffix == ".tsv" else sep, low_memory=False)
    raise SystemExit(f"Error: unsupported file type {suffix!r}; expected .csv, .tsv or .xlsx")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--sheet")
    parser.add_argument("--sep", default=",")
    parser.add_argument("--samples", type=int, default=3)
    args = parser.parse_args()
    if not args.file.is_file():
        print(f"Error: no such file: {args.file}", file=sys.stderr)
        return 1

    df = load(args.file, args.sheet, args.sep)
    columns = []
    for name in df.columns:
        col = df[name]
        entry = {
            "name": str(name),
            "dtype": str(col.dtype),
            "nulls": int(col.isna().sum()),
            "distinct": int(col.nunique(dropna=True)),
            "samples": [str(v) for v in col.dropna().unique()[: args.samples]],
        }
        if pd.api.types.is_numeric_dtype(col):
            entry.update(min=float(col.min()), max=float(col.max()), mean=round(float(col.mean()), 4))
        columns.append(entry)
    json.dump({"rows": len(df), "columns": columns}, sys.stdout, indent=2, default=str)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
