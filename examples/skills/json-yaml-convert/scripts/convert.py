#!/usr/bin/env python3
# /// script
# requires-python = ">=3.11"
# dependencies = ["pyyaml>=6.0", "tomli-w>=1.0"]
# ///
"""Convert between JSON, YAML and TOML, or just validate a file.

Usage: convert.py INPUT --to json|yaml|toml [--check] [--indent 2]
The input format is taken from the file extension (.json, .yaml/.yml, .toml).
"""
from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

import yaml


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys instead of keeping the last one."""

    def construct_mapping(self, node, deep=False):  # type: ignore[override]
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load(path: Path):
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix.lower()
    if suffix == ".json":
        return json.loads(text)
    if suffix in {".yaml", ".yml"}:
        return yaml.load(text, Loader=UniqueKeyLoader)
    if suffix == ".toml":
        return tomllib.loads(text)
    raise ValueError(f"unsupported input extension {suffix!r}")


def dump(data, fmt: str, indent: int) -> str:
    if fmt == "json":
        return json.dumps(data, indent=indent, ensure_ascii=False, default=str) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, indent=indent)
    import tomli_w

    return tomli_w.dumps(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", type=Path)
    parser.add_argument("--to", choices=["json", "yaml", "toml"], required=True)
    parser.add_argument("--check", action="store_true", help="validate only, print nothing on success")
    parser.add_argument("--indent", type=int, default=2)
    args = parser.parse_args()
    try:
        data = load(args.input)
    except (OSError, ValueError, yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        print(f"Error: cannot parse {args.input}: {exc}", file=sys.stderr)
        return 1
    if args.check:
        return 0
    sys.stdout.write(dump(data, args.to, args.indent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
