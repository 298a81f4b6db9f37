"""Berkeley Function Calling Leaderboard (gorilla repository).

Each question offers function docs; the possible-answer file names the functions a right answer
calls. Needed tools are those; distractors are the other functions offered with the question.
Categories without a needed function (irrelevance, relevance) and the multi-turn, memory, web
search and format-sensitivity sets are not read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from router.encoders.tools_model.rows import Row, Tool

from .common import SourceError, SourceTree, make_row, make_tool

DATA = "berkeley-function-call-leaderboard/bfcl_eval/data"
CATEGORIES = (
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
    "parallel_multiple", "live_simple", "live_multiple", "live_parallel",
    "live_parallel_multiple",
)
SOURCE = "bfcl"


def files_read() -> list[str]:
    out: list[str] = []
    for cat in CATEGORIES:
        out += [f"{DATA}/BFCL_v4_{cat}.json", f"{DATA}/possible_answer/BFCL_v4_{cat}.json"]
    return out


def _jsonl(tree: SourceTree, path: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for number, line in enumerate(tree.read(path).splitlines(), 1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SourceError(f"{path}:{number}: not JSON: {exc}") from exc
    return items


def _tool(function: dict[str, Any]) -> Tool | None:
    params = function.get("parameters") or {}
    props = params.get("properties") if isinstance(params, dict) else None
    names = list(props) if isinstance(props, dict) else []
    return make_tool(str(function.get("name", "")), str(function.get("description", "")), names)


def _request(question: list[Any]) -> str:
    turn = question[0] if question and isinstance(question[0], list) else question
    return " ".join(
        str(m.get("content", "")) for m in turn if isinstance(m, dict) and m.get("role") == "user"
    )


def _needed(ground_truth: list[Any]) -> set[str]:
    return {name for call in ground_truth if isinstance(call, dict) for name in call}


def rows(tree: SourceTree) -> Iterator[Row]:
    for cat in CATEGORIES:
        questions = _jsonl(tree, f"{DATA}/BFCL_v4_{cat}.json")
        answers = {a["id"]: a for a in _jsonl(tree, f"{DATA}/possible_answer/BFCL_v4_{cat}.json")}
        for item in questions:
            answer = answers.get(item.get("id"))
            if answer is None:
                continue
            offered = {str(f.get("name")): f for f in item.get("function", [])}
            needed = _needed(answer.get("ground_truth", []))
            if not needed or not needed <= set(offered):
                continue
            index = str(item["id"]).removeprefix(f"{cat}_")
            row = make_row(
                f"{SOURCE}/{cat}/{index}", SOURCE, _request(item.get("question", [])),
                [_tool(offered[n]) for n in sorted(needed)],
                [_tool(f) for n, f in sorted(offered.items()) if n not in needed],
            )
            if row is not None:
                yield row
