"""ToolAlpaca: instructions for one API, each answered by calls to that API's functions.

Each API's ``Function_Description`` gives its functions (description, then ``Parameters:`` and
``Output:`` lines); the request is an ``Instructions`` entry and the needed tools the functions in
its ``Golden_Answers``; the API's other functions are the distractors. Only the evaluation files
are read (see ``FILES``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from router.encoders.tools_model.rows import Row, Tool

from .common import SourceError, SourceTree, make_row, make_tool

# data/train_data.json is not read: it is absent from the snapshot the pairs file was built
# from, and reading it when present would make the output depend on the checkout.
FILES = {"real": "data/eval_real.json", "simulated": "data/eval_simulated.json"}
SOURCE = "toolalpaca"


def files_read() -> list[str]:
    return list(FILES.values())


def parse_function(name: str, text: str) -> Tool | None:
    description, _, rest = text.partition("\nParameters:")
    params: list[str] = []
    first = rest.split("\nOutput:", 1)[0].strip()
    try:
        parsed = json.loads(first) if first else {}
    except json.JSONDecodeError:
        parsed = {}
    if isinstance(parsed, dict):
        params = [str(k) for k in parsed]
    return make_tool(name, description, params)


def _actions(answer: Any) -> set[str]:
    if not isinstance(answer, list):
        return set()
    return {str(step.get("Action")) for step in answer if isinstance(step, dict)}


def rows(tree: SourceTree) -> Iterator[Row]:
    for label, path in FILES.items():
        try:
            apis = json.loads(tree.read(path))
        except json.JSONDecodeError as exc:
            raise SourceError(f"{path}: not JSON: {exc}") from exc
        for api_index, api in enumerate(apis):
            functions = api.get("Function_Description") or {}
            if not isinstance(functions, dict):
                continue
            tools = {n: parse_function(n, str(t)) for n, t in sorted(functions.items())}
            pairs = zip(api.get("Instructions") or [], api.get("Golden_Answers") or [],
                        strict=False)
            for number, (request, answer) in enumerate(pairs):
                needed = _actions(answer) & set(tools)
                if not needed:
                    continue
                row = make_row(
                    f"{SOURCE}/{label}/{api_index}-{number}", SOURCE, str(request),
                    [tools[n] for n in sorted(needed)],
                    [t for n, t in tools.items() if n not in needed],
                )
                if row is not None:
                    yield row
