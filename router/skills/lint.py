"""Description and body quality checks (pure: no disk). Every finding is a warning.

Rules follow the Agent Skills authoring guidance: the description says what the skill does and
when to use it, in the third person, specifically, starting with a verb; the name is not a
generic word; the body stays under 500 lines; and files referenced from the body sit at most one
folder below the skill directory (``references/guide.md``, not ``references/api/v2/guide.md``).
"""

from __future__ import annotations

import logging
import re

from router.skills.model import Diagnostic, Level, Skill
from router.skills.parse import body_diagnostics

log = logging.getLogger(__name__)

MIN_DESCRIPTION_WORDS = 8
MIN_DESCRIPTION_CHARS = 40
VAGUE_NAMES = frozenset({"helper", "helpers", "utils", "util", "utilities", "tools", "tool",
                         "misc", "documents", "stuff", "skill", "my-skill", "test"})
_TRIGGER = re.compile(r"\b(when|whenever|if the user|if asked|in response to)\b|"
                      r"\buse (it |this (skill )?)?(on|for|only|to|with|if|during|before|after)\b",
                      re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(I'm|I'll|I've|I|me|my|we|we'll|our)\b(?!/)")
_SECOND_PERSON = re.compile(r"\b(you can|you'll|you will|lets you|helps you|allows you|"
                            r"enables you)\b", re.IGNORECASE)
_VAGUE = re.compile(r"\b(helps? (you )?with|stuff|various|miscellaneous|misc|etc\.?|"
                    r"and more)\b", re.IGNORECASE)
_NOT_A_VERB = frozenset({"a", "an", "the", "this", "that", "these", "those", "it", "its", "i",
                         "we", "you", "my", "our", "your", "skill", "tool", "helper", "utility",
                         "for", "with", "to", "of", "in", "on", "about", "when", "if", "all",
                         "some", "any", "various", "used", "useful", "can", "will"})
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def lint_description(description: str, path: str) -> list[Diagnostic]:
    """Warnings about how well ``description`` lets a model decide when to use the skill."""
    found: list[str] = []
    text = description.strip()
    words = text.split()
    if len(words) < MIN_DESCRIPTION_WORDS or len(text) < MIN_DESCRIPTION_CHARS:
        found.append(f"description is too short to route on ({len(words)} words); say what "
                     "the skill does, on what, and when to use it")
    if not _TRIGGER.search(text):
        found.append("description does not say when to use the skill "
                     "(add e.g. 'Use when the user ...')")
    if _FIRST_PERSON.search(text) or _SECOND_PERSON.search(text):
        found.append("description should be in the third person ('Extracts ...', "
                     "not 'I can ...' or 'you can ...')")
    vague = sorted({m.group(0).lower() for m in _VAGUE.finditer(text)})
    if vague:
        found.append(f"description is vague ({', '.join(vague)}); name concrete actions, "
                     "file types and triggers")
    first = words[0].strip("\"'`*_([").lower() if words else ""
    if first == "use":
        found.append("description should start with what the skill does; put 'Use when ...' "
                     "after it")
    elif first in _NOT_A_VERB or (first and not first[0].isalpha()):
        found.append(f"description should start with a verb ('Extracts', 'Analyze'), "
                     f"not {words[0]!r}")
    return [Diagnostic(Level.WARNING, path, message) for message in found]


def _references(body: str) -> list[str]:
    text = _FENCE.sub("", body)
    targets = []
    for match in _LINK.finditer(text):
        target = match.group(1).split("#", 1)[0].split("?", 1)[0]
        if target and not _SCHEME.match(target) and not target.startswith("/"):
            targets.append(target)
    return targets


def lint_body(body: str, path: str) -> list[Diagnostic]:
    """Warnings about body length and references nested more than one folder deep."""
    diags = body_diagnostics(body, path)
    for target in dict.fromkeys(_references(body)):
        parts = [p for p in target.replace("\\", "/").split("/") if p not in ("", ".")]
        if ".." in parts:
            message = f"reference {target!r} points outside the skill directory"
        elif len(parts) > 2:
            message = (f"reference {target!r} is nested {len(parts) - 1} folders deep; keep "
                       "referenced files one level below SKILL.md")
        else:
            continue
        diags.append(Diagnostic(Level.WARNING, path, message))
    return diags


def lint_skill(skill: Skill, body: str | None = None) -> list[Diagnostic]:
    """All quality warnings for ``skill``; ``body`` (frontmatter stripped) enables body checks."""
    diags = lint_description(skill.description, skill.location)
    if skill.name in VAGUE_NAMES:
        diags.append(Diagnostic(Level.WARNING, skill.location,
                                f"name {skill.name!r} is generic; prefer an action name "
                                "such as 'processing-pdfs'"))
    if body is not None:
        diags.extend(lint_body(body, skill.location))
    return diags
