"""A skill's body as routing evidence (pure): the excerpt of its SKILL.md instructions that the
lexical index reads beside its name and description.

Real skills say what they do in their body: the description is one line written for the model,
the body names the formats, tools, libraries and steps. Only the start of the body is read
(``index.body_chars``, 2,000 characters by default, cut at a word boundary), so a skill with a
huge body cannot dominate a catalog: BM25's length normalisation then weighs every skill's
document alike. Markdown markup (headings' ``#``, emphasis, table rules, fences) carries no
words and is dropped by the tokenizer; what is left of links and code (library and command
names) is kept, since requests name them.
"""

from __future__ import annotations

import re

DEFAULT_BODY_CHARS = 2000  # measured: docs/routing-quality.md#real-skills
_SPACE = re.compile(r"\s+")


def body_excerpt(body: str, limit: int = DEFAULT_BODY_CHARS) -> str:
    """The first ``limit`` characters of ``body`` with runs of white space made one space, cut
    back to the last whole word; ``""`` when ``limit`` is 0 or less."""
    if limit <= 0 or not body:
        return ""
    text = _SPACE.sub(" ", body[: limit * 2]).strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return cut[:space] if space > limit // 2 else cut
