"""A skill's text cut into the units its instruction checks read (pure): each line of a code
block, each sentence of prose (a paragraph's wrapped lines joined), with the line it starts on,
and whether its section heading warns against what follows ("## Never do this")."""

from __future__ import annotations

import re
from bisect import bisect_right
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
_CLAUSE_END = re.compile(r"[:;]\s|\s[\u2014\u2013-]\s")
_COMMENT = re.compile(r"^\s*(?:#|//|--|;|rem\b)", re.IGNORECASE)


@dataclass(frozen=True)
class Unit:
    """One sentence of prose or one line of code, the lines it spans (from 1), whether it is
    code, and whether its section's heading warns against what it holds."""

    text: str
    line: int
    code: bool = False
    warned: bool = False
    end: int = 0  # its last line (0: ``line``)


@dataclass(frozen=True)
class Doc:
    """One file's units, with its text in lower case and where each line starts, so that a
    ``Gated`` pattern finds the units it may match by substring search over the whole file."""

    path: str
    units: tuple[Unit, ...]
    low: str
    starts: tuple[int, ...]
    by_line: dict[int, tuple[int, ...]]


def doc(path: str, text: str, *, code: bool = False, first_line: int = 1) -> Doc:
    """The ``Doc`` of the file ``path`` holding ``text`` (``first_line``: the line of the file
    ``text`` starts on, for a skill file's body)."""
    shift = first_line - 1
    found = tuple(Unit(u.text, u.line + shift, u.code, u.warned, (u.end or u.line) + shift)
                  for u in units(text, code=code))
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    by_line: dict[int, list[int]] = {}
    for i, unit in enumerate(found):
        for line in range(unit.line - shift, (unit.end or unit.line) - shift + 1):
            by_line.setdefault(line, []).append(i)
    return Doc(path, found, text.lower(), tuple(starts),
               {k: tuple(v) for k, v in by_line.items()})


@dataclass(frozen=True)
class Gated:
    """A pattern behind literal triggers (lower case): groups of words, one of each group in
    any text the pattern matches. It is only run on the units that hold one of each, found
    by substring search over the whole file (far cheaper than the pattern's own search)."""

    rx: re.Pattern[str]
    groups: tuple[tuple[str, ...], ...]

    def lines(self, document: Doc, group: int = 0) -> set[int]:
        """The lines (of the file's text, from 1) that hold a trigger of ``group``."""
        found: set[int] = set()
        low, starts = document.low, document.starts
        for trigger in self.groups[group]:
            at = low.find(trigger)
            while at >= 0:
                line = bisect_right(starts, at)
                found.add(line)
                at = low.find(trigger, starts[line]) if line < len(starts) else -1
        return found

    def candidates(self, document: Doc) -> set[int]:
        """The indices of the units that hold a trigger of every group (the first group found
        over the whole file, so it is the rarest one; the others within those units)."""
        out = {i for line in self.lines(document) for i in document.by_line.get(line, ())}
        for group in self.groups[1:]:
            if not out:
                break
            out = {i for i in out if _holds(document.units[i].text.lower(), group)}
        return out

    def matches(self, document: Doc, only: set[int] | None = None
                ) -> Iterator[tuple[int, Unit, re.Match[str]]]:
        """(index, unit, match) of each unit of ``document`` (of ``only``, when given) the
        pattern matches, in order."""
        hits = self.candidates(document)
        for i in sorted(hits if only is None else hits & only):
            unit = document.units[i]
            if found := self.rx.search(unit.text):
                yield i, unit, found

    def search_text(self, text: str) -> re.Match[str] | None:
        low = text.lower()
        if not all(any(t in low for t in group) for group in self.groups):
            return None
        return self.rx.search(text)


def _holds(low: str, group: tuple[str, ...]) -> bool:
    return any(t in low for t in group)


def gated(pattern: str, triggers: str, flags: int = re.IGNORECASE) -> Gated:
    """``pattern`` compiled behind ``triggers``: groups parted by `` & ``, each group's words
    by ``|``."""
    return Gated(re.compile(pattern, flags),
                 tuple(tuple(group.split("|")) for group in triggers.split(" & ")))


def units(text: str, *, code: bool = False) -> Iterator[Unit]:
    """The units of ``text`` (a skill file, or any bundled file; ``code``: every line is code,
    as in a script)."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if code:
        for number, line in enumerate(lines, 1):
            if line.strip() and not _COMMENT.match(line):
                yield Unit(line, number, True)
        return
    in_code, warned = False, False
    paragraph: list[str] = []
    start = 0
    for number, line in enumerate(lines, 1):
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
            last = start + sum(1 for o in offsets[1:] if o < end)
            yield Unit(sentence, line, False, warned, last)
        if match:
            begin = match.end()


def negated(unit: Unit, at: int) -> bool:
    """Whether what stands at offset ``at`` of ``unit`` is warned against: a negation,
    warning or user-set condition before it in the same clause (a colon or semicolon ends a
    clause, unless what stands before it is a short warning label: "Never do this:"), or a
    warning heading above."""
    if unit.warned:
        return True
    start = 0
    for boundary in _CLAUSE_END.finditer(unit.text, 0, at):
        label = unit.text[start:boundary.start()]
        if len(label.split()) <= 4 and NEGATION.search(label):
            return True
        start = boundary.end()
    return bool(NEGATION.search(unit.text, start, at))
