"""Render a narrowed catalog as the exact text an agent injects (pure, no I/O).

Formats follow the Agent Skills client guide: an ``<available_skills>`` XML block, JSON, or a
Markdown list, each followed by the short behavioural instruction for the activation mode; or
one of the model APIs' tool search answers (``router.routing.tool_search``: callable skills
only, no instruction).
No skills -> the empty string: no block and no instruction.

Skill text is untrusted: XML output drops every character XML 1.0 forbids (C0 controls, NUL,
U+FFFE, ...) before escaping, so the block is always well-formed; a Markdown entry is one line
(line breaks in a description or name collapse to spaces), so a description cannot add headings
or entries; a description over the spec's 1,024 characters is cut (indexing already cuts it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from html import escape
from typing import NamedTuple

from router.common.textsafe import one_line, xml_chars
from router.config import ActivationMode
from router.routing import tool_search
from router.routing.model import CatalogFormat
from router.skills.limits import truncate_description

TOOL_INSTRUCTION = (
    "The following skills provide specialized instructions for specific tasks.\n"
    "When a task matches a skill's description, call the activate_skill tool\n"
    "with the skill's name to load its full instructions."
)
FILE_INSTRUCTION = (
    "The following skills provide specialized instructions for specific tasks.\n"
    "When a task matches a skill's description, use your file-read tool to load\n"
    "the SKILL.md at the listed location before proceeding.\n"
    "When a skill references relative paths, resolve them against the skill's\n"
    "directory (the parent of SKILL.md) and use absolute paths in tool calls."
)


class Entry(NamedTuple):
    """One catalog line: what the model sees of a skill (a tuple: ``render_entry``'s cache
    hashes and compares it in C)."""

    name: str
    description: str
    location: str = ""
    tool_name: str = ""  # a callable skill's API name (the tool search formats)
    parameters: str = ""  # a callable skill's JSON Schema as JSON text ("" = not callable)


def instruction(activation_mode: ActivationMode) -> str:
    return FILE_INSTRUCTION if activation_mode == ActivationMode.FILE else TOOL_INSTRUCTION


def _xml(text: str) -> str:
    """``text`` escaped for XML character data (``&``, ``<`` and ``>``), without the
    characters XML 1.0 forbids."""
    return escape(xml_chars(text), quote=False)


@lru_cache(maxsize=4096)  # a turn renders its few entries twice (catalog and tool); pure
def render_entry(entry: Entry, fmt: CatalogFormat) -> str:
    """One entry in ``fmt``; the unit a character budget counts (never cut in half)."""
    entry = entry._replace(description=truncate_description(entry.description))
    if fmt.tools_only:
        return tool_search.render_tool(entry.tool_name or entry.name, entry.description,
                                       entry.parameters, fmt)
    if fmt is CatalogFormat.XML:
        location = f"    <location>{_xml(entry.location)}</location>\n" if entry.location else ""
        return (f"  <skill>\n    <name>{_xml(entry.name)}</name>\n"
                f"    <description>{_xml(entry.description)}</description>\n"
                f"{location}  </skill>\n")
    if fmt is CatalogFormat.JSON:
        data = {"name": entry.name, "description": entry.description}
        if entry.location:
            data["location"] = entry.location
        return json.dumps(data, ensure_ascii=False)
    location = f" (`{_md(entry.location)}`)" if entry.location else ""
    return f"- **{_md(entry.name)}**: {_md(entry.description)}{location}\n"


def _md(text: str) -> str:
    """``text`` for one Markdown list line: no line breaks, no forbidden characters."""
    return one_line(xml_chars(text))


def render(entries: Sequence[Entry], fmt: CatalogFormat,
           activation_mode: ActivationMode = ActivationMode.TOOL) -> str:
    """The whole block plus instruction, or ``""`` when there is nothing to show."""
    if not entries:
        return ""
    if fmt.tools_only:  # JSON for an API, no instruction (router.routing.tool_search)
        return tool_search.render_block([render_entry(e, fmt) for e in entries], fmt)
    return f"{instruction(activation_mode)}\n\n{block(entries, fmt)}\n"


def block(entries: Sequence[Entry], fmt: CatalogFormat) -> str:
    """The entries' block in one of the catalog formats (XML, JSON, Markdown), without the
    instruction or a final line break."""
    parts = [render_entry(e, fmt) for e in entries]
    if fmt is CatalogFormat.XML:
        return "<available_skills>\n" + "".join(parts) + "</available_skills>"
    if fmt is CatalogFormat.JSON:
        return '{"available_skills": [' + ", ".join(parts) + "]}"
    return "## Available skills\n\n" + "".join(parts).rstrip("\n")


def grown_size(size: int, count: int, added: Sequence[Entry], removed: Sequence[Entry],
               fmt: CatalogFormat, activation_mode: ActivationMode = ActivationMode.TOOL) -> int:
    """``len(render(...))`` of a catalog of ``count`` entries rendering to ``size`` characters,
    once ``added`` entries join it and ``removed`` ones leave (entries render independently;
    JSON adds one ", " between two), without rendering it again."""
    total = count + len(added) - len(removed)
    if total <= 0:
        return 0
    if count == 0:
        return len(render(list(added), fmt, activation_mode))
    delta = sum(len(render_entry(e, fmt)) for e in added) - \
        sum(len(render_entry(e, fmt)) for e in removed)
    if fmt is CatalogFormat.JSON or fmt.tools_only:
        delta += 2 * (len(added) - len(removed))
    return size + delta


def activate_tool(entries: Sequence[Entry], fmt: CatalogFormat = CatalogFormat.XML) -> str:
    """An ``activate_skill`` tool definition (JSON) whose description carries the catalog, for
    gateways that place the catalog in a tool description instead of the system prompt."""
    if not entries or fmt.tools_only:  # the tools are the answer: no activate_skill
        return ""
    block = render(entries, fmt, ActivationMode.TOOL)
    tool = {
        "name": "activate_skill",
        "description": "Load a skill's full instructions by name.\n\n" + block,
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string", "enum": [e.name for e in entries],
                                    "description": "The name of the skill to activate."}},
            "required": ["name"],
            "additionalProperties": False,
        },
    }
    return json.dumps(tool, ensure_ascii=False)


def fit_budget(entries: Sequence[Entry], fmt: CatalogFormat, activation_mode: ActivationMode,
               max_chars: int) -> int:
    """How many leading entries fit in ``max_chars`` of rendered text (0 = no budget)."""
    if max_chars <= 0:
        return len(entries)
    count = 0
    for n in range(1, len(entries) + 1):
        if len(render(entries[:n], fmt, activation_mode)) > max_chars:
            break
        count = n
    return count
