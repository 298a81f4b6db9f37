"""Render an activated skill as the text an agent injects (pure, no I/O).

The content follows the Agent Skills client guide (structured wrapping)::

    <skill_content name="pdf-processing">
    # PDF processing
    ...

    Skill directory: /home/user/.agents/skills/pdf-processing
    Relative paths in this skill are relative to the skill directory.

    <skill_resources>
      <file>scripts/extract.py</file>
      <file>references/pdf-spec-summary.md</file>
      (12 more files not listed)
    </skill_resources>
    </skill_content>

Markers for context compaction: a gateway that trims or summarises older messages should keep
every message (or tool result) that starts with ``CONTENT_OPEN_PREFIX`` and ends with
``CONTENT_CLOSE``; ``is_skill_content`` performs exactly that check. Skill instructions are
lasting guidance, and losing them silently degrades the agent. To keep the markers reliable, a
literal ``</skill_content`` inside a body, in any letter case, is written as ``&lt;/skill_content``
(the case kept).

The skill name, the directory and every resource path are XML-escaped (characters XML 1.0
forbids are dropped); the body is Markdown and
is passed through unchanged otherwise. The ``<skill_resources>`` block is omitted when a skill
bundles no files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from router.common.textsafe import xml_chars

CONTENT_OPEN_PREFIX = "<skill_content"
"""Every activated skill's content starts with this text (followed by `` name="..."``)."""
CONTENT_CLOSE = "</skill_content>"
"""Every activated skill's content ends with this tag."""
RESOURCES_OPEN = "<skill_resources>"
RESOURCES_CLOSE = "</skill_resources>"
DIRECTORY_LABEL = "Skill directory: "
RELATIVE_PATHS_NOTE = "Relative paths in this skill are relative to the skill directory."
_CLOSING_TAG = re.compile(r"<(/\s*skill_content)", re.IGNORECASE)


def is_skill_content(text: str) -> bool:
    """True when ``text`` is one activated skill's content (protect it from compaction)."""
    stripped = text.strip()
    return stripped.startswith(CONTENT_OPEN_PREFIX + " ") and stripped.endswith(CONTENT_CLOSE)


def more_files_note(omitted: int, complete: bool = True) -> str:
    """The line that says the resource list was cut."""
    if omitted <= 0:
        return "(more files may exist; the list is incomplete)"
    files = "file" if omitted == 1 else "files"
    return f"({omitted} more {files} not listed)" if complete else (
        f"({omitted} or more {files} not listed)")


def render_resources(resources: Sequence[str], truncated: bool, omitted: int = 0,
                     complete: bool = True) -> str:
    """The ``<skill_resources>`` block, or ``""`` when there is nothing to list."""
    if not resources and not truncated:
        return ""
    lines = [RESOURCES_OPEN]
    lines.extend(f"  <file>{escape(path, quote=False)}</file>" for path in resources)
    if truncated:
        lines.append("  " + more_files_note(omitted, complete))
    lines.append(RESOURCES_CLOSE)
    return "\n".join(lines)


def _guard_body(body: str) -> str:
    return _CLOSING_TAG.sub(r"&lt;\1", body.strip())


def render_content(skill_name: str, body: str, skill_dir: str, resources: Sequence[str],
                   truncated: bool, *, omitted: int = 0, complete: bool = True) -> str:
    """Wrap a skill's instructions for injection.

    ``resources`` are paths relative to ``skill_dir``. When ``truncated`` is set the block ends
    with a note: ``omitted`` is how many files were left out (``complete=False`` when that count
    is itself a lower bound).
    """
    name = escape(xml_chars(skill_name))
    parts = [f'{CONTENT_OPEN_PREFIX} name="{name}">']
    guarded = _guard_body(body)
    if guarded:
        parts.append(guarded + "\n")
    parts.append(f"{DIRECTORY_LABEL}{escape(xml_chars(skill_dir), quote=False)}\n"
                 f"{RELATIVE_PATHS_NOTE}")
    block = render_resources(resources, truncated, omitted, complete)
    if block:
        parts.append("\n" + block)
    parts.append(CONTENT_CLOSE)
    return "\n".join(parts)


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence


def manifest_body(name: str, description: str, parameters: Mapping[str, Any] | None) -> str:
    """Markdown describing a callable (``manifest.json``) skill: what it does and its schema."""
    lines = [f"# {name}", "", description.strip(), ""]
    if parameters is None:
        lines.append("This skill takes no arguments.")
        return "\n".join(lines)
    schema = json.dumps(parameters, indent=2, ensure_ascii=False, sort_keys=False)
    fence = _fence(schema)
    lines += [
        f"Call this skill as a tool named `{name}` with arguments that match the JSON Schema "
        "below. Arguments are checked against it before the skill runs.",
        "",
        "## Parameters",
        "",
        f"{fence}json",
        schema,
        fence,
    ]
    return "\n".join(lines)
