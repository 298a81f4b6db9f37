"""APIBench (gorilla repository, data/apibench): an instruction and the one model API it needs.

The request is the ``Instruction`` of the ``code`` field; the tool is ``api_data``: its
``api_name`` and ``description`` (``functionality`` when the description is empty). There are no
distractors. A generic ``api_name`` (``model_id``) is replaced by the model the ``api_call``
loads. The sets are templated (up to 227 instructions per API name), so at most ``PER_API`` rows
are kept per API name, chosen by a stable hash of the request.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

from router.encoders.tools_model.rows import Row

from .common import SourceError, SourceTree, make_row, make_tool

DATA = "data/apibench"
# huggingface_train and tensorflow_train are not read: they are absent from the snapshot the
# pairs file was built from, and reading them when present would make the output depend on the
# checkout.
FILES = ("huggingface_eval", "tensorflow_eval", "torchhub_train", "torchhub_eval")
PER_API = 5
SOURCE = "apibench"
# api_name values that name no API; the API is then named from its api_call.
GENERIC_NAMES = frozenset({"", "model_id", "torch.hub.load", "none"})
_TFHUB = re.compile(r"tfhub\.dev/([^'\"\s]+?)(?:/\d+)?['\"]")
_TORCH_MODEL = re.compile(
    r"model\s*=\s*['\"]([^'\"]+)|load\(\s*['\"][^'\"]+['\"]\s*,\s*['\"]([^'\"]+)")
_INSTRUCTION = re.compile(r"Instruction'?\s*:\s*(.*?)(?:#{3}\s*Output|,\s*'Output'\s*:|\Z)", re.S)


def files_read() -> list[str]:
    return [f"{DATA}/{name}.json" for name in FILES]


def _parameters(value: Any) -> list[str]:
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return []
    if isinstance(value, dict):
        return [str(k) for k in value]
    return []


def instruction(code: str) -> str:
    match = _INSTRUCTION.search(code)
    return match.group(1).replace("###Input:", "Input:").strip() if match else ""


def api_name(api: dict[str, Any]) -> str:
    """``api_name``, or for a generic one (``model_id``) the model its ``api_call`` loads."""
    name = str(api.get("api_name") or "")
    if name.strip().lower() not in GENERIC_NAMES:
        return name
    call = str(api.get("api_call") or "")
    hub = _TFHUB.search(call)
    if hub:
        return hub.group(1)
    torch = _TORCH_MODEL.search(call)
    return (torch.group(1) or torch.group(2)) if torch else name


def rows(tree: SourceTree) -> Iterator[Row]:
    for path in files_read():
        stem = path.rsplit("/", 1)[1].removesuffix(".json")
        for number, line in enumerate(tree.read(path).splitlines()):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SourceError(f"{path}:{number + 1}: not JSON: {exc}") from exc
            api = item.get("api_data") or {}
            description = str(api.get("description") or "")
            if description.strip() in ("", "None"):
                description = str(api.get("functionality") or "")
            tool = make_tool(api_name(api), description,
                             _parameters(api.get("api_arguments")))
            row = make_row(f"{SOURCE}/{stem}/{number}", SOURCE,
                           instruction(str(item.get("code", ""))), [tool])
            if row is not None:
                yield row
