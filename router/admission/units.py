"""A skill's text cut into the units its instruction checks read (pure): each line of a code
block, each sentence of prose (a paragraph's wrapped lines joined), with the line it starts on,
and whether its section heading warns against what follows ("## Never do this")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_FENCE = re.compile(r"^\s*(?:```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_ROW = re.compile(r"^\s*\|")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_SENTENCE_END = re.compile(
    r"(?:(?<=[A-Za-z]{2}[.!?;])|(?<=[)\]`'\"][.!?;]))\s+(?=[A-Z0-9`\"'(\[*_~$-])")
# Words that turn what follows into a warning, a prohibition or a condition the user sets.
NEGATION = re.compile(
    r"\b(?:never|not|no|nor|cannot|avoid|avoiding|don't|doesn't|mustn't|shouldn't|won't|"
    r"dangerous|unsafe|risky|careful|beware|warning|prohibit\w*|forbid\w*|prevent\w*|block\w*|"
    r"refuse\w*|reject\w*|deny|denies|detect\w*|flag\w*|instead\s+of|rather\s+than|"
    r"anti-?patterns?|(?:if|when|unless)\s+the\s+user\s+(?:says|asks|wants|requests|prefers|"
    r"explicitly|tells|opts|chooses|enables|passes|sets))\b|n't\b", re.IGNORECASE)
_WARNING_HEADING = re.compile(
    r"\b(?:never|don't|do\s+not|avoid|dangerous|danger|unsafe|forbidden|prohibited|"
    r"anti-?patterns?|pitfalls?|red\s+flags?|what\s+not\s+to|mistakes?|warnings?)\b",
    re.IGNORECASE)
_COMMENT = re.compile(r"^\s*(?:#|//|--|;|rem\b)", re.IGNORECASE)


@dataclass(frozen=True)
class Unit:
    """One sentence of prose or one line of code, the line it starts on (from 1), whether it
    is code, and whether its section's heading warns against what it holds."""

    text: str
    line: int
    code: bool = False
    warned: bool = False


def units(text: str, *, code: bool = False) -> Iterator[Unit]:
    """The units of ``text`` (a skill file, or any bundled file; ``code``: every line is code,
    as in a script)."""
    if code:
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip() and not _COMMENT.match(line):
                yield Unit(line, number, True)
        return
    in_code, warned = False, False
    paragraph: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            yield from _prose(paragraph, start, warned)
            paragraph, in_code = [], not in_code
            continue
        if in_code:
            if line.strip():
                yield Unit(line, number, True, warned)
            continue
        heading = bool(_HEADING.match(line))
        if not line.strip() or heading or _ITEM.match(line) or _ROW.match(line):
            yield from _prose(paragraph, start, warned)
            paragraph = []
        if _ROW.match(line):  # a table's row is a unit of its own
            yield Unit(line.strip(), number, False, warned)
            continue
        if heading:
            warned = bool(_WARNING_HEADING.search(line))
            continue
        if line.strip():
            if not paragraph:
                start = number
            paragraph.append(line.strip())
    yield from _prose(paragraph, start, warned)


def _prose(lines: list[str], start: int, warned: bool) -> Iterator[Unit]:
    if not lines:
        return
    joined = " ".join(lines)
    offsets = [0]
    for text in lines[:-1]:
        offsets.append(offsets[-1] + len(text) + 1)
    begin = 0
    for match in [*_SENTENCE_END.finditer(joined), None]:
        end = match.start() if match else len(joined)
        sentence = joined[begin:end].strip()
        if sentence:
            line = start + sum(1 for o in offsets[1:] if o <= begin)
            yield Unit(sentence, line, False, warned)
        if match:
            begin = match.end()


def negated(unit: Unit, at: int) -> bool:
    """Whether what stands at offset ``at`` of ``unit`` is warned against: a negation,
    warning or user-set condition before it in the same unit, or a warning heading above."""
    return unit.warned or bool(NEGATION.search(unit.text, 0, at))
