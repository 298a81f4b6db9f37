"""IBM NESTFUL: a request answered by a nested sequence of calls.

Needed tools are the distinct functions called in ``output`` (not the ``var_result``
pseudo-call), described by the spec file beside the data. No distractors are offered.
The SGD-derived set is not read: its upstream schemas are CC BY-SA 4.0 (see SOURCES.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from router.encoders.tools_model.rows import Row, Tool

from .common import SourceError, SourceTree, make_row, make_tool

SETS = {
    "executable": "data/executable/executable",
    "glaive": "data/non-executable/non-executable-glaive",
}
SOURCE = "nestful"


def files_read() -> list[str]:
    return [f"{base}-{kind}.json" for base in SETS.values() for kind in ("data", "spec")]


def _load(tree: SourceTree, path: str) -> list[dict[str, Any]]:
    try:
        value = json.loads(tree.read(path))
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(value, list):
        raise SourceError(f"{path}: expected a JSON list")
    return [v for v in value if isinstance(v, dict)]


def _tool(spec: dict[str, Any]) -> Tool | None:
    params = spec.get("query_parameters") or spec.get("arguments") or {}
    names = list(params) if isinstance(params, dict) else []
    return make_tool(str(spec.get("name", "")), str(spec.get("description", "")), names)


def rows(tree: SourceTree) -> Iterator[Row]:
    for label, base in SETS.items():
        specs = {str(s.get("name")): s for s in _load(tree, f"{base}-spec.json")}
        for number, item in enumerate(_load(tree, f"{base}-data.json")):
            calls = item.get("output") or []
            names = sorted({str(c.get("name")) for c in calls
                            if isinstance(c, dict) and c.get("name") != "var_result"})
            if not names or any(n not in specs for n in names):
                continue
            row = make_row(f"{SOURCE}/{label}/{number}", SOURCE, str(item.get("input", "")),
                           [_tool(specs[n]) for n in names])
            if row is not None:
                yield row
