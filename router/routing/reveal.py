"""The two blocks of a catalog that keeps the model's prompt cache (pure, no I/O).

Model APIs cache a prompt's prefix; any byte that changes in the system prompt makes the whole
conversation after it be written again. So besides the per-turn ``catalog_text`` a turn gets:

- ``stable_text``: for the cached system prompt. The instruction (skills arrive in blocks as the
  conversation goes on; any skill of an earlier block may be used) and the caller's always-on
  skills, by name: the same bytes on every turn of every session of one caller, index version
  and format. No skill at all: "".
- ``reveal_text``: the turn's skills (retrieved, or named with ``/name``) the session has not
  been shown yet, as an entries-only block to append after the user's message and keep in the
  history. Always-on and active skills are never in it; nothing new: "".

The tool search formats are append-only already (a search result stays in the conversation):
both blocks are "" for them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from router.routing.catalog import Entry, block
from router.routing.model import CatalogFormat, Reason, RouteResult

_WHERE = {
    CatalogFormat.XML: "<available_skills> blocks",
    CatalogFormat.JSON: '{"available_skills": [...]} objects',
    CatalogFormat.MARKDOWN: '"Available skills" lists',
}
_HOW = {
    "tool": ("When a task matches a skill's description, call the activate_skill tool\n"
             "with the skill's name to load its full instructions."),
    "file": ("When a task matches a skill's description, use your file-read tool to load\n"
             "the SKILL.md at the listed location before proceeding.\n"
             "When a skill references relative paths, resolve them against the skill's\n"
             "directory (the parent of SKILL.md) and use absolute paths in tool calls."),
}
NEW_KINDS = (Reason.RETRIEVED, Reason.EXPLICIT)  # what a reveal may hold


def instruction(fmt: CatalogFormat, activation_mode: str) -> str:
    """The behavioural instruction of the stable block, for ``fmt`` and the activation mode."""
    return (f"Skills provide specialized instructions for specific tasks. They are listed in\n"
            f"{_WHERE[fmt]}: the one below, if any, and more that arrive after user\n"
            f"messages as the conversation goes on. Any skill listed in an earlier block\n"
            f"may be used.\n{_HOW['file' if activation_mode == 'file' else 'tool']}")


def stable_text(always_on: Sequence[Entry], fmt: CatalogFormat, activation_mode: str,
                any_skill: bool) -> str:
    """The stable system block: the instruction and the ``always_on`` entries (sorted by name,
    so the order never depends on the index's rows); "" when the caller has no skill at all
    (not ``any_skill``) or for a tool search format."""
    if fmt.tools_only or not (any_skill or always_on):
        return ""
    text = instruction(fmt, activation_mode)
    if not always_on:
        return text + "\n"
    return f"{text}\n\n{block(sorted(always_on, key=lambda e: e.name), fmt)}\n"


def reveal_block(entries: Sequence[Entry], fmt: CatalogFormat) -> str:
    """The entries-only block of a reveal; "" for no entries or a tool search format."""
    if not entries or fmt.tools_only:
        return ""
    return block(entries, fmt) + "\n"


def split(result: RouteResult, fmt: CatalogFormat, shown: Collection[str],
          include_location: bool) -> RouteResult:
    """``result`` with its reveal: the shown skills retrieved or named that are not in
    ``shown`` (what the session was shown) nor always-on, marked ``first_shown`` and rendered
    as ``reveal_text``. O(the turn's skills)."""
    if fmt.tools_only:
        return result
    always = set(result.always_on)
    skills, entries = [], []
    for skill in result.skills:
        if skill.reason in NEW_KINDS and skill.name not in shown and skill.name not in always:
            skill = replace(skill, first_shown=True)
            entries.append(Entry(skill.name, skill.description,
                                 skill.location if include_location else ""))
        skills.append(skill)
    if not entries:
        return result
    return replace(result, skills=tuple(skills), reveal_text=reveal_block(entries, fmt))
