"""Request-like sentences of a SKILL.md (pure): what a user could ask that the skill takes,
written by the skill's author outside its description.

Four kinds, taken in turn (one of each before a second of any): example requests listed in the
frontmatter (``triggers``, ``examples``, ...), requests quoted in the body (a bullet or line that
is a quoted sentence, or ``User: ...``), the items of a "When to use" section, and the body's
"Use when ..." sentences; the body's prose sentences (``router.calibration.self_requests``) when
those give too few. The description itself never counts: a candidate it holds, or one that
near-duplicates it, is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import yaml

from router.calibration.self_requests import body_sentences

from .common import normalise_text
from .overlap import NearDuplicateIndex

MIN_WORDS = 4
MAX_WORDS = 60
BODY_CHARS = 6000  # the part of a body read for sentences
EXAMPLE_KEYS = ("triggers", "trigger", "examples", "example_prompts", "example-prompts",
                "prompts", "use_cases", "use-cases", "when_to_use", "when-to-use")
_QUOTED = re.compile(r'^(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?(?:user|prompt|example)?'
                     r'(?:\*\*)?:?\s*["\u201c](.+?)["\u201d]\s*$', re.IGNORECASE)
_USER_LINE = re.compile(r"^(?:[-*+]\s+)?(?:\*\*)?(?:user|human)(?:\*\*)?\s*:\s*(.+)$",
                        re.IGNORECASE)
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_WHEN_HEADING = re.compile(r"\b(when to use|when to invoke|use cases?|use this skill|"
                           r"triggers?|example (?:requests|prompts|queries))\b", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_USE_WHEN = re.compile(r"\buse (?:this skill )?(?:when|for|to)\b", re.IGNORECASE)
_CODE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_MARKUP = re.compile(r"\*\*|__|`")


def split_skill_md(text: str) -> tuple[dict[str, Any], str]:
    """The frontmatter (a dict; empty when none or not YAML) and the body of a SKILL.md."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return {}, text
    try:
        front = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return {}, "\n".join(lines[end + 1:])
    return (front if isinstance(front, dict) else {}), "\n".join(lines[end + 1:])


def _clean(text: str) -> str:
    return " ".join(_MARKUP.sub("", text).split()).strip(" -:")


def _fits(text: str) -> bool:
    words = text.split()
    return MIN_WORDS <= len(words) <= MAX_WORDS and sum(c.isalpha() for c in text) > len(text) / 2


def front_examples(front: dict[str, Any]) -> list[str]:
    """Example requests listed under the frontmatter's example keys (also inside ``metadata``)."""
    out: list[str] = []
    for holder in (front, front.get("metadata")):
        if not isinstance(holder, dict):
            continue
        for key in EXAMPLE_KEYS:
            value = holder.get(key)
            items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
            out += [_clean(str(v)) for v in items if isinstance(v, str | int | float)]
    return [t for t in out if _fits(t)]


def quoted_requests(body: str) -> list[str]:
    """Lines of the body (outside code) that are a quoted sentence or a ``User:`` turn."""
    out = []
    for line in _CODE.sub("\n", body).splitlines():
        line = line.strip().lstrip(">").strip()
        found = _QUOTED.match(line) or _USER_LINE.match(line)
        if found:
            text = _clean(found.group(1).strip('"\u201c\u201d'))
            if _fits(text):
                out.append(text)
    return out


def when_items(body: str) -> list[str]:
    """The bullets of the body's "When to use" (or "Use cases", "Triggers") sections."""
    out: list[str] = []
    inside = False
    for line in _CODE.sub("\n", body).splitlines():
        heading = _HEADING.match(line.strip())
        if heading:
            inside = bool(_WHEN_HEADING.search(heading.group(1)))
            continue
        bullet = _BULLET.match(line) if inside else None
        if bullet:
            text = _clean(bullet.group(1).strip('"\u201c\u201d'))
            if _fits(text):
                out.append(text)
    return out


def use_when_sentences(body: str) -> list[str]:
    """The body's prose sentences that say when to use the skill."""
    return [s for s in body_sentences(body[:BODY_CHARS], BODY_CHARS) if _USE_WHEN.search(s)]


def candidates(skill_md: str, description: str) -> list[list[str]]:
    """Each kind's request-like texts of a SKILL.md, in the order taken (see the module's
    docstring), without any the description holds or near-duplicates."""
    front, body = split_skill_md(skill_md)
    kinds = [front_examples(front), quoted_requests(body), when_items(body),
             use_when_sentences(body), body_sentences(body[:BODY_CHARS], BODY_CHARS)]
    desc = NearDuplicateIndex([description])
    norm_desc = normalise_text(description)
    seen: set[str] = set()
    out: list[list[str]] = []
    for kind in kinds:
        kept = []
        for text in kind:
            norm = normalise_text(text)
            if not norm or norm in seen or norm in norm_desc or desc.matches(text):
                continue
            seen.add(norm)
            kept.append(text)
        out.append(kept)
    return out


def pick(kinds: Sequence[Sequence[str]], most: int, boilerplate: Iterable[str] = ()) -> list[str]:
    """Up to ``most`` texts: the first of each of the first four kinds in turn, then the
    second of each, ...; the body's prose sentences (the last kind) only to fill up. A text
    whose opening is in ``boilerplate`` (see ``opening``) is skipped."""
    shared = set(boilerplate)
    usable = [[t for t in kind if opening(t) not in shared] for kind in kinds]
    chosen: list[str] = []
    preferred, rest = usable[:-1], usable[-1:]
    for depth in range(max((len(k) for k in preferred), default=0)):
        chosen += [k[depth] for k in preferred if depth < len(k)]
    for kind in rest:
        step = max(1, len(kind) // max(1, most))
        chosen += list(kind[::step])
    return chosen[:most]


def opening(text: str, words: int = 5) -> str:
    """A text's first words, to find a template's sentences that many skills share."""
    return " ".join(normalise_text(text).split()[:words])
