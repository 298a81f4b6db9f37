"""API-Bank (DAMO-ConvAI repository, folder api-bank): level-1 and level-2 dialogues.

The request is the user's turns of one dialogue, joined in order; the needed tools are the APIs
the dialogue calls (not ``ToolSearcher``, the level-2 search step), described by the class
attributes ``description`` and ``input_parameters`` in ``api-bank/apis/*.py`` (read with ``ast``,
never imported). No distractors are offered.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from typing import Any

from router.encoders.tools_model.rows import Row, Tool

from .common import SourceError, SourceTree, make_row, make_tool

BASE = "api-bank"
DIALOGUES = {
    "level-1": f"{BASE}/lv1-lv2-samples/level-1-given-desc",
    "level-2": f"{BASE}/lv1-lv2-samples/level-2-toolsearcher",
}
SEARCH_STEP = "ToolSearcher"
SOURCE = "apibank"


def files_read() -> list[str]:
    return [f"{BASE}/apis/*.py", *(f"{folder}/*.jsonl" for folder in DIALOGUES.values())]


def api_classes(source: str) -> dict[str, Tool | None]:
    """Class name -> tool, for each class of ``source`` with a string ``description``."""
    out: dict[str, Tool | None] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        attrs: dict[str, Any] = {}
        for stmt in node.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)):
                try:
                    attrs[stmt.targets[0].id] = ast.literal_eval(stmt.value)
                except (ValueError, SyntaxError, TypeError):
                    continue
        description = attrs.get("description")
        if isinstance(description, str):
            params = attrs.get("input_parameters")
            names = [str(k) for k in params] if isinstance(params, dict) else []
            out[node.name] = make_tool(node.name, description, names)
    return out


def _turns(text: str, path: str) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                turns.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SourceError(f"{path}:{number}: not JSON: {exc}") from exc
    return turns


def rows(tree: SourceTree) -> Iterator[Row]:
    tools: dict[str, Tool | None] = {}
    for path in tree.list(f"{BASE}/apis"):
        if path.endswith(".py"):
            tools.update(api_classes(tree.read(path)))
    for label, folder in DIALOGUES.items():
        for path in tree.list(folder):
            if not path.endswith(".jsonl"):
                continue
            turns = _turns(tree.read(path), path)
            request = " ".join(str(t.get("text", "")) for t in turns if t.get("role") == "User")
            called = sorted({str(t.get("api_name")) for t in turns if t.get("role") == "API"}
                            - {SEARCH_STEP})
            if not called or any(name not in tools for name in called):
                continue
            stem = path.rsplit("/", 1)[1].removesuffix(".jsonl")
            row = make_row(f"{SOURCE}/{label}/{stem}", SOURCE, request,
                           [tools[name] for name in called])
            if row is not None:
                yield row
