"""The model APIs' tool search answers as ``catalog_text`` (pure, no I/O).

- ``CatalogFormat.ANTHROPIC_TOOL_REFERENCES``: a JSON list of ``{"type": "tool_reference",
  "tool_name": ...}``, the content of the ``tool_result`` that answers a client-side tool
  search of the Anthropic Messages API (the tools declared with ``defer_loading: true``);
- ``CatalogFormat.OPENAI_TOOL_SEARCH_OUTPUT``: ``{"type": "tool_search_output", "execution":
  "client", "tools": [...]}`` with one ``{"type": "function", "name", "description",
  "parameters", "strict": false}`` per tool, the item of the OpenAI Responses API that answers a
  ``tool_search_call`` (the gateway adds its ``call_id``).

Only callable skills are tools: an entry without parameters is never given here (the router
leaves instruction-only skills out of these formats). Names are the tools' API names
(``Skill.api_name``), the ones ``skill-router tools`` declares. Entries are joined by ``", "``
as the JSON format's are, so a catalog's size grows by the same rule.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from router.routing.model import CatalogFormat

OPENAI_OPEN = '{"type": "tool_search_output", "execution": "client", "tools": ['


def render_tool(name: str, description: str, parameters: str, fmt: CatalogFormat) -> str:
    """One tool in ``fmt``; ``parameters`` is the skill's JSON Schema as JSON text."""
    if fmt is CatalogFormat.ANTHROPIC_TOOL_REFERENCES:
        return json.dumps({"type": "tool_reference", "tool_name": name}, ensure_ascii=False)
    return (f'{{"type": "function", "name": {json.dumps(name, ensure_ascii=False)}, '
            f'"description": {json.dumps(description, ensure_ascii=False)}, '
            f'"parameters": {parameters or "{}"}, "strict": false}}')


def render_block(parts: Sequence[str], fmt: CatalogFormat) -> str:
    """The answer holding the rendered ``parts`` ("" when there are none: no tool fits)."""
    if not parts:
        return ""
    if fmt is CatalogFormat.ANTHROPIC_TOOL_REFERENCES:
        return "[" + ", ".join(parts) + "]"
    return OPENAI_OPEN + ", ".join(parts) + "]}"


def declaration(name: str, description: str, parameters: Mapping[str, Any],
                fmt: CatalogFormat) -> dict[str, Any]:
    """One tool as declared once in every request, its definition deferred until a search
    finds it (``skill-router tools``): the Anthropic ``name``, ``description``,
    ``input_schema``, or the OpenAI ``type: function``, ``name``, ``description``,
    ``parameters``; ``defer_loading: true`` in both."""
    if fmt is CatalogFormat.ANTHROPIC_TOOL_REFERENCES:
        return {"name": name, "description": description, "input_schema": dict(parameters),
                "defer_loading": True}
    if fmt is CatalogFormat.OPENAI_TOOL_SEARCH_OUTPUT:
        return {"type": "function", "name": name, "description": description,
                "parameters": dict(parameters), "strict": False, "defer_loading": True}
    raise ValueError(f"{fmt.value} is not a tool search format")
