#!/usr/bin/env python3
# /// script
# dependencies = ["Pillow>=10.0"]
# ///
"""Resize and convert images in bulk; print a JSON summary.

Usage:
  resize_images.py SRC [--out DIR] [--max-width N] [--max-height N]
                   [--format webp|jpeg|png] [--quality 80]
  resize_images.py SRC --info
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from PIL import Image, ImageOps

EXTENSIONS = {".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff"}


def iter_images(src: Path) -> list[Path]:
    if src.is_file():
        return [src]
    return sorted(p for p in src.rglob("*") if p.suffix.lower() in EXTENSIONS)


def main() -> int:
    parser = argparse.ArgumentParser(description="Resize and convert images in bulk")
    parser.add_argument("src", type=Path)
    parser.add_argument("--out", type=Path, default=Path("resized"))
    parser.add_argument("--max-width", type=int)
    parser.add_argument("--max-height", type=int)
    parser.add_argument("--format", choices=["webp", "jpeg", "png"])
    parser.add_argument("--quality", type=int, default=80)
    parser.add_argument("--info", action="store_true", help="only print image facts")
    args = parser.parse_args()

    files = iter_images(args.src)
    if not files:
        print(f"Error: no images found under {args.src}", file=sys.stderr)
        return 1

    results = []
    for path in files:
        with Image.open(path) as img:
            if args.info:
                results.append({"file": str(path), "format": img.format, "size": img.size, "mode": img.mode})
                continue
            img = ImageOps.exif_transpose(img)
            bound = (args.max_width or img.width, args.max_height or img.height)
            img.thumbnail(bound)  # keeps aspect ratio and never upscales
            fmt = args.format or (img.format or path.suffix.lstrip(".")).lower()
            if fmt == "jpeg" and img.mode in ("RGBA", "LA", "P"):
                background = Image.new("RGB", img.size, "white")
                background.paste(img.convert("RGBA"), mask=img.convert("RGBA").getchannel("A"))
                img = background
            rel = path.relative_to(args.src) if args.src.is_dir() else Path(path.name)
            target = (args.out / rel).with_suffix("." + ("jpg" if fmt == "jpeg" else fmt))
            target.parent.mkdir(parents=True, exist_ok=True)
            img.save(target, format=fmt.upper(), quality=args.quality, optimize=True)
            results.append(
                {"file": str(path), "out": str(target), "bytes_before": path.stat().st_size,
                 "bytes_after": target.stat().st_size, "size": img.size}
            )
    json.dump({"images": results}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
