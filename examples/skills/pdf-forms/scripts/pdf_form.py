#!/usr/bin/env python3
# /// script
# dependencies = ["pypdf>=5.0"]
# ///
"""List or fill the AcroForm fields of a PDF.

Usage:
  pdf_form.py fields FORM.pdf
  pdf_form.py fill FORM.pdf VALUES.json OUT.pdf [--flatten]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pypdf import PdfReader, PdfWriter


def list_fields(path: Path) -> int:
    fields = PdfReader(path).get_fields() or {}
    out = []
    for name, field in fields.items():
        out.append(
            {
                "name": name,
                "type": str(field.get("/FT", "")).lstrip("/"),
                "value": str(field.get("/V", "")),
                "options": [str(o) for o in field.get("/_States_", [])],
            }
        )
    json.dump({"fields": out}, sys.stdout, indent=2)
    print()
    return 0


def fill(path: Path, values_path: Path, out_path: Path, flatten: bool) -> int:
    values = json.loads(values_path.read_text(encoding="utf-8"))
    values = {k: ("/Yes" if v is True else "/Off" if v is False else v) for k, v in values.items()}
    writer = PdfWriter(clone_from=PdfReader(path))
    known = set((writer.get_fields() or {}).keys())
    unknown = sorted(set(values) - known)
    if unknown:
        print(f"Error: unknown field names: {', '.join(unknown)}", file=sys.stderr)
        return 1
    writer.set_need_appearances_writer(True)
    # page=None updates the fields on every page; flatten bakes values into the page content
    writer.update_page_form_field_values(None, values, auto_regenerate=False, flatten=flatten)
    with out_path.open("wb") as fh:
        writer.write(fh)
    print(json.dumps({"written": str(out_path), "fields_set": len(values)}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description="List or fill PDF form fields")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_fields = sub.add_parser("fields")
    p_fields.add_argument("pdf", type=Path)
    p_fill = sub.add_parser("fill")
    p_fill.add_argument("pdf", type=Path)
    p_fill.add_argument("values", type=Path)
    p_fill.add_argument("out", type=Path)
    p_fill.add_argument("--flatten", action="store_true")
    args = parser.parse_args()
    if args.cmd == "fields":
        return list_fields(args.pdf)
    return fill(args.pdf, args.values, args.out, args.flatten)


if __name__ == "__main__":
    sys.exit(main())
